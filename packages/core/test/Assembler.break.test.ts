/**
 * Inputs that broke the assembler: an index past `Number.MAX_SAFE_INTEGER` (a `Die` from the error
 * constructor), an id shared by two calls read by an index-less fragment (silently attached to
 * the newer call), tool data after the finish reported without its call, unbounded payload text in
 * errors, and buffered arguments kept after a failure.
 */
import { describe, expect, it } from "@effect/vitest"
import { Assembler, AssemblyError, FinishReason, type StreamEvent } from "@toolgate/core"
import { Cause, Effect, Exit, Stream } from "effect"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

/** OpenAI Chat's reasons under the compatible profile (the table lives in the adapters). */
const chat = FinishReason.makePolicy("openai-chat", { success: ["tool_calls", "stop"], tokenLimit: ["length"] })

const finish = (reason: string): StreamEvent.StreamEvent => ({
  finish: { reason, class: FinishReason.classify(chat, reason), terminal: true }
})

const calls = (...deltas: ReadonlyArray<StreamEvent.ToolCallDelta>): StreamEvent.StreamEvent => ({ toolCalls: deltas })

/** The typed failure of a run; a defect (or a success) fails the test. */
const failureOf = (events: ReadonlyArray<StreamEvent.StreamEvent>, options?: Assembler.Options) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(Stream.fromIterable(events).pipe(Assembler.assemble(options)))
    if (Exit.isSuccess(exit)) throw new Error("expected a failure, got a completed turn")
    if (Cause.hasDies(exit.cause)) throw new Error(`a defect: ${Cause.pretty(exit.cause)}`)
    const error = Cause.findErrorOption(exit.cause)
    if (error._tag === "None") throw new Error("no typed error")
    return error.value
  })

describe("Assembler: identity edge cases", () => {
  it.effect("an index-less call after index MAX_SAFE_INTEGER fails typed, not with a defect", () =>
    Effect.gen(function*() {
      const max = Number.MAX_SAFE_INTEGER
      for (
        const tail of [
          [finish("tool_calls")],
          [calls({ id: "b", name: "h" }), finish("tool_calls")],
          [calls({ id: "b", argumentsDelta: "{" }), finish("tool_calls")]
        ]
      ) {
        const error = yield* failureOf([
          calls({ index: max, id: "a", name: "f", argumentsDelta: "{}" }),
          calls({ id: "b", name: "g", argumentsDelta: "{}" }),
          ...tail
        ])
        expect(error._tag).toBe("ToolCallProtocolError")
      }
    }))

  it.effect("a call at index MAX_SAFE_INTEGER itself is fine", () =>
    Effect.gen(function*() {
      const turn = yield* Stream.fromIterable([
        calls({ index: Number.MAX_SAFE_INTEGER, id: "a", name: "f", argumentsDelta: "{}" }),
        finish("tool_calls")
      ]).pipe(Assembler.assemble())
      expect(turn.toolCalls.map((c) => c.index)).toEqual([Number.MAX_SAFE_INTEGER])
    }))

  it.effect("an index-less fragment naming an id two calls share is ambiguous, not attached to one of them", () =>
    Effect.gen(function*() {
      const error = yield* failureOf([
        calls({ index: 0, id: "a", name: "f", argumentsDelta: "{" }),
        calls({ index: 1, id: "a", name: "g", argumentsDelta: "{}" }),
        calls({ id: "a", argumentsDelta: "}" }),
        finish("tool_calls")
      ])
      expect(error._tag).toBe("ToolCallProtocolError")
      expect(error.message).toContain("several calls share")
    }))

  it.effect("an id given to a call later still makes a shared id ambiguous", () =>
    Effect.gen(function*() {
      const error = yield* failureOf([
        calls({ index: 0, id: "a", name: "f", argumentsDelta: "{" }),
        calls({ index: 1, name: "g", argumentsDelta: "{}" }),
        calls({ index: 1, id: "a" }),
        calls({ id: "a", argumentsDelta: "}" }),
        finish("tool_calls")
      ])
      expect(error._tag).toBe("ToolCallProtocolError")
    }))

  it.effect("ids shared across indices are still released when every fragment has its index", () =>
    Effect.gen(function*() {
      const turn = yield* Stream.fromIterable([
        calls({ index: 0, id: "a", name: "f", argumentsDelta: "{}" }),
        calls({ index: 1, id: "a", name: "g", argumentsDelta: "{}" }),
        finish("tool_calls")
      ]).pipe(Assembler.assemble())
      expect(turn.toolCalls.map((c) => [c.index, c.id, c.name])).toEqual([[0, "a", "f"], [1, "a", "g"]])
    }))
})

describe("Assembler: tool data after the finish", () => {
  it.effect("an id-less, index-less fragment after the finish names the call it continues", () =>
    Effect.gen(function*() {
      const error = yield* failureOf([
        calls({ index: 3, id: "call_1", name: "create_task", argumentsDelta: "{}" }),
        finish("tool_calls"),
        calls({ argumentsDelta: " " })
      ])
      expect(error).toMatchObject({
        _tag: "ToolCallProtocolError",
        index: 3,
        id: "call_1",
        toolName: "create_task",
        finishReason: "tool_calls"
      })
    }))

  it.effect("an indexed fragment after the finish names its call", () =>
    Effect.gen(function*() {
      const error = yield* failureOf([
        calls({ index: 0, id: "call_1", name: "create_task", argumentsDelta: "{}" }),
        finish("stop"),
        calls({ index: 0, argumentsDelta: " " })
      ])
      expect(error).toMatchObject({ index: 0, id: "call_1", toolName: "create_task" })
    }))

  it.effect("an unusable index after the finish is a MalformedStreamEvent, not a defect", () =>
    Effect.gen(function*() {
      for (const index of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN]) {
        const error = yield* failureOf([
          calls({ index: 0, id: "call_1", name: "f", argumentsDelta: "{}" }),
          finish("tool_calls"),
          calls({ index, argumentsDelta: "x" })
        ])
        expect(error._tag).toBe("MalformedStreamEvent")
      }
    }))
})

describe("Assembler: errors carry bounded excerpts, never a whole payload", () => {
  const long = (c: string) => c.repeat(50_000)
  const bounded = (error: object) => {
    for (const [key, value] of Object.entries(error)) {
      if (typeof value === "string" && key !== "finishReason") expect(value.length, key).toBeLessThanOrEqual(200)
    }
    expect((error as { message: string }).message.length).toBeLessThanOrEqual(600)
  }

  it.effect("a second id on an incomplete call", () =>
    Effect.gen(function*() {
      bounded(
        yield* failureOf([
          calls({ index: 0, id: long("a"), name: long("n"), argumentsDelta: "{" }),
          calls({ index: 0, id: long("b") })
        ])
      )
    }))

  it.effect("a changed name or type", () =>
    Effect.gen(function*() {
      bounded(yield* failureOf([calls({ index: 0, id: "a", name: "f" }), calls({ index: 0, name: long("g") })]))
      bounded(
        yield* failureOf([
          calls({ index: 0, id: "a", name: "f", type: long("t") }),
          calls({ index: 0, type: long("u") })
        ])
      )
    }))

  it.effect("malformed arguments, too-large arguments and a long finish reason", () =>
    Effect.gen(function*() {
      bounded(
        yield* failureOf([calls({ index: 0, id: long("i"), name: long("n"), argumentsDelta: "{" }), finish("stop")])
      )
      bounded(
        yield* failureOf([calls({ index: 0, id: long("i"), name: long("n"), argumentsDelta: long("x").repeat(30) })])
      )
      const unexpected = yield* failureOf([finish(long("z"))])
      expect(unexpected.finishReason).toBe(long("z"))
      expect(unexpected.message.length).toBeLessThanOrEqual(300)
      const limit = yield* failureOf([{
        finish: { reason: long("z"), class: "token_limit", terminal: true }
      }])
      expect(limit._tag).toBe("TokenLimitExceeded")
      expect(limit.message.length).toBeLessThanOrEqual(300)
    }))
})

describe("Assembler: arguments built outside the text (argumentsBytes)", () => {
  it.effect("a size report past the limit fails at once with ArgumentsTooLarge; one within it adds nothing", () =>
    Effect.gen(function*() {
      const options = { maxArgumentsBytes: 1024 }
      const error = yield* failureOf([
        calls({ index: 2, id: "a", name: "f" }),
        calls({ index: 2, argumentsBytes: 1024 }),
        calls({ index: 2, argumentsBytes: 1025 }),
        calls({ index: 2, argumentsDelta: "{}" }),
        finish("stop")
      ], options)
      expect(error).toMatchObject({ _tag: "ArgumentsTooLarge", index: 2, id: "a", toolName: "f", maxBytes: 1024 })
      const turn = yield* Stream.fromIterable([
        calls({ index: 2, id: "a", name: "f", argumentsBytes: 1024 }),
        calls({ index: 2, argumentsDelta: "{}" }),
        finish("stop")
      ]).pipe(Assembler.assemble(options))
      expect(turn.toolCalls.map((c) => c.argumentsText)).toEqual(["{}"])
    }))
})

describe("Assembler.make: a failed machine holds no buffered arguments", () => {
  it("drops the calls' arguments at the failure", () => {
    setFlagsFromString("--expose-gc")
    const gc = runInNewContext("gc") as () => void
    const heap = () => {
      gc()
      gc()
      return process.memoryUsage().heapUsed
    }
    const machine = Assembler.make({ maxArgumentsBytes: 1024 * 1024 * 1024 })
    const before = heap()
    const size = 64 * 1024 * 1024
    // A flat string (`repeat` alone builds a rope of shared pieces), built and pushed in a frame
    // of its own so that only the machine keeps it.
    const feed = () => {
      machine.push(calls({ index: 0, id: "a", name: "f", argumentsDelta: JSON.parse(`"${"x".repeat(size)}"`) }))
    }
    feed()
    const held = heap()
    machine.push({
      failure: new AssemblyError.ProviderStreamError({ finishReason: null, code: null, providerMessage: "x" })
    })
    const after = heap()
    expect(held - before).toBeGreaterThan(size / 2)
    expect(after - before).toBeLessThan(size / 4)
    expect(machine.failure?._tag).toBe("ProviderStreamError")
  })
})
