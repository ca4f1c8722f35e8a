/**
 * Non-streaming answers through the same gate: a whole JSON response body of each wire format
 * (a request sent without a stream, or a server that ignored `stream: true`) decoded into the
 * same core events a stream of the same turn gives, so that `Assembler` applies exactly the same
 * rules: the format's finish table and finish profile (a call with `stop` is released under
 * `compatible` and rejected under `strict`, `length` / `max_tokens` / `MAX_TOKENS` are
 * `TokenLimitExceeded`, a content filter or a refusal is `UnexpectedFinishReason`), all-or-nothing
 * argument parsing (`MalformedToolArguments`), the size limit of each call's arguments
 * (`ArgumentsTooLarge`), and then the same validation against the tools.
 *
 * - `openai-chat`: a `chat.completion` (https://platform.openai.com/docs/api-reference/chat/object):
 *   the chosen choice's `message.content`, its `message.tool_calls` (each whole, keyed by its
 *   position), `finish_reason`, `usage`.
 * - `openai-responses`: a `response` (https://platform.openai.com/docs/api-reference/responses/object):
 *   `output_text` of its `message` items, its `function_call` items keyed by their position in
 *   `output` (the reported id is the `call_id`), `status` as the finish reason
 *   (`OpenAiResponses.classifyStatus`), `usage`; `status: "failed"` with its `error`.
 * - `anthropic`: a `message` (https://docs.anthropic.com/en/api/messages): its `text` blocks, its
 *   `tool_use` blocks keyed by block index (`input` written back as JSON text), `stop_reason`,
 *   `usage`.
 * - `gemini`: a `GenerateContentResponse` (https://ai.google.dev/api/generate-content#generatecontentresponse),
 *   read by the streaming decoder as the one chunk it is, or a JSON array of them (what
 *   `streamGenerateContent` answers without `alt=sse`), read chunk by chunk.
 *
 * Error bodies are the same typed errors as the in-stream errors: `{"error": {…}}` (OpenAI,
 * Gemini, gateways), `{"error": "text"}` (Ollama), `{"object": "error", …}` (vLLM) and Anthropic's
 * `{"type": "error", "error": {…}}` are a `ProviderStreamError` with the provider's code and
 * message. A body that is not JSON, or not the format's object, is a `MalformedStreamEvent` (with
 * the start of the body); an empty body has no finish and is an `IncompleteStream`. A body larger
 * than `maxBodyBytes` is a `MalformedStreamEvent` as soon as it crosses the limit, and is not
 * read further.
 *
 * `auto` recognises the format from the body ({@link detect}).
 *
 * The events come out when the body has ended (a whole JSON document cannot be read before),
 * the last one marked `end`.
 *
 * ```ts
 * const turn = body.pipe(NonStreaming.decode("openai-chat"), Assembler.assemble())
 * ```
 *
 * @since 0.1.0
 */
import type { StreamEvent } from "@toolgate/core"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import type * as FinishProfile from "./FinishProfile.js"
import { malformed } from "./internal/payload.js"
import * as WholeBody from "./internal/wholeBody.js"
import type * as Provider from "./Provider.js"

/**
 * Options of the non-streaming decoders.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Largest body read, in bytes. Default 16 MiB ({@link defaultMaxBodyBytes}). */
  readonly maxBodyBytes?: number | undefined
  /** OpenAI Chat only: the choice to read when `n > 1`. Default 0. */
  readonly choice?: number | undefined
  /**
   * Which finish reasons release tool calls (`FinishProfile`), read by OpenAI Chat and Anthropic
   * as their streaming decoders read it. Default `compatible`.
   */
  readonly finishProfile?: FinishProfile.FinishProfile | undefined
}

/**
 * Default of {@link Options.maxBodyBytes}: 16 MiB, the streaming decoders' largest event.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxBodyBytes = 16 * 1024 * 1024

/**
 * Recognises the format of a parsed whole body, `undefined` when it matches none:
 * `object: "chat.completion"` or a `choices` array: `openai-chat`; `object: "response"`:
 * `openai-responses`; `type: "message"` or `type: "error"`: `anthropic`; an array, `candidates`,
 * `promptFeedback` or `usageMetadata`: `gemini`; an error-only `{"error": …}`: `gemini` when the
 * error has a string `status` (Google's canonical codes), else `openai-chat` (both read it as a
 * `ProviderStreamError`).
 *
 * @since 0.1.0
 * @category detection
 */
export const detect = (body: unknown): Provider.Name | undefined => {
  if (Array.isArray(body)) return "gemini"
  if (!Predicate.isObject(body)) return undefined
  if (body.object === "chat.completion" || Array.isArray(body.choices)) return "openai-chat"
  if (body.object === "response") return "openai-responses"
  if (body.type === "message" || body.type === "error") return "anthropic"
  if (body.candidates !== undefined || body.promptFeedback !== undefined || body.usageMetadata !== undefined) {
    return "gemini"
  }
  if (Predicate.isObject(body.error)) return typeof body.error.status === "string" ? "gemini" : "openai-chat"
  if (body.error !== undefined || body.object === "error") return "openai-chat"
  return undefined
}

/**
 * The core events of a whole response body of the named format (or the one {@link detect}
 * recognises), given as text (see the module docs). Never throws.
 *
 * @since 0.1.0
 * @category decoding
 */
export const events = (
  name: Provider.Name | "auto",
  text: string,
  options?: Options
): ReadonlyArray<StreamEvent.StreamEvent> => {
  if (text.trim() === "") return []
  if (name === "gemini") return WholeBody.gemini(text)
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return [{ failure: malformed("the response body is not JSON", text), end: true }]
  }
  if (name === "auto") {
    const detected = detect(body)
    if (detected === undefined) {
      return [{ failure: malformed("the response body matches no known provider format", text), end: true }]
    }
    if (detected === "gemini") return WholeBody.gemini(text)
    name = detected
  }
  if (!Predicate.isObject(body)) {
    return [{ failure: malformed("the response body is not a JSON object", text), end: true }]
  }
  switch (name) {
    case "openai-chat":
      return WholeBody.openAiChat(body, text, options)
    case "openai-responses":
      return WholeBody.openAiResponses(body, text)
    case "anthropic":
      return WholeBody.anthropic(body, text, options)
  }
}

/**
 * Decodes a whole response body of the named format into core events (see the module docs): the
 * body is read to its end (at most `maxBodyBytes`), then its events are emitted at once.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode =
  (name: Provider.Name | "auto", options?: Options) =>
  <E, R>(bytes: Stream.Stream<Uint8Array, E, R>): Stream.Stream<StreamEvent.StreamEvent, E, R> =>
    Stream.transformPull(bytes, (pull) =>
      Effect.sync(() => {
        const max = options?.maxBodyBytes ?? defaultMaxBodyBytes
        const chunks: Array<Uint8Array> = []
        let size = 0
        let done = false
        type Events = readonly [StreamEvent.StreamEvent, ...Array<StreamEvent.StreamEvent>]
        const emit = (out: ReadonlyArray<StreamEvent.StreamEvent>): Pull.Pull<Events, E, void> => {
          done = true
          return out.length === 0
            ? Cause.done()
            : Effect.succeed(out as unknown as Events)
        }
        return Effect.suspend(
          function loop(): Pull.Pull<Events, E, void> {
            if (done) return Cause.done()
            return Effect.matchCauseEffect(pull, {
              onFailure: (cause) => {
                if (!Pull.isDoneCause(cause)) return Effect.failCause(cause as Cause.Cause<E>)
                return emit(events(name, concat(chunks, size), options))
              },
              onSuccess: (read) => {
                for (const chunk of read) {
                  size += chunk.length
                  chunks.push(chunk)
                }
                if (size <= max) return loop()
                return emit([{
                  failure: malformed(
                    `the response body is larger than ${max} bytes`,
                    concat(chunks, Math.min(size, 256))
                  ),
                  end: true
                }])
              }
            })
          }
        )
      }))

/** The first `length` bytes of the chunks, as UTF-8 text (a leading BOM dropped). */
const concat = (chunks: ReadonlyArray<Uint8Array>, length: number): string => {
  const bytes = new Uint8Array(length)
  let at = 0
  for (const chunk of chunks) {
    if (at >= length) break
    const part = chunk.subarray(0, length - at)
    bytes.set(part, at)
    at += part.length
  }
  return new TextDecoder().decode(bytes)
}
