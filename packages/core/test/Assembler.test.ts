import { assert, describe, expect, it } from "@effect/vitest"
import { Assembler, FinishReason, type StreamEvent } from "@toolgate/core"
import { Random } from "@toolgate/testing"
import { Effect, Equal, Fiber, Result, Schema, Stream } from "effect"

/** OpenAI Chat's reasons under the compatible profile (the table lives in the adapters). */
const chat = FinishReason.makePolicy("openai-chat", { success: ["tool_calls", "stop"], tokenLimit: ["length"] })

const finish = (reason: string): StreamEvent.StreamEvent => ({
  finish: { reason, class: FinishReason.classify(chat, reason), terminal: true }
})

const run = (events: ReadonlyArray<StreamEvent.StreamEvent>, options?: Assembler.Options) =>
  Stream.fromIterable(events).pipe(Assembler.assemble(options), Effect.result)

const failTag = (r: Result.Result<Assembler.AssembledTurn, { readonly _tag: string }>) =>
  Result.isFailure(r) ? r.failure._tag : "complete"

/** Splits a string into 1..n pieces at random UTF-16 positions (surrogate pairs may be split). */
const split = (s: string, rnd: () => number): Array<string> => {
  const out: Array<string> = []
  let i = 0
  while (i < s.length) {
    const n = 1 + Math.floor(rnd() * 12)
    out.push(s.slice(i, i + n))
    i += n
  }
  return out
}

const Args = Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Finite, Schema.Boolean, Schema.Null]))
const Calls = Schema.Array(
  Schema.Struct({ name: Schema.Literals(["create_task", "assign_owner", "lookup"]), args: Args })
)
  .check(Schema.isMinLength(1), Schema.isMaxLength(5))

/** The events of a turn whose calls stream their argument deltas interleaved at random. */
const interleaved = (calls: typeof Calls.Type, seed: number): Array<StreamEvent.StreamEvent> => {
  const rnd = Random.make(seed).next
  const queues = calls.map((call, index) => {
    const pieces = split(JSON.stringify(call.args), rnd)
    return [
      { index, id: `call_${index}`, name: call.name, argumentsDelta: pieces[0] ?? "" },
      ...pieces.slice(1).map((argumentsDelta) => ({ index, argumentsDelta }))
    ]
  })
  const events: Array<StreamEvent.StreamEvent> = [{ text: "Working on it." }]
  while (queues.some((q) => q.length > 0)) {
    const live = queues.filter((q) => q.length > 0)
    events.push({ toolCalls: [live[Math.floor(rnd() * live.length)]!.shift()!] })
  }
  events.push(finish("tool_calls"))
  return events
}

describe("Assembler properties", () => {
  it.effect.prop(
    "any interleaving of parallel calls' deltas (each call in order) gives the same calls",
    { calls: Calls, seed: Schema.Int },
    ({ calls, seed }) =>
      Effect.gen(function*() {
        const turn = yield* Stream.fromIterable(interleaved(calls, seed)).pipe(Assembler.assemble())
        expect(turn.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments, id: c.id }))).toEqual(
          calls.map((c, i) => ({ name: c.name, arguments: JSON.parse(JSON.stringify(c.args)), id: `call_${i}` }))
        )
        expect(turn.text).toBe("Working on it.")
      }),
    { arbitrary: { runs: 200 } }
  )

  it.effect.prop(
    "any released turn is made of the public classes, equal to what their public constructors build",
    { calls: Calls, seed: Schema.Int },
    ({ calls, seed }) =>
      Effect.gen(function*() {
        const events = interleaved(calls, seed)
        const turn = yield* Stream.fromIterable(events).pipe(Assembler.assemble())
        // The machine builds them without effect's schema pass (`Schema.makeClassTrusted`, which
        // the pinned effect has); they must be indistinguishable from checked instances.
        expect(typeof (Schema as unknown as Record<string, unknown>)["makeClassTrusted"]).toBe("function")
        const checked = new Assembler.AssembledTurn({
          text: turn.text,
          finishReason: turn.finishReason,
          usage: turn.usage,
          toolCalls: turn.toolCalls.map((c) =>
            new Assembler.AssembledToolCall({
              index: c.index,
              id: c.id,
              name: c.name,
              argumentsText: c.argumentsText,
              arguments: JSON.parse(c.argumentsText === "" ? "{}" : c.argumentsText)
            })
          )
        })
        expect(turn).toBeInstanceOf(Assembler.AssembledTurn)
        expect(Schema.is(Assembler.AssembledTurn)(turn)).toBe(true)
        for (const call of turn.toolCalls) {
          expect(call).toBeInstanceOf(Assembler.AssembledToolCall)
          expect(Schema.is(Assembler.AssembledToolCall)(call)).toBe(true)
        }
        expect(Equal.equals(turn, checked)).toBe(true)
        expect(turn).toStrictEqual(checked)
        expect(Schema.encodeSync(Assembler.AssembledTurn)(turn)).toStrictEqual(
          Schema.encodeSync(Assembler.AssembledTurn)(checked)
        )
      }),
    { arbitrary: { runs: 100 } }
  )

  it.effect.prop(
    "any prefix that stops before the finish releases no tool call and is IncompleteStream",
    { calls: Calls, seed: Schema.Int, cut: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)) },
    ({ calls, cut, seed }) =>
      Effect.gen(function*() {
        const events = interleaved(calls, seed)
        const prefix = events.slice(0, cut % events.length)
        const result = yield* run(prefix)
        assert.isTrue(Result.isFailure(result))
        expect(failTag(result)).toBe("IncompleteStream")
      })
  )

  it.effect.prop(
    "any sequence of fragments never throws: a turn whose calls are all objects, or a typed error",
    {
      events: Schema.Array(Schema.Struct({
        text: Schema.optional(Schema.String),
        toolCalls: Schema.optional(Schema.Array(Schema.Struct({
          index: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 3 }))),
          id: Schema.optional(Schema.Literals(["a", "b", ""])),
          name: Schema.optional(Schema.Literals(["f", "g", ""])),
          type: Schema.optional(Schema.Literals(["function", "other"])),
          argumentsDelta: Schema.optional(Schema.Literals(["{", "}", "\"k\":", "1", ",", "{}", "[]", " ", "\"v\""]))
        }))),
        finish: Schema.optional(Schema.Struct({
          reason: Schema.NullOr(Schema.Literals(["tool_calls", "stop", "length", "content_filter", ""])),
          class: Schema.Literals(["success", "token_limit", "unexpected"]),
          terminal: Schema.Boolean
        }))
      }))
    },
    ({ events }) =>
      Effect.gen(function*() {
        const result = yield* run(events)
        if (Result.isSuccess(result)) {
          for (const call of result.success.toolCalls) {
            expect(typeof call.arguments === "object" && call.arguments !== null && !Array.isArray(call.arguments))
              .toBe(true)
          }
        } else {
          expect([
            "IncompleteStream",
            "TokenLimitExceeded",
            "UnexpectedFinishReason",
            "MalformedToolArguments",
            "ToolCallProtocolError",
            "MalformedStreamEvent"
          ]).toContain(result.failure._tag)
        }
      })
  )
})

describe("Assembler identity rules (fixtures/README.md §3)", () => {
  const call = (delta: StreamEvent.ToolCallDelta): StreamEvent.StreamEvent => ({ toolCalls: [delta] })

  it.effect("indices are keys: sparse, any start, any order", () =>
    Effect.gen(function*() {
      const turn = yield* Stream.make(
        call({ index: 7, id: "b", name: "g", argumentsDelta: "{}" }),
        call({ index: 3, id: "a", name: "f", argumentsDelta: "{\"x\":1}" }),
        finish("tool_calls")
      ).pipe(Assembler.assemble())
      expect(turn.toolCalls.map((c) => [c.index, c.id])).toEqual([[3, "a"], [7, "b"]])
    }))

  it.effect("a new id at an index whose arguments are one complete value opens the next call (Ollama)", () =>
    Effect.gen(function*() {
      const turn = yield* Stream.make(
        call({ index: 0, id: "a", name: "f", argumentsDelta: "{\"n\":1}" }),
        call({ index: 0, id: "b", name: "f", argumentsDelta: "{\"n\":2}" }),
        finish("tool_calls")
      ).pipe(Assembler.assemble())
      expect(turn.toolCalls.map((c) => [c.id, c.arguments])).toEqual([["a", { n: 1 }], ["b", { n: 2 }]])
    }))

  it.effect("a new id at an index whose arguments are incomplete is a protocol error", () =>
    Effect.gen(function*() {
      const result = yield* run([
        call({ index: 0, id: "a", name: "f", argumentsDelta: "{\"n\":" }),
        call({ index: 0, id: "b", name: "f", argumentsDelta: "1}" }),
        finish("tool_calls")
      ])
      expect(failTag(result)).toBe("ToolCallProtocolError")
    }))

  it.effect("without index: ids decide, and an id-less delta with several calls is ambiguous", () =>
    Effect.gen(function*() {
      const ok = yield* Stream.make(
        call({ id: "a", name: "f", argumentsDelta: "{\"a\":" }),
        call({ id: "a", argumentsDelta: "1}" }),
        call({ id: "b", name: "g" }),
        finish("stop")
      ).pipe(Assembler.assemble())
      expect(ok.toolCalls.map((c) => [c.index, c.id, c.arguments])).toEqual([[0, "a", { a: 1 }], [1, "b", {}]])
      const ambiguous = yield* run([
        call({ id: "a", name: "f" }),
        call({ id: "b", name: "g" }),
        call({ argumentsDelta: "{}" }),
        finish("stop")
      ])
      expect(failTag(ambiguous)).toBe("ToolCallProtocolError")
    }))

  it.effect("identical repeats are no-ops; a changed name or type is a protocol error", () =>
    Effect.gen(function*() {
      const ok = yield* Stream.make(
        call({ index: 0, id: "a", type: "function", name: "f", argumentsDelta: "{" }),
        call({ index: 0, id: "a", type: "function", name: "f", argumentsDelta: "}" }),
        finish("tool_calls")
      ).pipe(Assembler.assemble())
      expect(ok.toolCalls[0]!.arguments).toEqual({})
      expect(failTag(yield* run([call({ index: 0, name: "f" }), call({ index: 0, name: "g" }), finish("stop")])))
        .toBe("ToolCallProtocolError")
      expect(
        failTag(
          yield* run([call({ index: 0, name: "f", type: "function" }), call({ index: 0, type: "x" }), finish("stop")])
        )
      ).toBe("ToolCallProtocolError")
    }))

  it.effect("tool data after the finish is a protocol error; usage and text after it are not", () =>
    Effect.gen(function*() {
      const late = yield* run([call({ index: 0, name: "f" }), finish("tool_calls"), call({ index: 0 })])
      expect(failTag(late)).toBe("ToolCallProtocolError")
      const ok = yield* Stream.make(
        call({ index: 0, name: "f" }),
        finish("tool_calls"),
        { text: "late text", usage: { inputTokens: 3, outputTokens: 4 } }
      ).pipe(Assembler.assemble())
      expect(ok.text).toBe("late text")
      expect(ok.usage).toEqual({ inputTokens: 3, outputTokens: 4 })
    }))

  it.effect("the failing event's own text and finish reason still count; later events do not", () =>
    Effect.gen(function*() {
      const result = yield* run([
        { text: "a" },
        { text: "b", toolCalls: [{ index: 4, argumentsDelta: "{}" }], finish: finish("tool_calls").finish },
        { text: "c" },
        finish("stop")
      ])
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        expect(result.failure._tag).toBe("ToolCallProtocolError")
        expect(result.failure.finishReason).toBe("tool_calls")
      }
    }))

  it.effect("the final `arguments` must equal the accumulated deltas, or is taken when none came", () =>
    Effect.gen(function*() {
      const taken = yield* Stream.make(
        call({ index: 0, name: "f" }),
        call({ index: 0, arguments: "{\"k\":1}" }),
        finish("tool_calls")
      ).pipe(Assembler.assemble())
      expect(taken.toolCalls[0]!.arguments).toEqual({ k: 1 })
      const differs = yield* run([
        call({ index: 0, name: "f", argumentsDelta: "{}" }),
        call({ index: 0, arguments: "{\"k\":1}" }),
        finish("tool_calls")
      ])
      expect(failTag(differs)).toBe("ToolCallProtocolError")
    }))
})

describe("Assembler verdict and precedence (fixtures/README.md §2)", () => {
  const open = { toolCalls: [{ index: 0, id: "a", name: "f", argumentsDelta: "{\"x\":" }] }
  it.effect("a token limit outranks malformed arguments", () =>
    Effect.gen(function*() {
      expect(failTag(yield* run([open, finish("length")]))).toBe("TokenLimitExceeded")
      expect(failTag(yield* run([open, finish("content_filter")]))).toBe("UnexpectedFinishReason")
      expect(failTag(yield* run([open, finish("tool_calls")]))).toBe("MalformedToolArguments")
    }))

  it.effect("arguments must be exactly one JSON object; empty means {}; whitespace alone is malformed", () =>
    Effect.gen(function*() {
      const args = (a: string) => run([{ toolCalls: [{ index: 0, name: "f", argumentsDelta: a }] }, finish("stop")])
      expect(failTag(yield* args("[1]"))).toBe("MalformedToolArguments")
      expect(failTag(yield* args("{}{}"))).toBe("MalformedToolArguments")
      expect(failTag(yield* args("{}}"))).toBe("MalformedToolArguments")
      expect(failTag(yield* args("  "))).toBe("MalformedToolArguments")
      expect(failTag(yield* args("\"s\""))).toBe("MalformedToolArguments")
      expect(failTag(yield* args(" {\"a\":1} \n"))).toBe("complete")
      const empty = yield* Stream.make({ toolCalls: [{ index: 0, name: "f" }] }, finish("stop")).pipe(
        Assembler.assemble()
      )
      expect(empty.toolCalls[0]!.arguments).toEqual({})
    }))

  it.effect("arguments nested deeper than the limit are malformed, not a crash later", () =>
    Effect.gen(function*() {
      const nested = (n: number) => `{"a":${"[".repeat(n - 1)}${"]".repeat(n - 1)}}`
      const args = (a: string, options?: Assembler.Options) =>
        run([{ toolCalls: [{ index: 0, name: "f", argumentsDelta: a }] }, finish("stop")], options)
      expect(failTag(yield* args(nested(64)))).toBe("complete")
      expect(failTag(yield* args(nested(65)))).toBe("MalformedToolArguments")
      expect(failTag(yield* args(nested(20_000)))).toBe("MalformedToolArguments")
      expect(failTag(yield* args(nested(100), { maxArgumentsDepth: 100 }))).toBe("complete")
    }))

  it.effect("a malformed call's error carries index, id, tool name and a bounded excerpt", () =>
    Effect.gen(function*() {
      const long = `{"note":"${"x".repeat(5000)}"`
      const result = yield* run([
        { toolCalls: [{ index: 2, id: "call_9", name: "f", argumentsDelta: long }] },
        finish("stop")
      ])
      assert.isTrue(Result.isFailure(result))
      const error = (result as Result.Failure<never, any>).failure
      expect(error._tag).toBe("MalformedToolArguments")
      expect([error.index, error.id, error.toolName, error.finishReason]).toEqual([2, "call_9", "f", "stop"])
      expect(error.excerpt.length).toBeLessThanOrEqual(200)
      expect(error.message).toContain("tool call 2 (f)")
    }))

  it.effect("a finish signal without a reason is UnexpectedFinishReason with finishReason null", () =>
    Effect.gen(function*() {
      const result = yield* run([{ finish: { reason: null, class: "unexpected", terminal: true } }])
      expect(failTag(result)).toBe("UnexpectedFinishReason")
      expect((result as Result.Failure<never, any>).failure.finishReason).toBeNull()
    }))

  it.effect("a reason without the terminal signal is still IncompleteStream, reporting the reason", () =>
    Effect.gen(function*() {
      const result = yield* run([{ finish: { reason: "tool_use", class: "success", terminal: false } }])
      expect(failTag(result)).toBe("IncompleteStream")
      expect((result as Result.Failure<never, any>).failure.finishReason).toBe("tool_use")
    }))
})

describe("Assembler limits and streaming", () => {
  it.effect("ArgumentsTooLarge fails as soon as the limit is crossed, without reading the rest", () =>
    Effect.gen(function*() {
      let pulled = 0
      const endless = Stream.concat(
        Stream.make({ toolCalls: [{ index: 0, id: "a", name: "f", argumentsDelta: "{\"k\":\"" }] }),
        Stream.fromEffectRepeat(Effect.sync(() => {
          pulled++
          return { toolCalls: [{ index: 0, argumentsDelta: "é".repeat(100) }] }
        }))
      )
      const error = yield* endless.pipe(Assembler.assemble({ maxArgumentsBytes: 10_000 }), Effect.flip)
      expect(error._tag).toBe("ArgumentsTooLarge")
      // "é" is 2 UTF-8 bytes: the 10,000-byte limit is crossed in delta 50, not at a character count.
      expect(pulled).toBeGreaterThanOrEqual(50)
      expect(pulled).toBeLessThan(80)
    }))

  it.effect("counts UTF-8 bytes, not characters: a multi-byte call under the limit in bytes passes", () =>
    Effect.gen(function*() {
      const value = "😀".repeat(200) // 400 UTF-16 units, 800 UTF-8 bytes
      const ok = yield* Stream.make(
        { toolCalls: [{ index: 0, name: "f", argumentsDelta: JSON.stringify({ v: value }) }] },
        finish("stop")
      ).pipe(Assembler.assemble({ maxArgumentsBytes: 820 }))
      expect(ok.toolCalls[0]!.arguments).toEqual({ v: value })
      const tooLarge = yield* run([{
        toolCalls: [{ index: 0, name: "f", argumentsDelta: JSON.stringify({ v: value }) }]
      }], {
        maxArgumentsBytes: 800
      })
      expect(failTag(tooLarge)).toBe("ArgumentsTooLarge")
    }))

  it.effect("the streaming form forwards text before the stream ends, and tool calls only at the end", () =>
    Effect.gen(function*() {
      const first = yield* Stream.concat(
        Stream.make<Array<StreamEvent.StreamEvent>>({ text: "Hel" }, { toolCalls: [{ index: 0, name: "f" }] }),
        Stream.never
      ).pipe(Assembler.stream(), Stream.take(1), Stream.runCollect, Effect.timeout("1 second"))
      expect(first).toEqual([{ _tag: "TextDelta", text: "Hel" }])
    }))

  it.effect("the streaming form ends with the turn, or fails after emitting the failing event's text", () =>
    Effect.gen(function*() {
      const outputs = yield* Stream.make<Array<StreamEvent.StreamEvent>>({ text: "a" }, { text: "b" }, finish("stop"))
        .pipe(
          Assembler.stream(),
          Stream.runCollect
        )
      expect(outputs.map((o) => o._tag)).toEqual(["TextDelta", "TextDelta", "TurnCompleted"])
      const seen: Array<string> = []
      const fiber = yield* Stream.make<Array<StreamEvent.StreamEvent>>(
        { text: "x" },
        { text: "y", toolCalls: [{ index: 9, argumentsDelta: "{" }] },
        { text: "never read" }
      ).pipe(
        Assembler.stream(),
        Stream.runForEach((o) => Effect.sync(() => o._tag === "TextDelta" && seen.push(o.text))),
        Effect.flip,
        Effect.forkChild
      )
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("ToolCallProtocolError")
      expect(seen).toEqual(["x", "y"])
    }))
})
