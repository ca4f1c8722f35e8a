import { describe, expect, it } from "@effect/vitest"
import { Fixture } from "@toolgate/testing"
import { Effect } from "effect"

// Builders for Messages events (https://docs.anthropic.com/en/docs/build-with-claude/streaming).
const start = (id = "msg_1", usage: object = { input_tokens: 10, output_tokens: 1 }) => ({
  event: "message_start",
  data: { type: "message_start", message: { id, type: "message", role: "assistant", content: [], usage } }
})
const textBlock = (index: number, text = "") => ({
  event: "content_block_start",
  data: { type: "content_block_start", index, content_block: { type: "text", text } }
})
const toolBlock = (index: number, id: string, name: string, input: unknown = {}) => ({
  event: "content_block_start",
  data: { type: "content_block_start", index, content_block: { type: "tool_use", id, name, input } }
})
const blockOf = (index: number, type: string, extra: object = {}) => ({
  event: "content_block_start",
  data: { type: "content_block_start", index, content_block: { type, ...extra } }
})
const text = (index: number, t: string) => ({
  event: "content_block_delta",
  data: { type: "content_block_delta", index, delta: { type: "text_delta", text: t } }
})
const json = (index: number, partial: string) => ({
  event: "content_block_delta",
  data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: partial } }
})
const deltaOf = (index: number, delta: object) => ({
  event: "content_block_delta",
  data: { type: "content_block_delta", index, delta }
})
const stop = (index: number) => ({ event: "content_block_stop", data: { type: "content_block_stop", index } })
const messageDelta = (stopReason: string | null, usage: object = { output_tokens: 42 }) => ({
  event: "message_delta",
  data: { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage }
})
const messageStop = { event: "message_stop", data: { type: "message_stop" } }
const ping = { event: "ping", data: { type: "ping" } }

const run = (frames: ReadonlyArray<Fixture.Frame>) => Fixture.runText("anthropic", Fixture.sse(frames))

const oneCall = [
  toolBlock(1, "toolu_a", "create_task"),
  json(1, ""),
  json(1, "{\"title\":"),
  json(1, "\"x\"}"),
  stop(1)
]

describe("Anthropic", () => {
  it.effect("assembles text and a tool call, with merged usage", () =>
    Effect.gen(function*() {
      const result = yield* run([
        start(),
        ping,
        textBlock(0, "Hi"),
        text(0, " there"),
        stop(0),
        ping,
        ...oneCall,
        messageDelta("tool_use"),
        messageStop
      ])
      expect(Fixture.outcome(result)).toEqual({
        outcome: "complete",
        finishReason: "tool_use",
        text: "Hi there",
        toolCalls: [{ id: "toolu_a", name: "create_task", arguments: { title: "x" } }],
        error: null
      })
    }))

  it.effect("reports the merged usage of message_start and message_delta", () =>
    Effect.gen(function*() {
      const turn = yield* Fixture.assembleText(
        "anthropic",
        Fixture.sse([
          start("msg_1", { input_tokens: 10, cache_read_input_tokens: 4 }),
          messageDelta("end_turn"),
          messageStop
        ])
      )
      expect(turn.usage).toEqual({ inputTokens: 10, cachedInputTokens: 4, outputTokens: 42 })
    }))

  describe("message_start", () => {
    it.effect("ignores an identical duplicate before any content", () =>
      Effect.gen(function*() {
        const result = yield* run([start(), start(), ...oneCall, messageDelta("tool_use"), messageStop])
        expect(result.outcome).toBe("complete")
        expect(result.toolCalls).toHaveLength(1)
      }))

    it.effect.each(
      [
        ["another id", [start("msg_1"), start("msg_2")]],
        ["content already started", [start(), textBlock(0), start()]],
        ["after message_stop", [start(), messageDelta("end_turn"), messageStop, start()]]
      ] as const
    )("a second one with %s is a ToolCallProtocolError", ([, frames]) =>
      Effect.gen(function*() {
        const result = yield* run([...frames, messageDelta("end_turn"), messageStop])
        expect(result.error).toBe("ToolCallProtocolError")
        expect(result.toolCalls).toEqual([])
      }))
  })

  describe("content blocks", () => {
    it.effect.each(
      [
        ["a second content_block_start for an index", [toolBlock(1, "toolu_a", "f"), toolBlock(1, "toolu_b", "g")]],
        ["a delta for an index never started", [json(3, "{}")]],
        ["a content_block_stop for an index never started", [stop(3)]],
        ["a delta after the block's stop", [toolBlock(1, "toolu_a", "f"), stop(1), json(1, "{}")]],
        ["an input_json_delta on a text block", [textBlock(0), json(0, "{}")]],
        ["an input_json_delta on a thinking block", [blockOf(0, "thinking", { thinking: "" }), json(0, "{}")]],
        ["a text_delta on a tool_use block", [toolBlock(1, "toolu_a", "f"), text(1, "x")]],
        ["a tool_use block after stop_reason", [messageDelta("tool_use"), toolBlock(1, "toolu_a", "f")]],
        ["tool input after stop_reason", [toolBlock(1, "toolu_a", "f"), messageDelta("tool_use"), json(1, "{}")]],
        ["a tool_use block after message_stop", [messageDelta("end_turn"), messageStop, toolBlock(1, "toolu_a", "f")]]
      ] as const
    )("%s is a ToolCallProtocolError", ([, frames]) =>
      Effect.gen(function*() {
        const result = yield* run([start(), ...frames, messageDelta("tool_use"), messageStop])
        expect(result.error).toBe("ToolCallProtocolError")
        expect(result.released).toBe(false)
      }))

    it.effect("skips thinking and redacted_thinking blocks and ignores server_tool_use", () =>
      Effect.gen(function*() {
        const result = yield* run([
          start(),
          blockOf(0, "thinking", { thinking: "" }),
          deltaOf(0, { type: "thinking_delta", thinking: "let me think" }),
          deltaOf(0, { type: "signature_delta", signature: "sig" }),
          stop(0),
          blockOf(1, "redacted_thinking", { data: "opaque" }),
          stop(1),
          blockOf(2, "server_tool_use", { id: "srvtoolu_1", name: "web_search", input: {} }),
          json(2, "{\"query\":\"kilns\"}"),
          stop(2),
          blockOf(3, "web_search_tool_result", { tool_use_id: "srvtoolu_1", content: [] }),
          stop(3),
          textBlock(4),
          text(4, "Done."),
          stop(4),
          messageDelta("end_turn"),
          messageStop
        ])
        expect(Fixture.outcome(result)).toEqual({
          outcome: "complete",
          finishReason: "end_turn",
          text: "Done.",
          toolCalls: [],
          error: null
        })
      }))

    it.effect("counts the text of a text block's start", () =>
      Effect.gen(function*() {
        const result = yield* run([
          start(),
          textBlock(0, "Pre"),
          text(0, "fix"),
          stop(0),
          messageDelta("end_turn"),
          messageStop
        ])
        expect(result.text).toBe("Prefix")
      }))

    it.effect("takes a non-empty start input when no partial_json arrives, and the deltas when they do", () =>
      Effect.gen(function*() {
        const result = yield* run([
          start(),
          toolBlock(0, "toolu_a", "f", { a: 1 }),
          stop(0),
          toolBlock(1, "toolu_b", "g", { ignored: true }),
          json(1, "{\"b\":2}"),
          stop(1),
          toolBlock(2, "toolu_c", "h", { c: 3 }),
          messageDelta("tool_use"),
          messageStop
        ])
        expect(result.toolCalls).toEqual([
          { id: "toolu_a", name: "f", arguments: { a: 1 } },
          { id: "toolu_b", name: "g", arguments: { b: 2 } },
          { id: "toolu_c", name: "h", arguments: { c: 3 } }
        ])
      }))

    it.effect("lists calls in block index order and keeps interleaved deltas apart", () =>
      Effect.gen(function*() {
        const result = yield* run([
          start(),
          toolBlock(2, "toolu_b", "g"),
          toolBlock(1, "toolu_a", "f"),
          json(2, "{\"y\":"),
          json(1, "{\"x\":"),
          json(1, "1}"),
          json(2, "2}"),
          stop(1),
          stop(2),
          messageDelta("tool_use"),
          messageStop
        ])
        expect(result.toolCalls).toEqual([
          { id: "toolu_a", name: "f", arguments: { x: 1 } },
          { id: "toolu_b", name: "g", arguments: { y: 2 } }
        ])
      }))
  })

  describe("finish", () => {
    it.effect("a message_stop without a stop_reason is UnexpectedFinishReason with a null reason", () =>
      Effect.gen(function*() {
        const result = yield* run([start(), ...oneCall, messageStop])
        expect([result.error, result.finishReason]).toEqual(["UnexpectedFinishReason", null])
      }))

    it.effect("a stop_reason without message_stop is IncompleteStream, reporting the reason", () =>
      Effect.gen(function*() {
        const result = yield* run([start(), ...oneCall, messageDelta("tool_use")])
        expect([result.error, result.finishReason]).toEqual(["IncompleteStream", "tool_use"])
      }))

    it.effect.each(
      [
        ["end_turn", "complete", null],
        ["stop_sequence", "complete", null],
        ["max_tokens", "error", "TokenLimitExceeded"],
        ["pause_turn", "error", "UnexpectedFinishReason"],
        ["refusal", "error", "UnexpectedFinishReason"]
      ] as const
    )("stop_reason %s gives %s", ([reason, outcome, error]) =>
      Effect.gen(function*() {
        const result = yield* run([start(), messageDelta(reason), messageStop])
        expect([result.outcome, result.error, result.finishReason]).toEqual([outcome, error, reason])
      }))

    it.effect("only the first stop_reason counts", () =>
      Effect.gen(function*() {
        const result = yield* run([start(), messageDelta("end_turn"), messageDelta("max_tokens"), messageStop])
        expect([result.outcome, result.finishReason]).toEqual(["complete", "end_turn"])
      }))
  })

  describe("errors and shapes", () => {
    it.effect("an error event is a ProviderStreamError carrying the error type", () =>
      Effect.gen(function*() {
        const result = yield* run([
          start(),
          { event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }
        ])
        expect(result.error).toBe("ProviderStreamError")
        expect(result.failure).toMatchObject({ code: "overloaded_error", providerMessage: "Overloaded" })
      }))

    it.effect("ignores unknown event types", () =>
      Effect.gen(function*() {
        const result = yield* run([
          start(),
          { data: { type: "future_event", x: 1 } },
          messageDelta("end_turn"),
          messageStop
        ])
        expect(result.outcome).toBe("complete")
      }))

    it.effect.each(
      [
        ["not JSON", "{nope"],
        ["not an object", "[1,2]"],
        ["no type", { message: {} }],
        ["message_start without message.id", { type: "message_start", message: {} }],
        ["a block event without an integer index", { type: "content_block_stop", index: "0" }],
        ["a negative index", { type: "content_block_stop", index: -1 }],
        ["content_block_start without content_block", { type: "content_block_start", index: 0 }],
        ["a tool_use block without an id", {
          type: "content_block_start",
          index: 0,
          content_block: { type: "tool_use", name: "f" }
        }],
        ["a text_delta without string text", {
          type: "content_block_delta",
          index: 0,
          delta: { type: "text_delta", text: 3 }
        }],
        ["an input_json_delta without partial_json", {
          type: "content_block_delta",
          index: 0,
          delta: { type: "input_json_delta" }
        }],
        ["a delta that is not an object", { type: "content_block_delta", index: 0, delta: "x" }],
        ["a message_delta without stop_reason", { type: "message_delta", delta: {} }],
        ["a stop_reason that is a number", { type: "message_delta", delta: { stop_reason: 1 } }]
      ] as const
    )("%s is a MalformedStreamEvent", ([, data]) =>
      Effect.gen(function*() {
        const result = yield* run([start(), textBlock(0), { data }, messageDelta("end_turn"), messageStop])
        expect(result.error).toBe("MalformedStreamEvent")
      }))
  })
})
