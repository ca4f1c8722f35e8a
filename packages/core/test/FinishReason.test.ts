/**
 * The finish mechanism core keeps: classes, policies built from tables, and a success that does
 * not release tool calls (`success_no_calls`), which the adapters' strict finish profile uses for
 * OpenAI Chat `stop` and Anthropic `end_turn` / `stop_sequence`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Assembler, AssemblyError, FinishReason, type StreamEvent } from "@toolgate/core"
import { Arbitrary, Effect, Result, Schema, Stream } from "effect"

const policy = FinishReason.makePolicy("test", {
  success: ["tool_calls"],
  successWithoutCalls: ["stop"],
  tokenLimit: ["length"]
})

const finish = (reason: string, terminal = true): StreamEvent.StreamEvent => ({
  finish: { reason, class: FinishReason.classify(policy, reason), terminal }
})
const call = (index: number, argumentsDelta = "{}"): StreamEvent.StreamEvent => ({
  toolCalls: [{ index, id: `call_${index}`, name: "f", argumentsDelta }]
})

const run = (events: ReadonlyArray<StreamEvent.StreamEvent>) =>
  Stream.fromIterable(events).pipe(Assembler.assemble(), Effect.result)

describe("FinishReason", () => {
  it("classifies by the policy's tables; null and unknown reasons are unexpected", () => {
    expect(["tool_calls", "stop", "length", "content_filter"].map((r) => FinishReason.classify(policy, r))).toEqual([
      "success",
      "success_no_calls",
      "token_limit",
      "unexpected"
    ])
    expect(FinishReason.classify(policy, null)).toBe("unexpected")
    expect(FinishReason.makePolicy("p", { success: ["a"], tokenLimit: [] }).successWithoutCalls.size).toBe(0)
  })

  it.effect("a success_no_calls finish without tool calls completes the turn", () =>
    Effect.gen(function*() {
      const result = yield* run([{ text: "Done." }, finish("stop")])
      expect(Result.isSuccess(result) && [result.success.text, result.success.finishReason]).toEqual(["Done.", "stop"])
    }))

  it.effect("a success_no_calls finish with tool calls is UnexpectedFinishReason and releases nothing", () =>
    Effect.gen(function*() {
      const result = yield* run([call(0), call(1), finish("stop")])
      expect(Result.isFailure(result)).toBe(true)
      const error = (result as Result.Failure<never, AssemblyError.AssemblyError>).failure
      expect(error).toBeInstanceOf(AssemblyError.UnexpectedFinishReason)
      expect(error).toMatchObject({ finishReason: "stop", finishClass: "success_no_calls", pendingToolCalls: 2 })
      expect(error.message).toBe(
        "the stream finished with \"stop\", which ends a turn without tool calls, but 2 tool call(s) arrived; none released"
      )
    }))

  it.effect("it ranks as a finish class: above malformed arguments, below a stream failure", () =>
    Effect.gen(function*() {
      const malformed = yield* run([call(0, "{"), finish("stop")])
      expect(Result.isFailure(malformed) && malformed.failure._tag).toBe("UnexpectedFinishReason")
      const protocol = yield* run([call(0), finish("stop"), call(1)])
      expect(Result.isFailure(protocol) && protocol.failure._tag).toBe("ToolCallProtocolError")
    }))

  it.effect("a plain unexpected finish reports its class and the calls it withheld", () =>
    Effect.gen(function*() {
      const result = yield* run([call(0), finish("content_filter")])
      expect(Result.isFailure(result) && result.failure).toMatchObject({
        _tag: "UnexpectedFinishReason",
        finishClass: "unexpected",
        pendingToolCalls: 1
      })
    }))

  it.effect("the class of the first reason counts, also when the terminal signal comes later without one", () =>
    Effect.gen(function*() {
      const end: StreamEvent.StreamEvent = { finish: { reason: null, class: "unexpected", terminal: true } }
      const withCalls = yield* run([call(0), finish("stop", false), end])
      expect(Result.isFailure(withCalls) && withCalls.failure).toMatchObject({ finishClass: "success_no_calls" })
      const textOnly = yield* run([{ text: "ok" }, finish("stop", false), end])
      expect(Result.isSuccess(textOnly)).toBe(true)
    }))

  it.effect.prop(
    "with any number of calls, success releases them all, success_no_calls releases them only when there are none",
    { calls: Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 5 }))) },
    ({ calls }) =>
      Effect.gen(function*() {
        const events = Array.from({ length: calls }, (_, i) => call(i))
        const success = yield* run([...events, finish("tool_calls")])
        expect(Result.isSuccess(success) && success.success.toolCalls.length).toBe(calls)
        const textOnly = yield* run([...events, finish("stop")])
        expect(Result.isSuccess(textOnly)).toBe(calls === 0)
      })
  )
})
