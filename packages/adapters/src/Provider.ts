/**
 * The provider wire formats toolgate reads, by name, each with its decoder, and `auto`: a decoder
 * that recognises the format from the first event and hands every event to that format's
 * decoder.
 *
 * @since 0.1.0
 */
import type { EventReader, ModelStreamError, StreamEvent } from "@toolgate/core"
import * as Predicate from "effect/Predicate"
import type * as Stream from "effect/Stream"
import * as Anthropic from "./Anthropic.js"
import * as Decoder from "./Decoder.js"
import type * as FinishProfile from "./FinishProfile.js"
import * as Gemini from "./Gemini.js"
import { malformed } from "./internal/payload.js"
import * as Unframed from "./internal/unframed.js"
import * as OpenAiChat from "./OpenAiChat.js"
import * as OpenAiResponses from "./OpenAiResponses.js"

/**
 * A provider wire format.
 *
 * @since 0.1.0
 * @category models
 */
export type Name = "openai-chat" | "openai-responses" | "anthropic" | "gemini"

/**
 * Every supported format, in the order `toolgate inspect --help` lists them (`auto` is not a
 * format: it picks one of these).
 *
 * @since 0.1.0
 * @category constants
 */
export const names: ReadonlyArray<Name> = ["openai-chat", "openai-responses", "anthropic", "gemini"]

/**
 * Options shared by every provider decoder.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends Decoder.DecodeOptions {
  /** OpenAI Chat only: the choice to read when `n > 1`. Default 0. */
  readonly choice?: number | undefined
  /**
   * Which finish reasons release tool calls (`FinishProfile`). Default `compatible`: a decoder
   * reads a wire format, not an endpoint, and many OpenAI-compatible servers legitimately end a
   * tool turn with `stop`. Choose `strict` for a first-party API (`FinishProfile.forRequest`
   * does, from the URL). Only OpenAI Chat and Anthropic read it; Responses and Gemini have one
   * success reason.
   */
  readonly finishProfile?: FinishProfile.FinishProfile | undefined
  /** `auto` only: called once, synchronously, when the format has been recognised. */
  readonly onDetected?: ((name: Name) => void) | undefined
}

/** The event types of the Anthropic Messages stream (https://docs.anthropic.com/en/docs/build-with-claude/streaming). */
const anthropicTypes: ReadonlySet<string> = new Set([
  "message_start",
  "message_delta",
  "message_stop",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "ping"
])

/**
 * Recognises the wire format from one dispatched event, `undefined` when it matches none:
 *
 * - `data: [DONE]`, a payload with a `choices` array or `object: "chat.completion.chunk"`:
 *   `openai-chat`;
 * - a `type` that starts with `response.`: `openai-responses`;
 * - a `type` of the Messages stream (`message_start`, `content_block_*`, `message_delta`,
 *   `message_stop`, `ping`): `anthropic`;
 * - `type: "error"`: `openai-responses` when it carries a `sequence_number` (every Responses
 *   event does), else `anthropic`;
 * - `candidates`, `promptFeedback` or `usageMetadata`: `gemini`;
 * - an error-only payload `{"error": {…}}`: `gemini` when the error has a string `status`
 *   (`UNAVAILABLE`, Google's canonical codes), else `openai-chat`. Both read it as a
 *   `ProviderStreamError`, so the choice only names the provider.
 *
 * @since 0.1.0
 * @category detection
 */
export const detect = (event: Decoder.SseEvent): Name | undefined => {
  if (event.data === "[DONE]") return "openai-chat"
  let payload: unknown
  try {
    payload = JSON.parse(event.data)
  } catch {
    return undefined
  }
  if (!Predicate.isObject(payload)) return undefined
  if (Array.isArray(payload.choices) || payload.object === "chat.completion.chunk") return "openai-chat"
  const type = payload.type
  if (typeof type === "string") {
    if (type.startsWith("response.")) return "openai-responses"
    if (anthropicTypes.has(type)) return "anthropic"
    if (type === "error") return payload.sequence_number !== undefined ? "openai-responses" : "anthropic"
  }
  if (payload.candidates !== undefined || payload.promptFeedback !== undefined || payload.usageMetadata !== undefined) {
    return "gemini"
  }
  if (Predicate.isObject(payload.error)) return typeof payload.error.status === "string" ? "gemini" : "openai-chat"
  return undefined
}

/**
 * A fresh decoder for one stream of the named format.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decoder = (name: Name, options?: Options): Decoder.Decoder => {
  switch (name) {
    case "openai-chat":
      return OpenAiChat.decoder(options)
    case "openai-responses":
      return OpenAiResponses.decoder()
    case "anthropic":
      return Anthropic.decoder(options)
    case "gemini":
      return Gemini.decoder()
  }
}

/**
 * A fresh `auto` decoder: the first event picks the format with {@link detect}
 * (`options.onDetected` hears which), and that format's decoder reads every event, the first
 * included. A first event that matches no format is a `MalformedStreamEvent`, which ends
 * assembly. `data: [DONE]` does not pick a format while other events may follow, because
 * gateways put it into every format: the first other event does, and when that is OpenAI Chat
 * the sentinels seen before are handed to its decoder first (so a chat body that opens with
 * `[DONE]` reads exactly as it does with the provider named); a body of nothing but `[DONE]` is
 * OpenAI Chat's.
 *
 * Until the format is known, unframed lines are collected the way Gemini's raw error tail is
 * (`test/fixtures/README.md` §1): a body that is nothing but a raw `{"error": …}` object, as an HTTP
 * error body often is, reads as a `ProviderStreamError` whatever the provider. Afterwards they go
 * to the chosen decoder, which ignores them unless it is Gemini's. (So `auto` always reads
 * through `decodeSse`'s line-splitting path; naming the provider keeps OpenAI and Anthropic on
 * the plain parser path.)
 *
 * @since 0.1.0
 * @category decoding
 */
export const autoDecoder = (options?: Options): Decoder.Decoder => {
  let delegate: Decoder.Decoder | undefined
  let undetectable = false
  /** `data: [DONE]` events before the format is known (see the docs above). */
  let pendingDone = 0
  const tail = Unframed.make()
  const choose = (name: Name) => {
    const chosen = decoder(name, options)
    delegate = chosen
    options?.onDetected?.(name)
    // Only OpenAI Chat reads the sentinel (it ends the body); the other formats ignore it.
    if (name === "openai-chat" && pendingDone > 0) return chosen.onEvent(done)
    return undefined
  }
  return {
    onEvent(event) {
      if (delegate === undefined) {
        if (undetectable) return undefined
        if (event.data === "[DONE]") {
          pendingDone++
          return undefined
        }
        const name = detect(event)
        if (name === undefined) {
          undetectable = true
          return { failure: malformed("the first event matches no known provider format", event.data) }
        }
        choose(name)
      }
      return delegate!.onEvent(event)
    },
    onUnframedLine(line) {
      if (delegate !== undefined) return delegate.onUnframedLine?.(line)
      if (undetectable) return undefined
      const failure = tail.push(line)
      return failure === undefined ? undefined : { failure }
    },
    onEnd() {
      // A body of nothing but `[DONE]` is OpenAI Chat's (and an IncompleteStream there).
      if (delegate === undefined && !undetectable && pendingDone > 0) return choose("openai-chat")
      return delegate?.onEnd?.()
    }
  }
}

const done: Decoder.SseEvent = { event: "message", data: "[DONE]" }

/**
 * Decodes a response body of the named format, or of the format `auto` recognises, into core
 * events.
 * Fails with `NotAnEventStream` (`ModelStreamError`) when the body holds no SSE line at all.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (name: Name | "auto", options?: Options) =>
<E, R>(
  bytes: Stream.Stream<Uint8Array, E, R>
): Stream.Stream<StreamEvent.StreamEvent, E | ModelStreamError.NotAnEventStream, R> =>
  Decoder.decodeSse(() => name === "auto" ? autoDecoder(options) : decoder(name, options), options)(bytes)

/**
 * {@link decode} over a web `ReadableStream` body (`source`, as `Stream.fromReadableStream` takes
 * it): the same events and failures; piped straight into `Assembler.assemble()` or
 * `Assembler.stream()`, the body's reader is driven with no `Stream` in between
 * (`Decoder.decodeReadableStream`).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeReadableStream = <E>(
  name: Name | "auto",
  source: EventReader.Source<E>,
  options?: Options
): Stream.Stream<StreamEvent.StreamEvent, E | ModelStreamError.NotAnEventStream> =>
  Decoder.decodeReadableStream(() => name === "auto" ? autoDecoder(options) : decoder(name, options), options)(
    source
  )
