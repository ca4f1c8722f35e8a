/**
 * Inputs that broke the provider decoders: payload values whose `String(…)` throws (a `Die`, and
 * "internal error" from `toolgate inspect`), a chat `error` member losing to a later tool-call
 * problem in the same chunk, a failed chunk not read to its end, errors that quote whole payload
 * values, and Anthropic errors that did not name the tool call they were about.
 */
import { describe, expect, it } from "@effect/vitest"
import { Provider } from "@toolgate/adapters"
import { Fixture } from "@toolgate/testing"
import { Effect } from "effect"

const modes: ReadonlyArray<Provider.Name | "auto"> = [...Provider.names, "auto"]

/** `Fixture.runText` dies on anything but a typed assembly error, so a defect fails the test. */
const run = Fixture.runText

/** Nested deeper than `JSON.stringify` can write, with a `toString` member `String()` chokes on. */
const hostile = `{"toString":1,"nested":${"[".repeat(20_000)}${"]".repeat(20_000)}}`

describe("payload values that make String() throw", () => {
  it.effect("a Responses item_id of {\"toString\": 1} is a ToolCallProtocolError", () =>
    Effect.gen(function*() {
      const body = Fixture.sse([
        {
          data: {
            type: "response.output_item.added",
            output_index: 0,
            item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "create_task", arguments: "" }
          }
        },
        {
          data: {
            type: "response.function_call_arguments.delta",
            output_index: 0,
            item_id: { toString: 1 },
            delta: "{}"
          }
        }
      ])
      for (const mode of ["openai-responses", "auto"] as const) {
        const result = yield* run(mode, body)
        expect(result.error).toBe("ToolCallProtocolError")
        expect(result.failure).toMatchObject({ index: 0, id: "call_1", toolName: "create_task" })
      }
      const done = body.replace("response.function_call_arguments.delta", "response.function_call_arguments.done")
        .replace("\"delta\":\"{}\"", "\"arguments\":\"{}\"")
      expect((yield* run("openai-responses", done)).error).toBe("ToolCallProtocolError")
    }))

  it.effect("a provider error object that cannot be written as JSON is still a ProviderStreamError", () =>
    Effect.gen(function*() {
      const bodies: ReadonlyArray<readonly [Provider.Name | "auto", string]> = [
        ["openai-chat", `data: {"error":${hostile}}\n\n`],
        ["gemini", `data: {"error":${hostile}}\r\n\r\n`],
        ["anthropic", `event: error\ndata: {"type":"error","error":${hostile}}\n\n`],
        ["openai-responses", `data: {"type":"error","sequence_number":0,"error":${hostile}}\n\n`],
        ["openai-responses", `data: {"type":"response.failed","response":{"status":"failed","error":${hostile}}}\n\n`],
        ["gemini", `{"error":${hostile}}`],
        ["auto", `{"error":${hostile}}`]
      ]
      for (const [mode, body] of bodies) {
        const result = yield* run(mode, body)
        expect(result.error, `${mode}: ${body.slice(0, 40)}`).toBe("ProviderStreamError")
      }
    }))
})

describe("openai-chat: reading order within a chunk", () => {
  const open = {
    choices: [{
      index: 0,
      delta: { tool_calls: [{ index: 0, id: "call_1", function: { name: "f", arguments: "{}" } }] }
    }]
  }

  it.effect("the error member comes before tool data after the finish", () =>
    Effect.gen(function*() {
      const body = Fixture.sse([
        { data: open },
        { data: { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] } },
        {
          data: {
            error: { message: "upstream failed", code: "server_error" },
            choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: " " } }] } }]
          }
        }
      ])
      for (const mode of ["openai-chat", "auto"] as const) {
        const result = yield* run(mode, body)
        expect(result.error).toBe("ProviderStreamError")
        expect(result.finishReason).toBe("tool_calls")
      }
    }))

  it.effect("the error member comes before a fragment for a never-started index", () =>
    Effect.gen(function*() {
      const body = Fixture.sse([{
        data: {
          error: { message: "upstream failed" },
          choices: [{
            index: 0,
            delta: { content: "partial", tool_calls: [{ index: 4, function: { arguments: "x" } }] },
            finish_reason: "error"
          }]
        }
      }])
      const result = yield* run("openai-chat", body)
      expect(Fixture.outcome(result)).toEqual({
        outcome: "error",
        finishReason: "error",
        text: "partial",
        toolCalls: [],
        error: "ProviderStreamError"
      })
    }))

  it.effect("a choice that is not an object fails the chunk, which is still read to its end", () =>
    Effect.gen(function*() {
      for (
        const choices of [[{ index: 0, delta: { content: "hi" }, finish_reason: "stop" }, 7], [7, {
          delta: { content: "hi" },
          finish_reason: "stop"
        }]]
      ) {
        const result = yield* run("openai-chat", Fixture.sse([{ data: { choices } }]))
        expect(Fixture.outcome(result)).toEqual({
          outcome: "error",
          finishReason: "stop",
          text: "hi",
          toolCalls: [],
          error: "MalformedStreamEvent"
        })
      }
    }))
})

describe("gemini: a failed chunk is read to its end", () => {
  it.effect("a candidate that is not an object, before candidate 0, does not hide candidate 0's text and finish", () =>
    Effect.gen(function*() {
      const body = Fixture.sse([{
        data: { candidates: ["oops", { content: { parts: [{ text: "hi" }] }, finishReason: "STOP" }] }
      }], "\r\n")
      const result = yield* run("gemini", body)
      expect(Fixture.outcome(result)).toEqual({
        outcome: "error",
        finishReason: "STOP",
        text: "hi",
        toolCalls: [],
        error: "MalformedStreamEvent"
      })
    }))
})

describe("anthropic: protocol errors name the tool call", () => {
  const start = [
    { event: "message_start", data: { type: "message_start", message: { id: "msg_1" } } },
    {
      event: "content_block_start",
      data: {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "toolu_01A", name: "create_task", input: {} }
      }
    },
    {
      event: "content_block_delta",
      data: { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{}" } }
    }
  ]
  const late = {
    event: "content_block_delta",
    data: { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: " " } }
  }

  it.effect("tool input after the block's stop", () =>
    Effect.gen(function*() {
      const result = yield* run(
        "anthropic",
        Fixture.sse([...start, { data: { type: "content_block_stop", index: 1 } }, late])
      )
      expect(result.failure).toMatchObject({
        _tag: "ToolCallProtocolError",
        index: 1,
        id: "toolu_01A",
        toolName: "create_task"
      })
    }))

  it.effect("tool input after the stop_reason", () =>
    Effect.gen(function*() {
      const result = yield* run(
        "anthropic",
        Fixture.sse([...start, { data: { type: "message_delta", delta: { stop_reason: "tool_use" } } }, late])
      )
      expect(result.failure).toMatchObject({
        _tag: "ToolCallProtocolError",
        index: 1,
        id: "toolu_01A",
        toolName: "create_task",
        finishReason: "tool_use"
      })
    }))

  it.effect("a second content_block_start for a tool block's index", () =>
    Effect.gen(function*() {
      const result = yield* run("anthropic", Fixture.sse([...start, start[1]!]))
      expect(result.failure).toMatchObject({ index: 1, id: "toolu_01A", toolName: "create_task" })
    }))
})

describe("errors carry bounded excerpts, never a whole payload", () => {
  const long = "x".repeat(100_000)
  const bounded = (failure: object | undefined) => {
    expect(failure).toBeDefined()
    for (const [key, value] of Object.entries(failure!)) {
      if (typeof value === "string" && key !== "finishReason") expect(value.length, key).toBeLessThanOrEqual(200)
    }
    expect((failure as { message: string }).message.length).toBeLessThanOrEqual(600)
  }
  const cases: ReadonlyArray<readonly [string, Provider.Name, string]> = [
    ["a long error code", "openai-chat", Fixture.sse([{ data: { error: { code: long, message: long } } }])],
    [
      "a long item_id",
      "openai-responses",
      Fixture.sse([
        {
          data: {
            type: "response.output_item.added",
            output_index: 0,
            item: { type: "function_call", id: long, call_id: long, name: long }
          }
        },
        { data: { type: "response.function_call_arguments.delta", output_index: 0, item_id: `${long}y`, delta: "{" } }
      ])
    ],
    [
      "a long second message id",
      "anthropic",
      Fixture.sse([
        { data: { type: "message_start", message: { id: long } } },
        { data: { type: "message_start", message: { id: `${long}y` } } }
      ])
    ],
    [
      "a long block type",
      "anthropic",
      Fixture.sse([
        { data: { type: "content_block_start", index: 0, content_block: { type: long } } },
        { data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "x" } } }
      ])
    ],
    [
      "a long jsonPath",
      "gemini",
      Fixture.sse([
        { data: { candidates: [{ content: { parts: [{ functionCall: { name: "f", willContinue: true } }] } }] } },
        {
          data: {
            candidates: [{
              content: { parts: [{ functionCall: { partialArgs: [{ jsonPath: `$$${long}`, stringValue: "x" }] } }] }
            }]
          }
        }
      ])
    ],
    [
      "a long name while a streamed call is open",
      "gemini",
      Fixture.sse([
        { data: { candidates: [{ content: { parts: [{ functionCall: { name: long, willContinue: true } }] } }] } },
        { data: { candidates: [{ content: { parts: [{ functionCall: { name: `${long}y` } }] } }] } }
      ])
    ]
  ]
  for (const [name, provider, body] of cases) {
    it.effect(name, () =>
      Effect.gen(function*() {
        for (const mode of [provider, "auto"] as const) bounded((yield* run(mode, body)).failure)
      }))
  }

  it.effect("every mode stays typed on the hostile payloads above", () =>
    Effect.gen(function*() {
      for (const mode of modes) {
        const result = yield* run(mode, `data: {"error":${hostile}}\n\n`)
        expect(result.outcome).toBe("error")
      }
    }))
})
