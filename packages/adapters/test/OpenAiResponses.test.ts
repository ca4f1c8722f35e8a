import { describe, expect, it } from "@effect/vitest"
import { Fixture } from "@toolgate/testing"
import { Effect } from "effect"

// Builders for Responses events (https://platform.openai.com/docs/api-reference/responses-streaming).
let sequence = 0
const ev = (type: string, fields: object = {}) => ({
  event: type,
  data: { type, sequence_number: sequence++, ...fields }
})
const created = ev("response.created", { response: { id: "resp_1", status: "in_progress", output: [] } })
const addCall = (index: number, id: string, callId: string, name: string, args = "") =>
  ev("response.output_item.added", {
    output_index: index,
    item: { id, type: "function_call", status: "in_progress", arguments: args, call_id: callId, name }
  })
const addItem = (index: number, type: string, id: string) =>
  ev("response.output_item.added", { output_index: index, item: { id, type } })
const argDelta = (index: number, itemId: string, delta: string) =>
  ev("response.function_call_arguments.delta", { output_index: index, item_id: itemId, delta })
const argDone = (index: number, itemId: string, args: string) =>
  ev("response.function_call_arguments.done", { output_index: index, item_id: itemId, arguments: args })
const callDone = (index: number, id: string, callId: string, name: string, args: string) =>
  ev("response.output_item.done", {
    output_index: index,
    item: { id, type: "function_call", status: "completed", arguments: args, call_id: callId, name }
  })
const textDelta = (delta: string) => ev("response.output_text.delta", { output_index: 0, item_id: "msg_1", delta })
const terminal = (type: string, status: string, extra: object = {}) =>
  ev(type, { response: { id: "resp_1", status, ...extra } })
const completed = terminal("response.completed", "completed", {
  usage: { input_tokens: 5, output_tokens: 7, total_tokens: 12, input_tokens_details: { cached_tokens: 2 } }
})

const run = (frames: ReadonlyArray<Fixture.Frame>) => Fixture.runText("openai-responses", Fixture.sse(frames))

const oneCall = [
  addCall(0, "fc_1", "call_1", "create_task"),
  argDelta(0, "fc_1", "{\"title\":"),
  argDelta(0, "fc_1", "\"x\"}"),
  argDone(0, "fc_1", "{\"title\":\"x\"}"),
  callDone(0, "fc_1", "call_1", "create_task", "{\"title\":\"x\"}")
]

describe("OpenAiResponses", () => {
  it.effect("reports call_id, not the item id, and the usage of response.completed", () =>
    Effect.gen(function*() {
      const result = yield* run([created, ...oneCall, completed])
      expect(result.toolCalls).toEqual([{ id: "call_1", name: "create_task", arguments: { title: "x" } }])
      const turn = yield* Fixture.assembleText("openai-responses", Fixture.sse([created, ...oneCall, completed]))
      expect(turn.usage).toEqual({ inputTokens: 5, outputTokens: 7, totalTokens: 12, cachedInputTokens: 2 })
    }))

  it.effect("reads data-only frames exactly like event:-framed ones", () =>
    Effect.gen(function*() {
      for (const fixture of Fixture.load("openai-responses")) {
        const text = new TextDecoder().decode(fixture.bytes).replace(/^event: .*\n/gm, "")
        expect(text).not.toContain("event:")
        const result = yield* Fixture.runText("openai-responses", text)
        expect(Fixture.outcome(result)).toEqual(fixture.expected)
      }
    }))

  it.effect("keys items by output_index: a reasoning item takes an index, calls are ordered by it", () =>
    Effect.gen(function*() {
      const result = yield* run([
        created,
        addItem(0, "reasoning", "rs_1"),
        addCall(2, "fc_2", "call_2", "g"),
        addCall(1, "fc_1", "call_1", "f"),
        argDelta(2, "fc_2", "{\"b\":"),
        argDelta(1, "fc_1", "{\"a\":1}"),
        argDelta(2, "fc_2", "2}"),
        completed
      ])
      expect(result.toolCalls).toEqual([
        { id: "call_1", name: "f", arguments: { a: 1 } },
        { id: "call_2", name: "g", arguments: { b: 2 } }
      ])
    }))

  it.effect("starts a call's arguments with the item's initial arguments", () =>
    Effect.gen(function*() {
      const result = yield* run([
        created,
        addCall(0, "fc_1", "call_1", "f", "{\"a\""),
        argDelta(0, "fc_1", ":1}"),
        completed
      ])
      expect(result.toolCalls).toEqual([{ id: "call_1", name: "f", arguments: { a: 1 } }])
    }))

  it.effect("takes the .done arguments when no delta arrived", () =>
    Effect.gen(function*() {
      const result = yield* run([
        created,
        addCall(0, "fc_1", "call_1", "f"),
        argDone(0, "fc_1", "{\"a\":1}"),
        callDone(0, "fc_1", "call_1", "f", "{\"a\":1}"),
        completed
      ])
      expect(result.toolCalls).toEqual([{ id: "call_1", name: "f", arguments: { a: 1 } }])
    }))

  it.effect("an output_item.done that leaves out call_id and name does not change them", () =>
    Effect.gen(function*() {
      const result = yield* run([
        created,
        addCall(0, "fc_1", "call_1", "f"),
        argDelta(0, "fc_1", "{}"),
        ev("response.output_item.done", {
          output_index: 0,
          item: { id: "fc_1", type: "function_call", arguments: "{}" }
        }),
        completed
      ])
      expect(result.toolCalls).toEqual([{ id: "call_1", name: "f", arguments: {} }])
    }))

  it.effect("accepts an item closed with status incomplete; the response status decides", () =>
    Effect.gen(function*() {
      const result = yield* run([
        created,
        addCall(0, "fc_1", "call_1", "f"),
        argDelta(0, "fc_1", "{\"a\":"),
        ev("response.output_item.done", {
          output_index: 0,
          item: {
            id: "fc_1",
            type: "function_call",
            status: "incomplete",
            arguments: "{\"a\":",
            call_id: "call_1",
            name: "f"
          }
        }),
        terminal("response.incomplete", "incomplete", { incomplete_details: { reason: "max_output_tokens" } })
      ])
      expect([result.error, result.finishReason]).toEqual(["TokenLimitExceeded", "incomplete"])
    }))

  describe("ToolCallProtocolError", () => {
    it.effect.each(
      [
        ["a second item at an output_index", [addCall(0, "fc_1", "call_1", "f"), addCall(0, "fc_2", "call_2", "g")]],
        ["a message item then a call at the same index", [
          addItem(0, "message", "msg_1"),
          addCall(0, "fc_1", "call_1", "f")
        ]],
        ["a delta for an index with no item", [argDelta(4, "fc_1", "{}")]],
        ["a delta for a message item", [addItem(0, "message", "msg_1"), argDelta(0, "msg_1", "{}")]],
        ["a delta whose item_id differs", [addCall(0, "fc_1", "call_1", "f"), argDelta(0, "fc_9", "{}")]],
        ["a .done whose item_id differs", [addCall(0, "fc_1", "call_1", "f"), argDone(0, "fc_9", "{}")]],
        ["an output_item.done whose item id differs", [
          addCall(0, "fc_1", "call_1", "f"),
          callDone(0, "fc_9", "call_1", "f", "")
        ]],
        ["an output_item.done that changes call_id", [
          addCall(0, "fc_1", "call_1", "f"),
          callDone(0, "fc_1", "call_2", "f", "")
        ]],
        ["an output_item.done that changes name", [
          addCall(0, "fc_1", "call_1", "f"),
          callDone(0, "fc_1", "call_1", "g", "")
        ]],
        ["a .done that differs from the deltas", [
          addCall(0, "fc_1", "call_1", "f"),
          argDelta(0, "fc_1", "{}"),
          argDone(0, "fc_1", "{ }")
        ]],
        ["an output_item.done that differs from the deltas", [
          addCall(0, "fc_1", "call_1", "f"),
          argDelta(0, "fc_1", "{}"),
          callDone(0, "fc_1", "call_1", "f", "{\"a\":1}")
        ]]
      ] as const
    )("%s", ([, frames]) =>
      Effect.gen(function*() {
        const result = yield* run([created, ...frames, completed])
        expect(result.error).toBe("ToolCallProtocolError")
        expect(result.released).toBe(false)
      }))

    it.effect.each(
      [
        ["a text delta", textDelta("late")],
        ["an error event", ev("error", { error: { type: "server_error", code: "server_error", message: "boom" } })],
        ["a second lifecycle", created],
        ["a second terminal event", terminal("response.incomplete", "incomplete")],
        ["a payload that is not JSON", { data: "garbage" }],
        ["a call of its own", addCall(1, "fc_2", "call_2", "assign_owner", "{}")]
      ] as const
    )(
      "any event after the terminal one, not read (its text, tool data and finish do not count): %s",
      ([, frame]) =>
        Effect.gen(function*() {
          const result = yield* run([created, textDelta("Hi"), ...oneCall, completed, frame])
          expect([result.error, result.finishReason, result.text, result.released]).toEqual([
            "ToolCallProtocolError",
            "completed",
            "Hi",
            false
          ])
          expect(result.failure?.message).toContain("after the terminal response event")
        })
    )
  })

  describe("finish and errors", () => {
    it.effect("response.failed alone is a ProviderStreamError reporting failed", () =>
      Effect.gen(function*() {
        const result = yield* run([
          created,
          terminal("response.failed", "failed", { error: { code: "server_error", message: "The server hit an error" } })
        ])
        expect([result.error, result.finishReason]).toEqual(["ProviderStreamError", "failed"])
        expect(result.failure).toMatchObject({ code: "server_error", providerMessage: "The server hit an error" })
      }))

    it.effect("an error event with the API reference's top-level shape is a ProviderStreamError", () =>
      Effect.gen(function*() {
        const result = yield* run([
          created,
          ev("error", { code: "rate_limit_exceeded", message: "slow down", param: null })
        ])
        expect(result.failure).toMatchObject({
          _tag: "ProviderStreamError",
          code: "rate_limit_exceeded",
          providerMessage: "slow down"
        })
      }))

    it.effect.each(
      [
        [
          "response.incomplete",
          "incomplete",
          { incomplete_details: { reason: "content_filter" } },
          "UnexpectedFinishReason"
        ],
        [
          "response.incomplete",
          "incomplete",
          { incomplete_details: { reason: "max_output_tokens" } },
          "TokenLimitExceeded"
        ],
        ["response.completed", "completed", {}, null]
      ] as const
    )("%s with status %s gives %s", ([type, status, extra, error]) =>
      Effect.gen(function*() {
        const result = yield* run([created, terminal(type, status, extra)])
        expect([result.error, result.finishReason]).toEqual([error, status])
      }))

    it.effect("a body without a terminal event is IncompleteStream", () =>
      Effect.gen(function*() {
        const result = yield* run([created, ...oneCall])
        expect(result.error).toBe("IncompleteStream")
      }))

    it.effect("other event types change nothing", () =>
      Effect.gen(function*() {
        const result = yield* run([
          created,
          ev("response.in_progress", { response: { status: "in_progress" } }),
          ev("response.reasoning_summary_text.delta", { delta: "thinking" }),
          ev("response.content_part.added", { part: { type: "output_text", text: "" } }),
          ev("response.output_text.annotation.added", { annotation: {} }),
          completed
        ])
        expect(Fixture.outcome(result)).toEqual({
          outcome: "complete",
          finishReason: "completed",
          text: "",
          toolCalls: [],
          error: null
        })
      }))
  })

  describe("MalformedStreamEvent", () => {
    it.effect.each(
      [
        ["not JSON", "{"],
        ["no string type", { type: 3 }],
        ["an output_item.added without item", { type: "response.output_item.added", output_index: 0 }],
        ["an output_item.added with a fractional index", {
          type: "response.output_item.added",
          output_index: 0.5,
          item: { type: "message" }
        }],
        ["a function_call item without a name", {
          type: "response.output_item.added",
          output_index: 0,
          item: { type: "function_call", id: "fc_1", call_id: "call_1" }
        }],
        ["a function_call item with object arguments", {
          type: "response.output_item.added",
          output_index: 0,
          item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "f", arguments: {} }
        }],
        ["a delta that is not a string", {
          type: "response.function_call_arguments.delta",
          output_index: 0,
          item_id: "fc_1",
          delta: 1
        }],
        ["a text delta that is not a string", { type: "response.output_text.delta", delta: null }],
        ["a terminal event without a string status", { type: "response.completed", response: { status: 1 } }]
      ] as const
    )("%s", ([, data]) =>
      Effect.gen(function*() {
        const result = yield* run([created, { data }, completed])
        expect(result.error).toBe("MalformedStreamEvent")
      }))
  })
})
