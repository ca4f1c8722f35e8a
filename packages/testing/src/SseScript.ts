/**
 * The SSE script generator shared by the fake provider and the benchmarks: a turn (text deltas,
 * then tool calls with their argument deltas, then the finish) written as the frames of an OpenAI
 * Chat Completions stream or of an Anthropic Messages stream, exactly as each provider frames them
 * (https://platform.openai.com/docs/api-reference/chat-streaming,
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming).
 *
 * A script holds no randomness: its ids and its split of text and arguments are the caller's (drawn
 * from a `Random`), and its calls and their pieces may be lazy iterables, consumed in stream order,
 * so a caller can draw as it goes and generate a body of any size without holding it. Frames are
 * handed to `emit` one at a time (each ends with its blank line).
 *
 * @since 0.1.0
 */
import type { Random } from "./Random.js"

/**
 * One tool call: its id, its name and its arguments text as the deltas to send.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallScript {
  readonly id: string
  readonly name: string
  readonly pieces: Iterable<string>
}

/**
 * An OpenAI Chat Completions turn.
 *
 * - `id`, `created` (seconds), `model`, `systemFingerprint`, `serviceTier`: the chunk envelope
 *   (`service_tier` only when given).
 * - `text`: the content deltas; with none, the role chunk's `content` is `null`.
 * - `finishReason`: the raw `finish_reason` of the finish chunk.
 * - `usage`: when given, a last chunk with `choices: []` and the usage (`completionTokens` default:
 *   the chunks written before it; `cachedTokens`, when given, as `prompt_tokens_details`), and
 *   every earlier chunk carries `"usage": null` when `nullUsage` is set (what OpenAI writes for
 *   `stream_options.include_usage`).
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenAiChatScript {
  readonly id: string
  readonly created: number
  readonly model: string
  readonly systemFingerprint: string
  readonly serviceTier?: string | undefined
  readonly text: ReadonlyArray<string>
  readonly calls: Iterable<CallScript>
  readonly finishReason: string
  readonly usage?: {
    readonly promptTokens: number
    readonly completionTokens?: number | undefined
    readonly cachedTokens?: number | undefined
  } | undefined
  readonly nullUsage?: boolean | undefined
}

/**
 * Writes an OpenAI Chat Completions body: a role chunk, the text deltas, for each call a chunk with
 * its index, id, name and empty arguments then one chunk per argument delta, the finish chunk, the
 * usage chunk (if any) and `data: [DONE]`. Gives the number of frames written (dispatched events).
 *
 * @since 0.1.0
 * @category writers
 */
export const openAiChat = (script: OpenAiChatScript, emit: (frame: string) => void): number => {
  const head = `{"id":${JSON.stringify(script.id)},"object":"chat.completion.chunk","created":${script.created},` +
    `"model":${JSON.stringify(script.model)},` +
    (script.serviceTier === undefined ? "" : `"service_tier":${JSON.stringify(script.serviceTier)},`) +
    `"system_fingerprint":${JSON.stringify(script.systemFingerprint)},"choices":[`
  const tail = script.nullUsage === true ? `],"usage":null}` : "]}"
  let chunks = 0
  const chunk = (delta: unknown, finish: string | null) => {
    chunks++
    emit(
      `data: ${head}{"index":0,"delta":${JSON.stringify(delta)},"logprobs":null,"finish_reason":${
        JSON.stringify(finish)
      }}${tail}\n\n`
    )
  }
  chunk({ role: "assistant", content: script.text.length === 0 ? null : "", refusal: null }, null)
  for (const piece of script.text) chunk({ content: piece }, null)
  let index = 0
  for (const call of script.calls) {
    chunk({
      tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }]
    }, null)
    for (const piece of call.pieces) chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null)
    index++
  }
  chunk({}, script.finishReason)
  let frames = chunks
  const usage = script.usage
  if (usage !== undefined) {
    const completion = usage.completionTokens ?? chunks
    const details = usage.cachedTokens === undefined
      ? ""
      : `,"prompt_tokens_details":{"cached_tokens":${usage.cachedTokens}}`
    emit(
      `data: ${head}],"usage":{"prompt_tokens":${usage.promptTokens},"completion_tokens":${completion},` +
        `"total_tokens":${usage.promptTokens + completion}${details}}}\n\n`
    )
    frames++
  }
  emit("data: [DONE]\n\n")
  return frames + 1
}

/**
 * An Anthropic Messages turn.
 *
 * - `id`, `model`: the message's.
 * - `text`: the text block's deltas; with none, no text block.
 * - `stopReason`: the raw `stop_reason` of `message_delta`.
 * - `inputTokens`: `message_start`'s usage (with `cache_creation_input_tokens` and
 *   `cache_read_input_tokens` of 0 when `cacheTokens` is set); `outputTokens`: `message_delta`'s
 *   (default: the frames written before it).
 *
 * @since 0.1.0
 * @category models
 */
export interface AnthropicScript {
  readonly id: string
  readonly model: string
  readonly text: ReadonlyArray<string>
  readonly calls: Iterable<CallScript>
  readonly stopReason: string
  readonly inputTokens: number
  readonly cacheTokens?: boolean | undefined
  readonly outputTokens?: number | undefined
}

/**
 * Writes an Anthropic Messages body: `message_start`, a text block (its start, a `ping`, the
 * deltas, its stop), one `tool_use` block per call (its `input_json_delta`s starting with an empty
 * one, as the API sends), `message_delta` with the stop reason and usage, `message_stop`. Each
 * frame's `event:` line names its payload's `type`. Gives the number of frames written.
 *
 * @since 0.1.0
 * @category writers
 */
export const anthropic = (script: AnthropicScript, emit: (frame: string) => void): number => {
  let frames = 0
  const event = (type: string, data: object) => {
    frames++
    emit(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  }
  event("message_start", {
    message: {
      id: script.id,
      type: "message",
      role: "assistant",
      model: script.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: script.cacheTokens === true
        ? {
          input_tokens: script.inputTokens,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 1
        }
        : { input_tokens: script.inputTokens, output_tokens: 1 }
    }
  })
  let index = 0
  if (script.text.length > 0) {
    event("content_block_start", { index, content_block: { type: "text", text: "" } })
    event("ping", {})
    for (const piece of script.text) {
      event("content_block_delta", { index, delta: { type: "text_delta", text: piece } })
    }
    event("content_block_stop", { index })
    index++
  }
  for (const call of script.calls) {
    event("content_block_start", {
      index,
      content_block: { type: "tool_use", id: call.id, name: call.name, input: {} }
    })
    event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } })
    for (const piece of call.pieces) {
      event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } })
    }
    event("content_block_stop", { index })
    index++
  }
  event("message_delta", {
    delta: { stop_reason: script.stopReason, stop_sequence: null },
    usage: { output_tokens: script.outputTokens ?? frames }
  })
  event("message_stop", {})
  return frames
}

/**
 * Cuts a text into deltas of 3 to 12 UTF-16 code units, never inside a surrogate pair: how
 * providers split streamed arguments.
 *
 * @since 0.1.0
 * @category splitting
 */
export const pieces = (text: string, random: Random): Array<string> => {
  const out: Array<string> = []
  let at = 0
  while (at < text.length) {
    let end = Math.min(text.length, at + random.int(3, 12))
    const last = text.charCodeAt(end - 1)
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end++
    out.push(text.slice(at, end))
    at = end
  }
  return out
}
