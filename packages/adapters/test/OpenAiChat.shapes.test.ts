/**
 * OpenAI Chat chunk shapes (fixtures/README.md §3): every malformed shape is a
 * `MalformedStreamEvent` with a bounded excerpt, the reading order decides which problem of a
 * chunk is reported, and SSE framing details (no space after `data:`, CRLF, comments, `[DONE]`)
 * change nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { OpenAiChat } from "@toolgate/adapters"
import { Assembler } from "@toolgate/core"
import { Effect, Schema, Stream } from "effect"

const encoder = new TextEncoder()
const body = (...chunks: Array<unknown>) =>
  chunks.map((c) => `data: ${typeof c === "string" ? c : JSON.stringify(c)}\n\n`).join("")

const assemble = (text: string, options?: OpenAiChat.Options) =>
  Stream.make(encoder.encode(text)).pipe(OpenAiChat.decode(options), Assembler.assemble(), Effect.flip, Effect.flip)

const outcome = (text: string, options?: OpenAiChat.Options) =>
  Stream.make(encoder.encode(text)).pipe(
    OpenAiChat.decode(options),
    Assembler.assemble(),
    Effect.match({
      onFailure: (e) => ({
        tag: e._tag as string,
        finishReason: "finishReason" in e ? e.finishReason : null,
        error: e
      }),
      onSuccess: (turn) => ({ tag: "complete", finishReason: turn.finishReason, turn })
    })
  )

const chunk = (delta: unknown, finish_reason: unknown = null, extra: object = {}) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta, finish_reason }],
  ...extra
})
const start = chunk({
  role: "assistant",
  tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }]
})
const done = chunk({}, "tool_calls")

describe("OpenAiChat: malformed shapes are MalformedStreamEvent", () => {
  const cases: Array<[string, unknown]> = [
    ["data that is not JSON", "{nope"],
    ["a JSON value that is not an object", "[1,2]"],
    ["choices that is not an array", { choices: {} }],
    ["a missing choices array", { id: "x" }],
    ["a choice that is not an object", { choices: [1] }],
    ["a delta that is not an object", chunk("text")],
    ["a non-string content", chunk({ content: 42 })],
    ["tool_calls that is not an array", chunk({ tool_calls: { index: 0 } })],
    ["an entry that is not an object", chunk({ tool_calls: ["x"] })],
    ["a function that is not an object", chunk({ tool_calls: [{ index: 0, function: "f" }] })],
    ["a negative index", chunk({ tool_calls: [{ index: -1, function: { name: "f" } }] })],
    ["a fractional index", chunk({ tool_calls: [{ index: 0.5, function: { name: "f" } }] })],
    ["a numeric id", chunk({ tool_calls: [{ index: 0, id: 7, function: { name: "f" } }] })],
    ["object arguments", chunk({ tool_calls: [{ index: 0, function: { name: "f", arguments: { a: 1 } } }] })],
    ["a non-string finish_reason", chunk({}, 3)]
  ]
  it.effect.each(cases)("%s", ([, payload]) =>
    Effect.gen(function*() {
      const result = yield* outcome(body(payload, done, "[DONE]"))
      expect(result.tag).toBe("MalformedStreamEvent")
      const error = (result as { error: { excerpt: string } }).error
      expect(error.excerpt.length).toBeLessThanOrEqual(200)
    }))
})

describe("OpenAiChat: reading order and finish", () => {
  it.effect("an error member is read first; the rest of its chunk still counts (OpenRouter)", () =>
    Effect.gen(function*() {
      const result = yield* outcome(
        body(start, {
          error: { message: "upstream died", code: 502 },
          choices: [{ index: 0, delta: { content: "!" }, finish_reason: "error" }]
        })
      )
      expect(result).toMatchObject({ tag: "ProviderStreamError", finishReason: "error" })
      expect((result as any).error.code).toBe("502")
      expect((result as any).error.providerMessage).toBe("upstream died")
    }))

  it.effect("a malformed entry after a protocol error in the same chunk: the protocol error wins", () =>
    Effect.gen(function*() {
      const result = yield* outcome(
        body(
          start,
          chunk({ tool_calls: [{ index: 5, function: { arguments: "{" } }, { index: 0, function: { arguments: 1 } }] }),
          done
        )
      )
      expect(result.tag).toBe("ToolCallProtocolError")
    }))

  it.effect("a finish chunk's reason counts even when its tool_calls fail", () =>
    Effect.gen(function*() {
      const result = yield* outcome(
        body(start, chunk({ tool_calls: [{ index: 3, function: { arguments: "{}" } }] }, "tool_calls"))
      )
      expect(result).toMatchObject({ tag: "ToolCallProtocolError", finishReason: "tool_calls" })
    }))

  it.effect("[DONE] is not a finish: a stream with only [DONE] is IncompleteStream", () =>
    Effect.gen(function*() {
      const result = yield* outcome(
        body(start, chunk({ tool_calls: [{ index: 0, function: { arguments: "{}" } }] }), "[DONE]")
      )
      expect(result).toMatchObject({ tag: "IncompleteStream", finishReason: null })
    }))

  it.effect("an empty-string finish_reason is absent; only the first reason counts", () =>
    Effect.gen(function*() {
      const result = yield* outcome(body(start, chunk({}, ""), chunk({}, "stop"), chunk({}, "length")))
      expect(result).toMatchObject({ tag: "complete", finishReason: "stop" })
    }))

  it.effect("choices other than the chosen one are ignored; `choice` picks another", () =>
    Effect.gen(function*() {
      const two = body(
        { choices: [{ index: 1, delta: { content: "one" } }, { index: 0, delta: { content: "zero" } }] },
        { choices: [{ index: 0, delta: {}, finish_reason: "stop" }, { index: 1, delta: {}, finish_reason: "length" }] }
      )
      expect((yield* assemble(two)).text).toBe("zero")
      expect((yield* outcome(two, { choice: 1 })).tag).toBe("TokenLimitExceeded")
    }))

  it.effect("usage from the trailing choices:[] chunk is reported", () =>
    Effect.gen(function*() {
      const turn = yield* assemble(
        body(start, done, {
          choices: [],
          usage: {
            prompt_tokens: 10,
            completion_tokens: 5,
            total_tokens: 15,
            prompt_tokens_details: { cached_tokens: 2 }
          }
        })
      )
      expect(turn.usage).toEqual({ inputTokens: 10, outputTokens: 5, totalTokens: 15, cachedInputTokens: 2 })
    }))
})

describe("OpenAiChat: SSE framing", () => {
  it.effect("data: without a space, CRLF and CR line ends, comments and unknown fields change nothing", () =>
    Effect.gen(function*() {
      const canonical = yield* assemble(
        body(start, chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"a\":1}" } }] }), done)
      )
      const variant = [
        ": OPENROUTER PROCESSING\r\n\r\n",
        `data:${JSON.stringify(start)}\r\n\r\n`,
        `id: 7\nretry: 10\nevent: message\n: keep-alive\ndata: ${
          JSON.stringify(chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"a\":1}" } }] }))
        }\r\r`,
        `data: ${JSON.stringify(done)}\n\n`,
        "data: [DONE]\n\n"
      ].join("")
      expect(yield* assemble(variant)).toEqual(canonical)
    }))

  it.effect("multi-line data is joined with a newline before parsing", () =>
    Effect.gen(function*() {
      const json = JSON.stringify(start, null, 1).split("\n").map((l) => `data: ${l}`).join("\n")
      const turn = yield* assemble(`${json}\n\n${body(done)}`)
      expect(turn.toolCalls[0]!.name).toBe("f")
    }))

  it.effect("an event cut off before its blank line is never dispatched", () =>
    Effect.gen(function*() {
      const result = yield* outcome(`${body(start)}data: ${JSON.stringify(done)}\n`)
      expect(result).toMatchObject({ tag: "IncompleteStream", finishReason: null })
    }))
})

describe("OpenAiChat.ChatCompletionChunk schema", () => {
  it("decodes every chunk of a real capture", async () => {
    const { readFileSync } = await import("node:fs")
    const text = readFileSync(
      new URL("../../../test/fixtures/openai-chat/openai-chat__parallel-interleaved.sse", import.meta.url),
      "utf8"
    )
    const payloads = text.split("\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)))
    expect(payloads.length).toBeGreaterThan(5)
    for (const p of payloads) Schema.decodeUnknownSync(OpenAiChat.ChatCompletionChunk)(p)
  })
})
