/**
 * `HttpModelStream` over real HTTP on 127.0.0.1: what it sends (endpoint, key header, version
 * header, the encoded body), the events it yields, its finish profile, the per-read budgets of its
 * configuration against the attempt's remaining time and signal, and an `UnsupportedRequest` that
 * sends nothing.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { HttpModelStream, HttpTransport, OpenAiChatRequest } from "@toolgate/adapters"
import { Assembler, ModelStream, ModelStreamError } from "@toolgate/core"
import { FakeProvider } from "@toolgate/testing"
import { Effect, Exit, Redacted, Result, Schema, Stream } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"

const CreateTask = Tool.make("create_task", {
  parameters: Schema.Struct({ lead_id: Schema.String, title: Schema.String })
})
const toolkit = Toolkit.make(CreateTask)
const scenario: FakeProvider.Scenario = {
  text: "Creating the task.",
  toolCalls: [{ name: "create_task", arguments: { lead_id: "L-7", title: "Call back" } }]
}
const request: ModelStream.ModelRequest = {
  prompt: Prompt.make("New lead L-7."),
  tools: ModelStream.toolsOf(toolkit),
  maxOutputTokens: 256
}
const attempt: ModelStream.Attempt = { number: 1, remainingMs: 30_000 }

/** The model stream of `options` in context, and its turn for `request` (or its typed failure). */
const turnOf = (
  options: HttpModelStream.Options,
  req: ModelStream.ModelRequest = request,
  at: ModelStream.Attempt = attempt
) =>
  Effect.gen(function*() {
    const model = yield* HttpModelStream.make(options)
    return yield* model.stream(req, at).pipe(Assembler.assemble(), Effect.exit)
  }).pipe(Effect.provide(HttpTransport.layerNode))

describe("HttpModelStream", () => {
  it.live("openai-chat: POSTs the encoded body to /chat/completions with the key as a bearer token", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ plan: { source: FakeProvider.openAiChat(scenario) } })
      const options: HttpModelStream.Options = {
        provider: "openai-chat",
        baseUrl: `${fake.url}/v1/`,
        apiKey: Redacted.make("sk-test-1234"),
        model: "gpt-test"
      }
      const exit = yield* turnOf(options)
      assert(Exit.isSuccess(exit))
      expect(exit.value.text).toBe(scenario.text)
      expect(exit.value.toolCalls.map((c) => [c.name, c.arguments])).toEqual([
        ["create_task", { lead_id: "L-7", title: "Call back" }]
      ])
      const [record] = (yield* fake.stats).log
      expect(record!.path).toBe("/v1/chat/completions")
      const model = yield* HttpModelStream.make(options).pipe(Effect.provide(HttpTransport.layerNode))
      expect(model.provider).toBe("openai-chat")
    }))

  it.live("sends exactly the encoder's body and the provider's headers", () =>
    Effect.gen(function*() {
      const seen: Array<FakeProvider.Request> = []
      const fake = yield* FakeProvider.make({
        plan: (req) => {
          seen.push(req)
          return { source: FakeProvider.anthropic(scenario) }
        }
      })
      const exit = yield* turnOf({
        provider: "anthropic",
        baseUrl: fake.url,
        path: "/v1/messages?beta=true",
        apiKey: Redacted.make("sk-ant-test-5678"),
        headers: { "anthropic-beta": "tools-2024-04-04" },
        model: "claude-test"
      })
      expect(Exit.isSuccess(exit)).toBe(true)
      const [sent] = seen
      expect(sent!.path).toBe("/v1/messages?beta=true")
      expect(sent!.headers["x-api-key"]).toBe("sk-ant-test-5678")
      expect(sent!.headers["anthropic-version"]).toBe("2023-06-01")
      expect(sent!.headers["anthropic-beta"]).toBe("tools-2024-04-04")
      expect(sent!.headers["content-type"]).toBe("application/json")
      expect(sent!.body).toEqual(
        JSON.parse(JSON.stringify(
          Result.getOrThrow(
            HttpModelStream.providerRequest({ provider: "anthropic", baseUrl: fake.url, model: "claude-test" }, request)
          ).body
        ))
      )
      expect(sent!.body).toMatchObject({ model: "claude-test", max_tokens: 256, stream: true })
    }))

  it("the finish profile: the configured one, else strict for the first-party hosts and compatible elsewhere", () => {
    const profile = (options: Omit<HttpModelStream.Options, "model">, req: ModelStream.ModelRequest = request) =>
      Result.getOrThrow(HttpModelStream.providerRequest({ ...options, model: "m" }, req)).finishProfile
    expect(profile({ provider: "openai-chat", baseUrl: "https://api.openai.com/v1" })).toBe("strict")
    expect(profile({ provider: "anthropic", baseUrl: "https://api.anthropic.com/v1" })).toBe("strict")
    expect(profile({ provider: "openai-chat", baseUrl: "http://localhost:11434/v1" })).toBe("compatible")
    expect(profile({ provider: "openai-chat", baseUrl: "https://api.openai.com/v1", finishProfile: "compatible" }))
      .toBe("compatible")
    // OpenAI ends a turn whose tool_choice names the function with `stop`.
    expect(profile({ provider: "openai-chat", baseUrl: "https://api.openai.com/v1" }, {
      ...request,
      toolChoice: { tool: "create_task" }
    })).toBe("compatible")
    expect(profile({ provider: "anthropic", baseUrl: "https://api.anthropic.com/v1" }, {
      ...request,
      toolChoice: { tool: "create_task" }
    })).toBe("strict")
  })

  it.live("per-read budgets come from the configuration; the total is the attempt's remaining time", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({
        plan: { source: FakeProvider.openAiChat(scenario), fault: { _tag: "Stall", afterBytes: 300 } }
      })
      const base = { provider: "openai-chat", baseUrl: fake.url, model: "m" } as const
      const idle = yield* turnOf({ ...base, budgets: { idleMs: 150 } })
      expect(idle).toEqual(
        Exit.fail(new ModelStreamError.StreamTimeout({ finishReason: null, phase: "idle", budgetMs: 150 }))
      )
      const total = yield* turnOf({ ...base, budgets: { idleMs: 10_000 } }, request, { number: 2, remainingMs: 200 })
      expect(total).toEqual(
        Exit.fail(new ModelStreamError.StreamTimeout({ finishReason: null, phase: "total", budgetMs: 200 }))
      )
      // A configured total caps every attempt.
      const capped = yield* turnOf({ ...base, budgets: { idleMs: 10_000, totalMs: 150 } }, request, {
        number: 1,
        remainingMs: 20_000
      })
      expect(capped).toEqual(
        Exit.fail(new ModelStreamError.StreamTimeout({ finishReason: null, phase: "total", budgetMs: 150 }))
      )
      expect(yield* fake.awaitOpenSockets(0)).toBe(0)
    }))

  it.live("the attempt's signal aborts the stream: StreamAborted", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ plan: { source: FakeProvider.openAiChat(scenario), paceMs: 20 } })
      const controller = new AbortController()
      const model = yield* HttpModelStream.make({ provider: "openai-chat", baseUrl: fake.url, model: "m" })
      const error = yield* model.stream(request, { number: 1, remainingMs: 30_000, signal: controller.signal }).pipe(
        Stream.tap((event) => Effect.sync(() => event.text !== undefined && controller.abort("the user left"))),
        Stream.runDrain,
        Effect.flip
      )
      expect(error).toEqual(new ModelStreamError.StreamAborted({ finishReason: null, reason: "the user left" }))
      expect(yield* fake.awaitOpenSockets(0)).toBe(0)
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("a request the encoder cannot carry fails with UnsupportedRequest and sends nothing", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ plan: { source: FakeProvider.openAiChat(scenario) } })
      const prompt = Prompt.make([{
        role: "user",
        content: [{ type: "file", mediaType: "application/pdf", data: new Uint8Array([1]) }]
      }])
      const exit = yield* turnOf({ provider: "openai-chat", baseUrl: fake.url, model: "m" }, { prompt })
      expect(exit).toEqual(
        Exit.fail(
          new ModelStreamError.UnsupportedRequest({ provider: "openai-chat", reason: "message 0 (user): a file part" })
        )
      )
      expect(Result.isFailure(OpenAiChatRequest.encode({ prompt }, { model: "m" }))).toBe(true)
      expect((yield* fake.stats).requests).toBe(0)
    }))
})
