/**
 * Non-streaming answers through the same gate: every case of `test/nonstreaming/<provider>/`
 * (`NAME.json`, a whole response body as the API sends it, and `NAME.expected.json`, in the
 * streamed corpus' `expected.json` shape) decoded by `NonStreaming.decode` and assembled, whole
 * and in random 1–7 byte reads, equals its expected result. Then what the gate adds beyond the
 * fixtures: the strict finish profile on calls with `stop` / `end_turn`, the arguments size limit,
 * the body size limit, validation against the tools, and the event shapes a whole body becomes.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { ExpectedResult, NonStreaming, type Provider, ToolDefinition, ToolValidator } from "@toolgate/adapters"
import { Assembler, AssemblyError, ToolCall } from "@toolgate/core"
import { Fixture, Random } from "@toolgate/testing"
import { Effect, Exit, Schema, Stream } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("./nonstreaming/", import.meta.url))

interface Case {
  readonly provider: Provider.Name
  readonly name: string
  readonly bytes: Uint8Array
  readonly expected: ExpectedResult.Outcome
}

const load = (provider: Provider.Name): ReadonlyArray<Case> =>
  readdirSync(`${root}${provider}`).filter((file) => file.endsWith(".json") && !file.endsWith(".expected.json"))
    .toSorted().map((file) => {
      const name = file.slice(0, -".json".length)
      const expected = ExpectedResult.decodeSync(
        readFileSync(`${root}${provider}/${name}.expected.json`, "utf8")
      )
      expect(expected.provider).toBe(provider)
      return {
        provider,
        name,
        bytes: new Uint8Array(readFileSync(`${root}${provider}/${file}`)),
        expected: ExpectedResult.outcomeOf(expected)
      }
    })

const providers: ReadonlyArray<Provider.Name> = ["openai-chat", "openai-responses", "anthropic", "gemini"]

const run = (provider: Provider.Name, chunks: ReadonlyArray<Uint8Array>, options?: NonStreaming.Options) =>
  Fixture.runEvents(Stream.fromIterable(chunks).pipe(NonStreaming.decode(provider, options)))

const bodyOf = (provider: Provider.Name, name: string) =>
  new Uint8Array(readFileSync(`${root}${provider}/${provider}__${name}.json`))

describe("the non-streaming fixtures", () => {
  for (const provider of providers) {
    describe(provider, () => {
      const cases = load(provider)
      it("has cases for success, error bodies, the token limit, a content filter and malformed arguments", () => {
        const errors = new Set(cases.map((c) => c.expected.error))
        for (const tag of [null, "ProviderStreamError", "TokenLimitExceeded", "UnexpectedFinishReason"]) {
          expect(errors).toContain(tag)
        }
        expect(cases.length).toBeGreaterThanOrEqual(8)
      })
      for (const c of cases) {
        it.effect(c.name, () =>
          Effect.gen(function*() {
            expect(Fixture.outcome(yield* run(provider, [c.bytes]))).toEqual(c.expected)
          }))
        it.effect(`${c.name} in random 1–7 byte reads`, () =>
          Effect.gen(function*() {
            const sizes = Fixture.readSizes(Random.seedOf(c.name))
            expect(Fixture.outcome(yield* run(provider, Fixture.chunk(c.bytes, sizes)))).toEqual(c.expected)
          }))
      }
    })
  }

  it.effect("calls with stop / end_turn are released under compatible and rejected under strict, as in a stream", () =>
    Effect.gen(function*() {
      for (
        const [provider, name, reason] of [["openai-chat", "calls-with-stop", "stop"], [
          "anthropic",
          "calls-with-end-turn",
          "end_turn"
        ]] as const
      ) {
        const strict = yield* run(provider, [bodyOf(provider, name)], { finishProfile: "strict" })
        expect(Fixture.outcome(strict)).toMatchObject({
          outcome: "error",
          error: "UnexpectedFinishReason",
          finishReason: reason,
          toolCalls: []
        })
        expect(strict.failure).toMatchObject({ finishClass: "success_no_calls" })
        // A text answer with the same reason completes under strict.
        const text = yield* run(provider, [bodyOf(provider, provider === "anthropic" ? "refusal" : "text-only")], {
          finishProfile: "strict"
        })
        expect(text.outcome).toBe(provider === "anthropic" ? "error" : "complete")
      }
    }))
})

describe("limits and validation", () => {
  it.effect("a call's arguments over the size limit: ArgumentsTooLarge, as in a stream", () =>
    Effect.gen(function*() {
      const big = JSON.stringify({ lead_id: "L-1", notes: "x".repeat(Assembler.defaultMaxArgumentsBytes) })
      const body = JSON.stringify({
        object: "chat.completion",
        choices: [{
          index: 0,
          message: {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "call_1", type: "function", function: { name: "create_task", arguments: big } }]
          },
          finish_reason: "tool_calls"
        }]
      })
      const result = yield* run("openai-chat", [Fixture.bytes(body)])
      expect(result.error).toBe("ArgumentsTooLarge")
      expect(result.failure).toBeInstanceOf(AssemblyError.ArgumentsTooLarge)
    }))

  it.effect("a body over maxBodyBytes: MalformedStreamEvent as soon as it crosses, the rest not read", () =>
    Effect.gen(function*() {
      let reads = 0
      const chunks = Stream.fromIterable(Array.from({ length: 100 }, () => Fixture.bytes(" ".repeat(1000)))).pipe(
        Stream.tap(() => Effect.sync(() => reads++))
      )
      const result = yield* Fixture.runEvents(chunks.pipe(NonStreaming.decode("anthropic", { maxBodyBytes: 4096 })))
      expect(result.error).toBe("MalformedStreamEvent")
      expect(result.failure).toMatchObject({ reason: "the response body is larger than 4096 bytes" })
      expect(reads).toBe(5)
    }))

  it.effect("an empty body has no finish: IncompleteStream", () =>
    Effect.gen(function*() {
      for (const provider of providers) {
        expect((yield* run(provider, [])).error).toBe("IncompleteStream")
        expect((yield* run(provider, [Fixture.bytes(" \r\n")])).error).toBe("IncompleteStream")
      }
    }))

  it.effect("the released calls are validated against the tools like streamed ones", () =>
    Effect.gen(function*() {
      const CreateTask = Tool.make("create_task", {
        parameters: Schema.Struct({ lead_id: Schema.String, title: Schema.String })
      })
      const turn = yield* Stream.make(bodyOf("anthropic", "single-tool")).pipe(
        NonStreaming.decode("anthropic"),
        Assembler.assemble()
      )
      const [call] = yield* ToolCall.validate(Toolkit.make(CreateTask))(turn)
      expect(call!.params).toEqual({ lead_id: "L-1042", title: "Call back about pricing" })
      expect(call!.argumentsText).toBe("{\"lead_id\":\"L-1042\",\"title\":\"Call back about pricing\"}")
      const Strict = Tool.make("create_task", { parameters: Schema.Struct({ lead_id: Schema.Number }) })
      const invalid = yield* ToolCall.validate(Toolkit.make(Strict))(turn).pipe(Effect.flip)
      expect(invalid._tag).toBe("ToolArgumentsInvalid")
      // And against JSON Schema tool definitions.
      const definitions = yield* ToolDefinition.parse(JSON.stringify([{
        name: "create_task",
        input_schema: { type: "object", properties: { lead_id: { type: "string" } }, additionalProperties: false }
      }]))
      const validator = yield* ToolValidator.make(definitions)
      const rejected = yield* ToolValidator.validate(validator)(turn).pipe(Effect.flip)
      expect(rejected._tag).toBe("ToolArgumentsInvalid")
    }))
})

describe("NonStreaming.events", () => {
  it("a chat.completion becomes one event: text, every call whole at its position, the finish, usage, end", () => {
    const events = NonStreaming.events(
      "openai-chat",
      new TextDecoder().decode(bodyOf("openai-chat", "text-then-tools"))
    )
    expect(events).toEqual([{
      text: "I'll log a follow-up.",
      toolCalls: [{
        index: 0,
        id: "call_Zr8oP2xM5vN7cQ1tS4yH6gJ3",
        type: "function",
        name: "create_task",
        argumentsDelta: "{\"lead_id\": \"L-1042\", \"title\": \"Follow up\"}"
      }],
      finish: { reason: "tool_calls", class: "success", terminal: true },
      usage: { inputTokens: 182, outputTokens: 41, totalTokens: 223, cachedInputTokens: 0 },
      end: true
    }])
  })

  it("a Gemini array body is one event per chunk; an Anthropic error body is one failure", () => {
    const gemini = NonStreaming.events("gemini", new TextDecoder().decode(bodyOf("gemini", "stream-array")))
    expect(gemini.map((e) => [e.text, e.finish?.reason, e.end])).toEqual([
      ["Creating", undefined, undefined],
      [" the task.", "STOP", true]
    ])
    const [failure] = NonStreaming.events(
      "anthropic",
      new TextDecoder().decode(bodyOf("anthropic", "error-overloaded"))
    )
    expect(failure!.failure).toEqual(
      new AssemblyError.ProviderStreamError({
        finishReason: null,
        code: "overloaded_error",
        providerMessage: "Overloaded"
      })
    )
  })

  it.effect("the decoder fails only with its input's failure; a defect never comes out", () =>
    Effect.gen(function*() {
      const exit = yield* Stream.make(Fixture.bytes("{\"a\":")).pipe(
        Stream.concat(Stream.fail("cut")),
        NonStreaming.decode("openai-chat"),
        Stream.runCollect,
        Effect.exit
      )
      assert(Exit.isFailure(exit))
      expect(exit).toEqual(Exit.fail("cut"))
    }))
})
