/**
 * The bodies the fake provider writes: a generated turn per response (`SseScript`, with fresh ids
 * and splits drawn from the server's `Random`), the provider-style JSON error body of a status, and
 * the cutting of a body into writes.
 *
 * @internal
 */
import type { ErrorStyle, Scenario, Source, ToolCallScenario } from "../FakeProvider.js"
import * as Random from "../Random.js"
import * as SseScript from "../SseScript.js"

/** Word-sized text deltas: one to three tokens (a word with its leading space, or a mark). */
const splitText = (text: string, random: Random.Random): Array<string> => {
  const tokens = text.match(/\s*[\p{L}\p{N}_'’-]+|\s*[^\s\p{L}\p{N}_'’-]|\s+/gu) ?? []
  const out: Array<string> = []
  for (let i = 0; i < tokens.length;) {
    const n = random.int(1, 3)
    out.push(tokens.slice(i, i + n).join(""))
    i += n
  }
  return out
}

const argumentsText = (call: ToolCallScenario) =>
  typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments)

const requestModel = (body: unknown): string | undefined =>
  typeof body === "object" && body !== null && typeof (body as { model?: unknown }).model === "string"
    ? (body as { model: string }).model
    : undefined

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4))

const id = (random: Random.Random, length: number) => random.chars(Random.alphanumeric, length)

/** The scenario's calls with fresh ids and argument deltas, drawn in stream order. */
const calls = (scenario: Scenario, prefix: string, length: number, random: Random.Random) =>
  (scenario.toolCalls ?? []).map((call): SseScript.CallScript => ({
    id: `${prefix}${id(random, length)}`,
    name: call.name,
    pieces: SseScript.pieces(argumentsText(call), random)
  }))

interface Generated {
  readonly frames: ReadonlyArray<string>
  readonly toolCallIds: ReadonlyArray<string>
}

const generateOpenAiChat = (scenario: Scenario, body: unknown, random: Random.Random): Generated => {
  const chatId = `chatcmpl-${id(random, 29)}`
  const systemFingerprint = `fp_${id(random, 10).toLowerCase()}`
  const text = scenario.text ?? ""
  const pieces = splitText(text, random)
  const toolCalls = calls(scenario, "call_", 24, random)
  const options = typeof body === "object" && body !== null
    ? (body as { stream_options?: unknown }).stream_options
    : undefined
  const includeUsage = typeof options === "object" && options !== null &&
    (options as { include_usage?: unknown }).include_usage === true
  const frames: Array<string> = []
  SseScript.openAiChat({
    id: chatId,
    created: Math.floor(Date.now() / 1000),
    model: scenario.model ?? requestModel(body) ?? "gpt-4o-2024-08-06",
    systemFingerprint,
    text: pieces,
    calls: toolCalls,
    finishReason: scenario.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
    usage: includeUsage
      ? {
        promptTokens: tokens(JSON.stringify(body)),
        completionTokens: tokens(text + (scenario.toolCalls ?? []).map(argumentsText).join(""))
      }
      : undefined
  }, (frame) => frames.push(frame))
  return { frames, toolCallIds: toolCalls.map((c) => c.id) }
}

const generateAnthropic = (scenario: Scenario, body: unknown, random: Random.Random): Generated => {
  const messageId = `msg_01${id(random, 22)}`
  const text = scenario.text ?? ""
  const pieces = splitText(text, random)
  const toolCalls = calls(scenario, "toolu_01", 22, random)
  const frames: Array<string> = []
  SseScript.anthropic({
    id: messageId,
    model: scenario.model ?? requestModel(body) ?? "claude-sonnet-4-5-20250929",
    text: pieces,
    calls: toolCalls,
    stopReason: scenario.finishReason ?? (toolCalls.length > 0 ? "tool_use" : "end_turn"),
    inputTokens: tokens(JSON.stringify(body)),
    outputTokens: tokens(text + (scenario.toolCalls ?? []).map(argumentsText).join(""))
  }, (frame) => frames.push(frame))
  return { frames, toolCallIds: toolCalls.map((c) => c.id) }
}

const encoder = new TextEncoder()

/** The body of a response as writes (one per frame), and its tool-call ids. */
export const render = (
  source: Source,
  body: unknown,
  random: Random.Random
): { writes: Array<Uint8Array>; toolCallIds: ReadonlyArray<string> } => {
  switch (source._tag) {
    case "Bytes":
      return { writes: [source.bytes], toolCallIds: [] }
    case "OpenAiChat": {
      const generated = generateOpenAiChat(source.scenario, body, random)
      return { writes: generated.frames.map((f) => encoder.encode(f)), toolCallIds: generated.toolCallIds }
    }
    case "Anthropic": {
      const generated = generateAnthropic(source.scenario, body, random)
      return { writes: generated.frames.map((f) => encoder.encode(f)), toolCallIds: generated.toolCallIds }
    }
  }
}

/**
 * The whole JSON answer of a generated source, as the API answers a request without a stream: an
 * OpenAI `chat.completion` (pretty-printed, as OpenAI prints it) or an Anthropic `message` (one
 * line), with fresh ids, the scenario's text and calls (a string `arguments` is sent as it is in
 * OpenAI's text, and as an `input` that is not an object in Anthropic's, which is how malformed
 * arguments look there), its finish reason and a usage. A `Bytes` source is its bytes.
 */
export const renderJson = (
  source: Source,
  body: unknown,
  random: Random.Random
): { writes: Array<Uint8Array>; toolCallIds: ReadonlyArray<string> } => {
  switch (source._tag) {
    case "Bytes":
      return { writes: [source.bytes], toolCallIds: [] }
    case "OpenAiChat": {
      const scenario = source.scenario
      const text = scenario.text ?? ""
      const toolCalls = (scenario.toolCalls ?? []).map((call) => ({
        id: `call_${id(random, 24)}`,
        type: "function",
        function: { name: call.name, arguments: argumentsText(call) }
      }))
      const completion = {
        id: `chatcmpl-${id(random, 29)}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: scenario.model ?? requestModel(body) ?? "gpt-4o-2024-08-06",
        choices: [{
          index: 0,
          message: {
            role: "assistant",
            content: text === "" ? null : text,
            ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
            refusal: null,
            annotations: []
          },
          logprobs: null,
          finish_reason: scenario.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop")
        }],
        usage: {
          prompt_tokens: tokens(JSON.stringify(body)),
          completion_tokens: tokens(text + (scenario.toolCalls ?? []).map(argumentsText).join("")),
          total_tokens: 0
        },
        system_fingerprint: `fp_${id(random, 10).toLowerCase()}`
      }
      completion.usage.total_tokens = completion.usage.prompt_tokens + completion.usage.completion_tokens
      return {
        writes: [encoder.encode(JSON.stringify(completion, null, 2))],
        toolCallIds: toolCalls.map((c) => c.id)
      }
    }
    case "Anthropic": {
      const scenario = source.scenario
      const text = scenario.text ?? ""
      const toolUses = (scenario.toolCalls ?? []).map((call) => ({
        type: "tool_use",
        id: `toolu_01${id(random, 22)}`,
        name: call.name,
        input: typeof call.arguments === "string" ? parsedOr(call.arguments) : call.arguments
      }))
      const message = {
        id: `msg_01${id(random, 22)}`,
        type: "message",
        role: "assistant",
        model: scenario.model ?? requestModel(body) ?? "claude-sonnet-4-5-20250929",
        content: [...(text === "" ? [] : [{ type: "text", text }]), ...toolUses],
        stop_reason: scenario.finishReason ?? (toolUses.length > 0 ? "tool_use" : "end_turn"),
        stop_sequence: null,
        usage: {
          input_tokens: tokens(JSON.stringify(body)),
          output_tokens: tokens(text + (scenario.toolCalls ?? []).map(argumentsText).join(""))
        }
      }
      return { writes: [encoder.encode(JSON.stringify(message))], toolCallIds: toolUses.map((c) => c.id) }
    }
  }
}

const parsedOr = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * The error body of a request refused because it asked for a stream, in the provider's style:
 * OpenAI's real answer for a model that does not stream (`param: "stream"`,
 * `code: "unsupported_value"`); the same words in Anthropic's and Gemini's error shapes.
 */
export const streamRejectedBody = (style: ErrorStyle): string => {
  const message =
    "Unsupported value: 'stream' does not support true with this model. Only the default (false) value is supported."
  switch (style) {
    case "openai":
      return JSON.stringify({
        error: { message, type: "invalid_request_error", param: "stream", code: "unsupported_value" }
      })
    case "anthropic":
      return JSON.stringify({ type: "error", error: { type: "invalid_request_error", message } })
    case "gemini":
      return JSON.stringify({ error: { code: 400, message, status: "INVALID_ARGUMENT" } })
  }
}

export const styleOf = (source: Source): ErrorStyle =>
  source._tag === "Bytes" ? source.style : source._tag === "Anthropic" ? "anthropic" : "openai"

/** A provider-style JSON error body for a status, as each API documents its errors. */
export const errorBody = (style: ErrorStyle, status: number, random: Random.Random): string => {
  const kind = status === 429
    ? "rate"
    : status === 503 || status === 529
    ? "overloaded"
    : status >= 500
    ? "server"
    : "client"
  switch (style) {
    case "openai": {
      const [message, type, code] = kind === "rate"
        ? ["Rate limit reached for requests per min (RPM). Please try again in 1s.", "requests", "rate_limit_exceeded"]
        : kind === "overloaded"
        ? ["The engine is currently overloaded, please try again later.", "server_error", null]
        : kind === "server"
        ? ["The server had an error while processing your request. Sorry about that!", "server_error", null]
        : [`Request failed with status ${status}.`, "invalid_request_error", null]
      return JSON.stringify({ error: { message, type, param: null, code } })
    }
    case "anthropic": {
      const [type, message] = kind === "rate"
        ? [
          "rate_limit_error",
          "This request would exceed the rate limit for your organization. Please try again later."
        ]
        : kind === "overloaded"
        ? ["overloaded_error", "Overloaded"]
        : kind === "server"
        ? ["api_error", "Internal server error"]
        : ["invalid_request_error", `Request failed with status ${status}.`]
      return JSON.stringify({ type: "error", error: { type, message }, request_id: `req_011${id(random, 21)}` })
    }
    case "gemini": {
      const [message, statusName] = kind === "rate"
        ? ["Resource has been exhausted (e.g. check quota).", "RESOURCE_EXHAUSTED"]
        : kind === "overloaded"
        ? ["The model is overloaded. Please try again later.", "UNAVAILABLE"]
        : kind === "server"
        ? [
          "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
          "INTERNAL"
        ]
        : [`Request failed with status ${status}.`, "INVALID_ARGUMENT"]
      return JSON.stringify({ error: { code: status, message, status: statusName } })
    }
  }
}

/** Re-splits writes into pieces of `chunkBytes` (fixed or drawn from a range). */
export const rechunk = (
  writes: ReadonlyArray<Uint8Array>,
  chunkBytes: number | readonly [number, number],
  random: Random.Random
) => {
  const total = writes.reduce((n, w) => n + w.length, 0)
  const all = new Uint8Array(total)
  let at = 0
  for (const w of writes) {
    all.set(w, at)
    at += w.length
  }
  const out: Array<Uint8Array> = []
  for (let i = 0; i < total;) {
    const size = Math.max(1, typeof chunkBytes === "number" ? chunkBytes : random.int(chunkBytes[0], chunkBytes[1]))
    out.push(all.subarray(i, Math.min(total, i + size)))
    i += size
  }
  return out
}

/** Keeps the first `limit` bytes of the writes. */
export const limitWrites = (writes: ReadonlyArray<Uint8Array>, limit: number) => {
  const out: Array<Uint8Array> = []
  let left = Math.max(0, limit)
  for (const w of writes) {
    if (left === 0) break
    out.push(w.length <= left ? w : w.subarray(0, left))
    left -= Math.min(left, w.length)
  }
  return out
}
