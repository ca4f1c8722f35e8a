/**
 * OpenAI Chat Completions (`stream: true`) and OpenAI-compatible servers: `chat.completion.chunk`
 * payloads to core events.
 *
 * Wire format: https://platform.openai.com/docs/api-reference/chat-streaming and
 * https://platform.openai.com/docs/guides/function-calling#streaming. The exact rules, with the
 * reading order of a chunk (`error`, `delta.content`, `delta.tool_calls` in array order,
 * `finish_reason`), are `test/fixtures/README.md` §3.
 *
 * The body's lifecycle (`test/fixtures/README.md` §2 "One body, one lifecycle" and §3):
 * `data: [DONE]` is not a finish, but it ends the body. It is reported as the core event's `end`
 * (a live reader stops there, see `HttpTransport`), and any event after it (a chunk of any kind)
 * is a `ToolCallProtocolError` that is not read: its text, tool data and finish reason do not
 * count. A repeated `[DONE]` carries nothing and is ignored; comments and blank lines are not
 * events.
 *
 * Finish reasons ({@link finishPolicy}): `tool_calls` succeeds; `stop` succeeds under the
 * `compatible` profile and, under `strict`, only for a turn without tool calls (`FinishProfile`);
 * `length` is the token limit; anything else (`content_filter`, `error`, …) is unexpected.
 *
 * Every chunk is checked on the hot path with plain `typeof` tests, not a Schema decode: a
 * Schema decode per event costs more than the event's `JSON.parse` (see `bench/`). The
 * {@link ChatCompletionChunk} Schema documents the accepted shape and is what tests decode with.
 *
 * Quirks of OpenAI-compatible servers that are accepted (each has a fixture):
 * - vLLM: no `arguments` key on the start delta, `stop_reason` next to `finish_reason`.
 * - Ollama: parallel calls whole, each with its own id, all at `index` 0 (a new id after a
 *   complete JSON value opens the next call); `role` repeated on every delta.
 * - Groq `x_groq`, Azure `prompt_filter_results` chunks with `choices: []`, OpenRouter
 *   `: OPENROUTER PROCESSING` comments and a usage chunk after the finish, DeepSeek
 *   `: keep-alive` comments, Mistral's whole calls on the finish chunk, Fireworks/LiteLLM
 *   repeating `id`, `type` and `name` on every delta, Gemini's OpenAI-compatible endpoint sending
 *   no `index` and `finish_reason: "stop"` with tool calls, `data:` without a space (Spring
 *   proxies), gateways re-slicing arguments at arbitrary positions.
 *
 * Quirks that are rejected, because acting on them corrupts calls:
 * - continuation deltas under an index that was never started (Nebius/Cerebras-style index
 *   drift): `ToolCallProtocolError`;
 * - a second id on an index whose arguments are incomplete, a changed name or type:
 *   `ToolCallProtocolError`;
 * - tool calls after the finish chunk: `ToolCallProtocolError`;
 * - any chunk after `data: [DONE]` (a gateway's own usage chunk, a second response):
 *   `ToolCallProtocolError`, not read;
 * - a missing `finish_reason` (only `[DONE]`): `IncompleteStream`.
 *
 * @since 0.1.0
 */
import { type EventReader, FinishReason, type ModelStreamError, type StreamEvent } from "@toolgate/core"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import * as Decoder from "./Decoder.js"
import * as FinishProfile from "./FinishProfile.js"
import {
  EventParts,
  isFailure,
  type Json,
  malformed,
  optionalString,
  parseObject,
  protocol,
  providerError,
  usage
} from "./internal/payload.js"

/**
 * The finish reasons of Chat Completions (https://platform.openai.com/docs/api-reference/chat/object)
 * under a finish profile: `tool_calls` releases calls; `stop` does too under `compatible`
 * (OpenAI-compatible servers send it with calls, and OpenAI itself for a named `tool_choice`) and
 * only ends a text turn under `strict`; `length` is the token limit.
 *
 * @since 0.1.0
 * @category finish
 */
export const finishPolicy = (profile: FinishProfile.FinishProfile): FinishReason.Policy =>
  profile === "strict" ? strictPolicy : compatiblePolicy

const compatiblePolicy = FinishReason.makePolicy("openai-chat", {
  success: ["tool_calls", "stop"],
  tokenLimit: ["length"]
})
const strictPolicy = FinishReason.makePolicy("openai-chat", {
  success: ["tool_calls"],
  successWithoutCalls: ["stop"],
  tokenLimit: ["length"]
})

/**
 * Schema of one `chat.completion.chunk` as this adapter accepts it (fields it does not read are
 * allowed and ignored).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatCompletionChunk = Schema.Struct({
  error: Schema.optional(Schema.Unknown),
  choices: Schema.optional(Schema.Array(Schema.Struct({
    index: Schema.optional(Schema.NullOr(Schema.Int)),
    delta: Schema.optional(Schema.NullOr(Schema.Struct({
      content: Schema.optional(Schema.NullOr(Schema.String)),
      tool_calls: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({
        index: Schema.optional(Schema.NullOr(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)))),
        id: Schema.optional(Schema.NullOr(Schema.String)),
        type: Schema.optional(Schema.NullOr(Schema.String)),
        function: Schema.optional(Schema.NullOr(Schema.Struct({
          name: Schema.optional(Schema.NullOr(Schema.String)),
          arguments: Schema.optional(Schema.NullOr(Schema.String))
        })))
      }))))
    }))),
    finish_reason: Schema.optional(Schema.NullOr(Schema.String))
  }))),
  usage: Schema.optional(Schema.NullOr(Schema.Struct({
    prompt_tokens: Schema.optional(Schema.Number),
    completion_tokens: Schema.optional(Schema.Number),
    total_tokens: Schema.optional(Schema.Number)
  })))
})

/**
 * Options of the OpenAI Chat decoder.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends Decoder.DecodeOptions {
  /** Which choice to read when `n > 1` was requested. Default 0; other choices are ignored. */
  readonly choice?: number | undefined
  /** Which finish reasons release tool calls. Default `compatible` (`FinishProfile.defaultProfile`). */
  readonly finishProfile?: FinishProfile.FinishProfile | undefined
}

/** Usage from `usage` (or Groq's `x_groq.usage`), in OpenAI's field names. */
const usageOf = (chunk: Json): StreamEvent.Usage | undefined => {
  const fields = Predicate.isObject(chunk.usage)
    ? chunk.usage
    : Predicate.isObject(chunk.x_groq) && Predicate.isObject(chunk.x_groq.usage)
    ? chunk.x_groq.usage
    : undefined
  if (fields === undefined) return undefined
  const details = fields.prompt_tokens_details
  return usage({
    inputTokens: fields.prompt_tokens,
    outputTokens: fields.completion_tokens,
    totalTokens: fields.total_tokens,
    cachedInputTokens: Predicate.isObject(details) ? details.cached_tokens : undefined
  })
}

/**
 * A fresh decoder for one Chat Completions stream.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decoder = (options?: Options): Decoder.Decoder => {
  const choiceIndex = options?.choice ?? 0
  const policy = finishPolicy(options?.finishProfile ?? FinishProfile.defaultProfile)
  let done = false
  return {
    onEvent({ data }) {
      if (data === "[DONE]") {
        if (done) return undefined
        done = true
        return ended
      }
      if (done) return { failure: protocol("an event arrived after data: [DONE], which ends the body") }
      const chunk = parseObject(data)
      if (isFailure(chunk)) return { failure: chunk }
      const parts = new EventParts()
      if (chunk.error !== undefined && chunk.error !== null) parts.fail(providerError(chunk.error, ["code", "type"]))
      parts.usage = usageOf(chunk)
      const choices = chunk.choices
      if (!Array.isArray(choices)) {
        if (choices !== undefined || parts.failure === undefined) {
          parts.fail(malformed("`choices` is not an array", data))
        }
        return parts.toEvent()
      }
      // A choice that is not an object fails the chunk, but the chunk is still read to its end
      // (§2): the chosen choice's text and finish reason count.
      let choice: Json | undefined
      for (let i = 0; i < choices.length; i++) {
        const c = choices[i]
        if (!Predicate.isObject(c)) parts.fail(malformed("a choice is not an object", data))
        else if (choice === undefined && (c.index ?? 0) === choiceIndex) choice = c
      }
      if (choice !== undefined) readChoice(choice, data, parts, policy)
      return parts.toEvent()
    }
  }
}

/** The core event of `data: [DONE]`: the end of the body, nothing else. */
const ended: StreamEvent.StreamEvent = { end: true }

const readChoice = (choice: Json, data: string, parts: EventParts, policy: FinishReason.Policy): void => {
  const delta = choice.delta
  if (delta !== undefined && delta !== null) {
    if (!Predicate.isObject(delta)) {
      parts.fail(malformed("`delta` is not an object", data))
    } else {
      readDelta(delta, data, parts)
    }
  }
  const reason = choice.finish_reason
  if (reason !== undefined && reason !== null) {
    if (typeof reason !== "string") parts.fail(malformed("`finish_reason` is not a string", data))
    else if (reason !== "") {
      parts.finish = {
        reason,
        class: FinishReason.classify(policy, reason),
        terminal: true
      }
    }
  }
}

const readDelta = (delta: Json, data: string, parts: EventParts): void => {
  const content = delta.content
  if (content !== undefined && content !== null) {
    if (typeof content !== "string") return parts.fail(malformed("`delta.content` is not a string", data))
    if (content !== "") parts.text = content
  }
  const entries = delta.tool_calls
  // The chunk's `error` member (or a bad choice) comes first in the reading order: once it failed
  // the chunk, its tool calls are left out, so no later problem in them can take its place.
  if (entries === undefined || entries === null || parts.failure !== undefined) return
  if (!Array.isArray(entries)) return parts.fail(malformed("`delta.tool_calls` is not an array", data))
  const toolCalls: Array<StreamEvent.ToolCallDelta> = []
  parts.toolCalls = toolCalls
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]
    if (!Predicate.isObject(entry)) return parts.fail(malformed("a `tool_calls` entry is not an object", data))
    const fn = entry.function
    if (fn !== undefined && fn !== null && !Predicate.isObject(fn)) {
      return parts.fail(malformed("a tool call's `function` is not an object", data))
    }
    const index = entry.index
    if (index !== undefined && index !== null && !(Number.isSafeInteger(index) && (index as number) >= 0)) {
      return parts.fail(malformed("a tool call's `index` is not an integer >= 0", data))
    }
    const id = optionalString(entry.id)
    const type = optionalString(entry.type)
    const name = fn ? optionalString(fn.name) : undefined
    if (id === null || type === null || name === null) {
      return parts.fail(malformed("a tool call's `id`, `type` or `function.name` is not a string", data))
    }
    const args = fn ? fn.arguments : undefined
    if (args !== undefined && args !== null && typeof args !== "string") {
      return parts.fail(malformed("a tool call's `function.arguments` is not a string", data))
    }
    toolCalls.push({
      index: index === null ? undefined : index as number | undefined,
      id,
      name,
      type,
      argumentsDelta: args === null ? undefined : args
    })
  }
}

/**
 * Decodes a Chat Completions response body into core events.
 * Fails with `NotAnEventStream` (`ModelStreamError`) when the body holds no SSE line at all.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (options?: Options) =>
<E, R>(
  bytes: Stream.Stream<Uint8Array, E, R>
): Stream.Stream<StreamEvent.StreamEvent, E | ModelStreamError.NotAnEventStream, R> =>
  Decoder.decodeSse(() => decoder(options), options)(bytes)

/**
 * Decodes a Chat Completions response body read from a web `ReadableStream` (`source.evaluate`; a rejected read fails with
 * `source.onError` of it) into core events: the events and failures of {@link decode}. Piped
 * straight into `Assembler.assemble()` or `Assembler.stream()`, the body's reader is driven with
 * no `Stream` in between (`Decoder.decodeReadableStream`).
 *
 * ```ts
 * const turn = OpenAiChat.decodeReadableStream({ evaluate: () => response.body!, onError: (cause) => new BodyError({ cause }) })
 *   .pipe(Assembler.assemble())
 * ```
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeReadableStream = <E>(
  source: EventReader.Source<E>,
  options?: Options
): Stream.Stream<StreamEvent.StreamEvent, E | ModelStreamError.NotAnEventStream> =>
  Decoder.decodeReadableStream(() => decoder(options), options)(source)
