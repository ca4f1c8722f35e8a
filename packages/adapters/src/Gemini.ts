/**
 * Gemini `models/{model}:streamGenerateContent?alt=sse` (and the Vertex AI variant with
 * streamed function-call arguments): `GenerateContentResponse` chunks to core events.
 *
 * Wire format: https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent,
 * https://ai.google.dev/gemini-api/docs/function-calling,
 * https://ai.google.dev/api/generate-content#FinishReason and
 * https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling#streaming-function-call-arguments.
 * The exact rules are `test/fixtures/README.md` §6 (and §1 for the unframed tail):
 *
 * - Each event is a JSON object whose `candidates` and `content.parts`, when present, are
 *   arrays of objects (else `MalformedStreamEvent`). Only the candidate with `index` 0 is read (a
 *   missing index means 0). Reading order: a top-level `error` member (`ProviderStreamError`),
 *   the candidate's parts in order, its `finishReason`, then `promptFeedback.blockReason`.
 * - Every `functionCall` part is its own complete call, even several with the same name and no
 *   id: never merged. `args` arrives parsed (missing means `{}`); a part without a `name` or with
 *   non-object `args` is a `MalformedStreamEvent`. Calls take consecutive indices in arrival
 *   order.
 * - **Ids.** The reported id is `functionCall.id`; the Gemini API sends none, so it is usually
 *   absent (`inspect` prints `null`). Nothing here invents one. For execution the call is
 *   identified deterministically without it: its intent key (`IdempotencyKey`: scope, tool, key
 *   fields, occurrence ordinal) and the `downstreamKey` a handler receives are derived from the
 *   call itself, so a retried stream maps to the same key; `HandlerContext.toolCallId` stays
 *   `null`.
 * - **Vertex AI streamed arguments** (`streamFunctionCallArguments`): `{name, willContinue: true}`
 *   opens a call; each following `functionCall` part without a `name` applies its `partialArgs`
 *   (RFC 9535 normalized `jsonPath` plus `stringValue`, `numberValue`, `boolValue` or
 *   `nullValue`; string pieces for one path are concatenated), and the first such part without
 *   `willContinue: true` closes it, handing the built object to the assembler as the call's
 *   arguments. While it streams, each part reports a lower bound of the arguments' size
 *   (`ToolCallDelta.argumentsBytes`), so the assembler's size limit fails the call as soon as it
 *   is crossed, not only at the close. A named `functionCall` while one is open, or `partialArgs`
 *   with none open, is a `ToolCallProtocolError`; an unusable `partialArgs` entry is a
 *   `MalformedStreamEvent`.
 * - **A streamed call still open at the finish** must end as `MalformedToolArguments`, which
 *   ranks below the finish class (§2 rule 4). The finish event itself hands the call its
 *   arguments so far *without the closing brace*: an unterminated JSON text, which the
 *   assembler's rule 4 rejects, with the received prefix as the error's excerpt. Because it rides
 *   on the finish event, a non-success finish still wins, and a body that ends without a finish
 *   stays `IncompleteStream`; no end-of-body hook is needed.
 * - The finish signal is the first `finishReason` (possibly in a candidate without content), or,
 *   for a blocked prompt with no candidates, `promptFeedback.blockReason`. There is no sentinel.
 *   A `functionCall` after the finish is a `ToolCallProtocolError` (the assembler rejects tool
 *   data after a finish). Finish reasons ({@link finishPolicy}): `STOP` succeeds, with or without
 *   calls, under both finish profiles (Gemini has no reason of its own for a tool turn);
 *   `MAX_TOKENS` is the token limit; anything else is unexpected.
 * - Gemini has no end event; the finish chunk is the last one it sends, so it is the core event's
 *   `end` (a live reader stops there). In a finite body later events are still read: text and
 *   usage are harmless, an `{"error": …}` is still a `ProviderStreamError` (§2).
 * - `data: [DONE]`, which gateways append to Gemini bodies, is not an event here: ignored wherever
 *   it appears (it does not interrupt an unframed error tail either).
 * - An `{"error": …}` payload is a `ProviderStreamError`, as an SSE event or as the raw,
 *   pretty-printed JSON a failing body can end with (no SSE framing, the last line maybe without
 *   a newline): the decoder collects those unframed lines (`Decoder.onUnframedLine`) and reports
 *   the error where the object completes.
 *
 * Events are checked with plain `typeof` tests on the hot path; the {@link GenerateContentResponse}
 * Schema documents the accepted shape.
 *
 * @since 0.1.0
 */
import { FinishReason, type ModelStreamError, type StreamEvent } from "@toolgate/core"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import * as Decoder from "./Decoder.js"
import { applyPartialArg } from "./internal/partialArgs.js"
import {
  EventParts,
  isFailure,
  type Json,
  malformed,
  optionalString,
  parseObject,
  protocol,
  providerError,
  usage,
  writeJson
} from "./internal/payload.js"
import * as Unframed from "./internal/unframed.js"

const PartialArg = Schema.Struct({
  jsonPath: Schema.String,
  stringValue: Schema.optional(Schema.String),
  numberValue: Schema.optional(Schema.Number),
  boolValue: Schema.optional(Schema.Boolean),
  nullValue: Schema.optional(Schema.NullOr(Schema.Literal("NULL_VALUE"))),
  willContinue: Schema.optional(Schema.Boolean)
})

/**
 * Schema of one streamed `GenerateContentResponse` as this adapter accepts it (fields it does
 * not read are allowed and ignored).
 *
 * @since 0.1.0
 * @category schemas
 */
export const GenerateContentResponse = Schema.Struct({
  error: Schema.optional(Schema.Unknown),
  candidates: Schema.optional(Schema.Array(Schema.Struct({
    index: Schema.optional(Schema.Int),
    content: Schema.optional(Schema.Struct({
      parts: Schema.optional(Schema.Array(Schema.Struct({
        text: Schema.optional(Schema.String),
        thought: Schema.optional(Schema.Boolean),
        functionCall: Schema.optional(Schema.Struct({
          id: Schema.optional(Schema.String),
          name: Schema.optional(Schema.String),
          args: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
          willContinue: Schema.optional(Schema.Boolean),
          partialArgs: Schema.optional(Schema.Array(PartialArg))
        }))
      })))
    })),
    finishReason: Schema.optional(Schema.String)
  }))),
  promptFeedback: Schema.optional(Schema.Struct({ blockReason: Schema.optional(Schema.String) })),
  usageMetadata: Schema.optional(Schema.Struct({
    promptTokenCount: Schema.optional(Schema.Number),
    candidatesTokenCount: Schema.optional(Schema.Number),
    totalTokenCount: Schema.optional(Schema.Number),
    cachedContentTokenCount: Schema.optional(Schema.Number)
  }))
})

const tooDeep = "a call's arguments nest too deeply to be written as JSON"

/**
 * Gemini's finish reasons (https://ai.google.dev/api/generate-content#FinishReason) and prompt
 * block reasons, which are never a success: `STOP` succeeds, `MAX_TOKENS` is the token limit.
 * The same under both finish profiles.
 *
 * @since 0.1.0
 * @category finish
 */
export const finishPolicy: FinishReason.Policy = FinishReason.makePolicy("gemini", {
  success: ["STOP"],
  tokenLimit: ["MAX_TOKENS"]
})

/** A Vertex call whose arguments are still streaming. */
interface OpenCall {
  readonly index: number
  readonly name: string
  readonly args: Json
  /**
   * A lower bound, in UTF-8 bytes, of the arguments' JSON text: the UTF-16 length of every string
   * piece received (each code unit takes at least one byte, and every piece ends up in the text),
   * reported to the assembler as `argumentsBytes` so its size limit applies while the call is
   * still open.
   */
  bytes: number
}

/**
 * A fresh decoder for one Gemini stream.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decoder = (): Decoder.Decoder => {
  const tail = Unframed.make()
  let nextIndex = 0
  let open: OpenCall | undefined

  const onFunctionCall = (call: unknown, data: string, parts: EventParts) => {
    if (!Predicate.isObject(call)) return parts.fail(malformed("a `functionCall` is not an object", data))
    const name = call.name
    if (name !== undefined && name !== "" && typeof name !== "string") {
      return parts.fail(malformed("a `functionCall`'s `name` is not a string", data))
    }
    if (typeof name === "string" && name !== "") {
      if (open !== undefined) {
        return parts.fail(protocol(`a functionCall (${name}) arrived while the streamed call ${open.name} is open`, {
          index: open.index,
          name: open.name
        }))
      }
      const id = optionalString(call.id)
      const args = call.args
      if (id === null) return parts.fail(malformed("a `functionCall`'s `id` is not a string", data))
      if (args !== undefined && !Predicate.isObject(args)) {
        return parts.fail(malformed("a `functionCall`'s `args` is not an object", data))
      }
      // A failure earlier in this event leaves this call out (§2), and so must its index.
      if (parts.failure !== undefined) return
      if (call.willContinue === true) {
        const index = nextIndex++
        open = { index, name, args: args === undefined ? {} : args as Json, bytes: 0 }
        parts.addToolCall({ index, id, name })
        return
      }
      const text = args === undefined ? "{}" : writeJson(args)
      if (text === undefined) return parts.fail(malformed(tooDeep, data))
      parts.addToolCall({ index: nextIndex++, id, name, argumentsDelta: text })
      return
    }
    const partial = call.partialArgs
    if (open === undefined) {
      return parts.fail(
        partial === undefined
          ? malformed("a `functionCall` without a `name`", data)
          : protocol("`partialArgs` arrived with no streamed call open")
      )
    }
    if (partial !== undefined) {
      if (!Array.isArray(partial)) return parts.fail(malformed("`partialArgs` is not an array", data))
      for (const entry of partial) {
        const problem = applyPartialArg(open.args, entry)
        if (problem !== undefined) return parts.fail(malformed(`unusable \`partialArgs\` entry: ${problem}`, data))
        const piece = (entry as Json).stringValue
        if (typeof piece === "string") open.bytes += piece.length
      }
      if (partial.length > 0) parts.addToolCall({ index: open.index, argumentsBytes: open.bytes })
    }
    if (call.willContinue !== true) {
      const closed = open
      open = undefined
      const text = writeJson(closed.args)
      if (text === undefined) return parts.fail(malformed(tooDeep, data))
      parts.addToolCall({ index: closed.index, argumentsDelta: text })
    }
  }

  const onCandidate = (candidate: Json, data: string, parts: EventParts) => {
    const content = candidate.content
    if (content !== undefined) {
      if (!Predicate.isObject(content)) return parts.fail(malformed("a candidate's `content` is not an object", data))
      const list = content.parts
      if (list !== undefined) {
        if (!Array.isArray(list)) return parts.fail(malformed("`content.parts` is not an array", data))
        for (const part of list) {
          if (!Predicate.isObject(part)) {
            parts.fail(malformed("a content part is not an object", data))
            continue
          }
          const text = part.text
          if (text !== undefined) {
            if (typeof text !== "string") parts.fail(malformed("a part's `text` is not a string", data))
            else if (part.thought !== true) parts.addText(text)
          }
          if (part.functionCall !== undefined) onFunctionCall(part.functionCall, data, parts)
        }
      }
    }
    const reason = candidate.finishReason
    if (reason !== undefined && reason !== null) {
      if (typeof reason !== "string") return parts.fail(malformed("`finishReason` is not a string", data))
      finish(reason, data, parts)
    }
  }

  const finish = (reason: string, data: string, parts: EventParts) => {
    if (reason === "") return
    if (open !== undefined) {
      // The call never closed: hand it its arguments so far without the closing brace. The
      // unterminated text fails the assembler's rule 4 (`MalformedToolArguments`), which ranks
      // below this finish's class, exactly as §6 asks.
      const text = writeJson(open.args)
      if (text === undefined) parts.fail(malformed(tooDeep, data))
      else parts.addToolCall({ index: open.index, argumentsDelta: text.slice(0, -1) })
      open = undefined
    }
    parts.finish = { reason, class: FinishReason.classify(finishPolicy, reason), terminal: true }
    parts.end = true
  }

  return {
    onEvent({ data }) {
      if (data === "[DONE]") return undefined
      tail.reset()
      const chunk = parseObject(data)
      if (isFailure(chunk)) return { failure: chunk }
      const parts = new EventParts()
      if (chunk.error !== undefined && chunk.error !== null) parts.fail(providerError(chunk.error, ["status", "code"]))
      const candidates = chunk.candidates
      if (candidates !== undefined) {
        if (!Array.isArray(candidates)) {
          parts.fail(malformed("`candidates` is not an array", data))
        } else {
          // A candidate that is not an object fails the chunk, but the chunk is still read to its
          // end (§2): candidate 0's text and finish reason count wherever it stands.
          let candidate: Json | undefined
          for (const c of candidates) {
            if (!Predicate.isObject(c)) parts.fail(malformed("a candidate is not an object", data))
            else if (candidate === undefined && (c.index ?? 0) === 0) candidate = c
          }
          if (candidate !== undefined) onCandidate(candidate, data, parts)
        }
      }
      const feedback = chunk.promptFeedback
      if (Predicate.isObject(feedback) && feedback.blockReason !== undefined && feedback.blockReason !== null) {
        if (typeof feedback.blockReason !== "string") {
          parts.fail(malformed("`promptFeedback.blockReason` is not a string", data))
        } else if (parts.finish === undefined) finish(feedback.blockReason, data, parts)
      }
      const metadata = chunk.usageMetadata
      if (Predicate.isObject(metadata)) {
        parts.usage = usage({
          inputTokens: metadata.promptTokenCount,
          outputTokens: metadata.candidatesTokenCount,
          totalTokens: metadata.totalTokenCount,
          cachedInputTokens: metadata.cachedContentTokenCount
        })
      }
      return parts.toEvent()
    },
    onUnframedLine(line) {
      const failure = tail.push(line)
      return failure === undefined ? undefined : { failure }
    }
  }
}

/**
 * Decodes a Gemini `streamGenerateContent?alt=sse` response body into core events, including a
 * raw `{"error": …}` tail.
 * Fails with `NotAnEventStream` (`ModelStreamError`) when the body holds no SSE line at all.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (options?: Decoder.DecodeOptions) =>
<E, R>(
  bytes: Stream.Stream<Uint8Array, E, R>
): Stream.Stream<StreamEvent.StreamEvent, E | ModelStreamError.NotAnEventStream, R> =>
  Decoder.decodeSse(decoder, options)(bytes)
