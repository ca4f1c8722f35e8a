/**
 * OpenAI Responses API (`stream: true`): `response.*` events to core events.
 *
 * Wire format: https://platform.openai.com/docs/api-reference/responses-streaming and
 * https://platform.openai.com/docs/guides/function-calling#streaming. The exact rules are
 * `test/fixtures/README.md` §4:
 *
 * - The event type is the payload's `type`; the `event:` line is optional (data-only frames are
 *   valid). A payload that is not a JSON object with a string `type` is a `MalformedStreamEvent`.
 * - Items are keyed by `output_index`. `response.output_item.added` opens the item at its index;
 *   a second item at an index in use is a `ToolCallProtocolError`. A `function_call` item needs
 *   a non-empty `name` and, if present, string `arguments`.
 * - `response.function_call_arguments.delta` / `.done` and a `function_call`
 *   `response.output_item.done` must name an `output_index` holding a `function_call` item whose
 *   id (`fc_…`) equals the event's `item_id` (`item.id` for `output_item.done`), else
 *   `ToolCallProtocolError`; `output_item.done` must not change the item's `call_id` or `name`.
 * - A call's arguments are the item's initial `arguments` followed by every delta; the full
 *   string of `.done` / `output_item.done` must equal them, or is taken when nothing was
 *   accumulated (checked by the assembler through `ToolCallDelta.arguments`).
 * - A closed call cannot change. After its `function_call_arguments.done` the arguments are
 *   final: a later delta for the item is a `ToolCallProtocolError`. After its `output_item.done`
 *   the item is closed: a later delta or `.done` for it is a `ToolCallProtocolError` (a proxy that
 *   flushes `.done` early must not get `rm -rf build` released as `rm -rf build /`).
 * - The reported id is the item's `call_id` (`call_…`); calls are ordered by `output_index`.
 * - The finish signal is the terminal event (`response.completed`, `response.incomplete`,
 *   `response.failed`); its `response.status` is the finish reason, classified by
 *   {@link classifyStatus} (one success status, so both finish profiles read it the same).
 *   `response.failed` is also a `ProviderStreamError`, and so is an `error` event (whose error
 *   object is nested under `error` on the wire; the top-level `code`/`message` of the API
 *   reference are read too).
 * - The terminal snapshot must agree with the stream: each `function_call` of a non-empty
 *   `response.output` pairs with the streamed call it names (item id, else `call_id`) and has its
 *   `call_id` and `name`; its non-empty `arguments` must equal the streamed ones, and supply
 *   them when the stream carried none (a gateway that streams `arguments: ""` everywhere must not
 *   get its call run with `{}`). A snapshot call the stream did not carry, or a streamed call the
 *   snapshot leaves out, is a `ToolCallProtocolError`; an empty or absent `output` checks nothing.
 *   Reading order of a terminal event: `response.id`, `status`, the `response.failed` error,
 *   `output`.
 * - One body, one lifecycle (§2). One response per body: the first `response.id` names it, and an
 *   event for another response (a second `response.created` spliced in, a terminal event of a
 *   concurrent response) is a `ToolCallProtocolError`. The terminal event ends the body (it is
 *   the core event's `end`); any event at all after it is a `ToolCallProtocolError` and is not
 *   read: its text, tool data and finish reason do not count.
 * - `data: [DONE]`, which gateways append to Responses bodies, is not an event here: ignored
 *   wherever it appears.
 * - Other event types (lifecycle, content parts, reasoning, annotations, …) change nothing.

 * Like `OpenAiChat`, events are checked with plain `typeof` tests on the hot path; the
 * {@link ResponsesEvent} Schema documents the accepted shapes.
 *
 * (Why one long module: the Responses lifecycle is one state machine whose rules above are checked
 * against each other event by event.)
 *
 * @since 0.1.0
 */
import type { FinishReason, ModelStreamError, StreamEvent } from "@toolgate/core"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import * as Decoder from "./Decoder.js"
import {
  EventParts,
  isFailure,
  isIndex,
  type Json,
  malformed,
  optionalString,
  otherThan,
  parseObject,
  protocol,
  providerError,
  safeStringify
} from "./internal/payload.js"
import * as ResponseEnd from "./internal/responseEnd.js"

const FunctionCallItem = Schema.Struct({
  type: Schema.Literal("function_call"),
  id: Schema.String,
  call_id: Schema.optional(Schema.String),
  name: Schema.String.check(Schema.isNonEmpty()),
  arguments: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String)
})

const TerminalResponse = Schema.Struct({
  status: Schema.String,
  incomplete_details: Schema.optional(Schema.NullOr(Schema.Struct({ reason: Schema.optional(Schema.String) }))),
  error: Schema.optional(Schema.NullOr(Schema.Unknown)),
  usage: Schema.optional(Schema.NullOr(Schema.Struct({
    input_tokens: Schema.optional(Schema.Number),
    output_tokens: Schema.optional(Schema.Number),
    total_tokens: Schema.optional(Schema.Number)
  })))
})

/** The event types this adapter reads; every other type changes nothing. */
const readTypes = [
  "response.output_item.added",
  "response.output_item.done",
  "response.function_call_arguments.delta",
  "response.function_call_arguments.done",
  "response.output_text.delta",
  "response.completed",
  "response.incomplete",
  "response.failed",
  "error"
]

/**
 * Schema of the Responses stream events this adapter reads (fields it does not read are allowed
 * and ignored; every other event type is accepted and changes nothing).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResponsesEvent = Schema.Union([
  Schema.Struct({
    type: Schema.Literals(["response.output_item.added", "response.output_item.done"]),
    output_index: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
    item: Schema.Union([
      FunctionCallItem,
      Schema.Struct({ type: otherThan(["function_call"]), id: Schema.optional(Schema.String) })
    ])
  }),
  Schema.Struct({
    type: Schema.Literal("response.function_call_arguments.delta"),
    output_index: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
    item_id: Schema.String,
    delta: Schema.String
  }),
  Schema.Struct({
    type: Schema.Literal("response.function_call_arguments.done"),
    output_index: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
    item_id: Schema.String,
    arguments: Schema.String
  }),
  Schema.Struct({ type: Schema.Literal("response.output_text.delta"), delta: Schema.String }),
  Schema.Struct({
    type: Schema.Literals(["response.completed", "response.incomplete", "response.failed"]),
    response: TerminalResponse
  }),
  Schema.Struct({ type: Schema.Literal("error"), error: Schema.optional(Schema.Unknown) }),
  Schema.Struct({ type: otherThan(readTypes) })
])

interface Item {
  readonly type: string
  readonly id: string | undefined
  readonly callId: string | undefined
  readonly name: string | undefined
  /** After `function_call_arguments.done` the arguments are final: no delta may follow. */
  argumentsDone: boolean
  /** After `output_item.done` the item is closed: no delta or `.done` may follow. */
  closed: boolean
}

const isTerminal = (type: string): boolean =>
  type === "response.completed" || type === "response.incomplete" || type === "response.failed"

/**
 * The finish class of a terminal Responses `status`: `completed` succeeds (whatever the finish
 * profile: Responses has one success status, with or without tool calls); `incomplete` with
 * `incomplete_details.reason === "max_output_tokens"` is the token limit; anything else (a bare
 * `incomplete`, `failed`, …) is unexpected
 * (https://platform.openai.com/docs/api-reference/responses/object#responses/object-status).
 *
 * @since 0.1.0
 * @category finish
 */
export const classifyStatus = (status: string, incompleteReason: string | undefined): FinishReason.FinishClass =>
  status === "completed"
    ? "success"
    : status === "incomplete" && incompleteReason === "max_output_tokens"
    ? "token_limit"
    : "unexpected"

/** The failure of any event after the terminal one (§2, one body, one lifecycle). */
const afterTerminal = () => protocol("an event arrived after the terminal response event, which ends the body")

/**
 * A fresh decoder for one Responses stream.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decoder = (): Decoder.Decoder => {
  const items = new Map<number, Item>()
  let terminated = false
  /** The body's response, named by the first `response.id` in it. */
  let responseId: string | undefined

  const functionCallAt = (
    event: Json,
    itemId: unknown,
    data: string,
    parts: EventParts
  ): { readonly index: number; readonly item: Item } | undefined => {
    const index = event.output_index
    if (!isIndex(index)) {
      parts.fail(malformed(`\`${String(event.type)}\` needs an integer \`output_index\` >= 0`, data))
      return undefined
    }
    const item = items.get(index)
    if (item === undefined || item.type !== "function_call") {
      parts.fail(protocol(`\`${String(event.type)}\` names output_index ${index}, which holds no function_call item`, {
        index
      }))
      return undefined
    }
    if (itemId !== item.id) {
      parts.fail(
        protocol(
          `\`${String(event.type)}\` names item ${safeStringify(itemId)} but output_index ${index} holds ${item.id}`,
          {
            index,
            id: item.callId,
            name: item.name
          }
        )
      )
      return undefined
    }
    if (item.closed) {
      parts.fail(protocol(`\`${String(event.type)}\` for a call whose output_item.done already closed it`, {
        index,
        id: item.callId,
        name: item.name
      }))
      return undefined
    }
    return { index, item }
  }

  /**
   * One response per body: the first `response.id` names it; an event for another response is a
   * `ToolCallProtocolError` (a second lifecycle spliced in, or a gateway's terminal event of a
   * concurrent response). A `response.id` that is not a string is a `MalformedStreamEvent`.
   */
  const checkResponse = (event: Json, data: string, parts: EventParts) => {
    const response = event.response
    if (!Predicate.isObject(response) || response.id === undefined || response.id === null) return
    const id = response.id
    if (typeof id !== "string") return parts.fail(malformed("`response.id` is not a string", data))
    if (responseId === undefined) responseId = id
    else if (id !== responseId) {
      parts.fail(protocol(`an event for response ${id} in the body of response ${responseId}`))
    }
  }

  const onItemAdded = (event: Json, data: string, parts: EventParts) => {
    const index = event.output_index
    const item = event.item
    if (!isIndex(index) || !Predicate.isObject(item)) {
      return parts.fail(
        malformed("`response.output_item.added` needs an `item` object and an integer `output_index`", data)
      )
    }
    if (typeof item.type !== "string") return parts.fail(malformed("an output item's `type` is not a string", data))
    const existing = items.get(index)
    if (existing !== undefined) {
      return parts.fail(protocol(`a second output item was added at output_index ${index}`, {
        index,
        id: existing.callId,
        name: existing.name
      }))
    }
    if (item.type !== "function_call") {
      items.set(index, {
        type: item.type,
        id: optionalString(item.id) ?? undefined,
        callId: undefined,
        name: undefined,
        argumentsDone: false,
        closed: false
      })
      return
    }
    const name = item.name
    const args = item.arguments
    const callId = optionalString(item.call_id)
    const id = optionalString(item.id)
    if (typeof name !== "string" || name === "") {
      return parts.fail(malformed("a function_call item needs a non-empty `name`", data))
    }
    if (args !== undefined && typeof args !== "string") {
      return parts.fail(malformed("a function_call item's `arguments` is not a string", data))
    }
    if (callId === null || id === null) {
      return parts.fail(malformed("a function_call item's `id` or `call_id` is not a string", data))
    }
    items.set(index, { type: "function_call", id, callId, name, argumentsDone: false, closed: false })
    parts.addToolCall({ index, id: callId, name, argumentsDelta: args })
  }

  const onItemDone = (event: Json, data: string, parts: EventParts) => {
    const item = event.item
    if (!isIndex(event.output_index) || !Predicate.isObject(item)) {
      return parts.fail(
        malformed("`response.output_item.done` needs an `item` object and an integer `output_index`", data)
      )
    }
    if (item.type !== "function_call") return
    const found = functionCallAt(event, item.id, data, parts)
    if (found === undefined) return
    const { index, item: open } = found
    const callId = optionalString(item.call_id)
    const args = item.arguments
    if (callId === null || (item.name !== undefined && typeof item.name !== "string")) {
      return parts.fail(malformed("a function_call item's `call_id` or `name` is not a string", data))
    }
    if (args !== undefined && typeof args !== "string") {
      return parts.fail(malformed("a function_call item's `arguments` is not a string", data))
    }
    // A field the done item leaves out is not restated, not changed.
    const changedId = item.call_id !== undefined && callId !== open.callId
    const changedName = item.name !== undefined && item.name !== open.name
    if (changedId || changedName) {
      return parts.fail(protocol("`response.output_item.done` changed the call's `call_id` or `name`", {
        index,
        id: open.callId,
        name: open.name
      }))
    }
    open.closed = true
    if (args !== undefined) parts.addToolCall({ index, arguments: args })
  }

  const onArguments = (event: Json, data: string, parts: EventParts, done: boolean) => {
    const text = done ? event.arguments : event.delta
    if (typeof text !== "string") {
      return parts.fail(malformed(`\`${String(event.type)}\` needs a string \`${done ? "arguments" : "delta"}\``, data))
    }
    const found = functionCallAt(event, event.item_id, data, parts)
    if (found === undefined) return
    const { index, item } = found
    if (done) {
      item.argumentsDone = true
      return parts.addToolCall({ index, arguments: text })
    }
    if (item.argumentsDone) {
      return parts.fail(
        protocol("an arguments delta after the call's function_call_arguments.done, which made them final", {
          index,
          id: item.callId,
          name: item.name
        })
      )
    }
    parts.addToolCall({ index, argumentsDelta: text })
  }

  /**
   * The terminal snapshot must agree with the stream (§4): each `function_call` in a non-empty
   * `output` pairs with the assembled call it names (item id, else `call_id`), with the same
   * `call_id` and `name`; its non-empty `arguments` go to the assembler as the call's final
   * arguments, which takes them when the stream carried none and otherwise requires the same
   * string. A snapshot call that pairs with none, or a streamed call the snapshot leaves out, is a
   * `ToolCallProtocolError`.
   */
  const checkSnapshot = (output: unknown, data: string, parts: EventParts) => {
    if (output === undefined || output === null) return
    if (!Array.isArray(output)) return parts.fail(malformed("`response.output` is not an array", data))
    if (output.length === 0) return
    let byId: Map<string, number> | undefined
    let byCallId: Map<string, number> | undefined
    const paired = new Set<number>()
    for (let i = 0; i < output.length; i++) {
      const entry = output[i]
      if (!Predicate.isObject(entry)) return parts.fail(malformed("a `response.output` entry is not an object", data))
      if (entry.type !== "function_call") continue
      const args = entry.arguments
      if (args !== undefined && args !== null && typeof args !== "string") {
        return parts.fail(malformed("a snapshot function_call's `arguments` is not a string", data))
      }
      if (byId === undefined || byCallId === undefined) {
        byId = new Map()
        byCallId = new Map()
        for (const [index, item] of items) {
          if (item.type !== "function_call") continue
          if (item.id !== undefined) byId.set(item.id, index)
          if (item.callId !== undefined) byCallId.set(item.callId, index)
        }
      }
      const index = typeof entry.id === "string" && entry.id !== ""
        ? byId.get(entry.id)
        : typeof entry.call_id === "string"
        ? byCallId.get(entry.call_id)
        : undefined
      const item = index === undefined ? undefined : items.get(index)
      if (index === undefined || item === undefined || paired.has(index)) {
        return parts.fail(protocol(
          `the terminal snapshot lists a function_call (${
            safeStringify(entry.id ?? entry.call_id)
          }) that the stream did not carry, or lists it twice`,
          { name: typeof entry.name === "string" ? entry.name : undefined }
        ))
      }
      paired.add(index)
      const callId = optionalString(entry.call_id)
      const changedId = entry.call_id !== undefined && callId !== item.callId
      const changedName = entry.name !== undefined && entry.name !== item.name
      if (changedId || changedName) {
        return parts.fail(protocol("the terminal snapshot gives a call another `call_id` or `name` than the stream", {
          index,
          id: item.callId,
          name: item.name
        }))
      }
      if (typeof args === "string" && args !== "") parts.addToolCall({ index, arguments: args })
    }
    for (const [index, item] of items) {
      if (item.type === "function_call" && !paired.has(index)) {
        return parts.fail(protocol("the terminal snapshot leaves out a call the stream carried", {
          index,
          id: item.callId,
          name: item.name
        }))
      }
    }
  }

  const onTerminal = (event: Json, data: string, parts: EventParts) => {
    const response = event.response
    if (!Predicate.isObject(response) || typeof response.status !== "string") {
      return parts.fail(malformed(`\`${String(event.type)}\` needs a \`response\` with a string \`status\``, data))
    }
    terminated = true
    parts.end = true
    const status = response.status
    if (event.type === "response.failed") {
      parts.fail(providerError(response.error ?? "response.failed", ["code", "type"]))
    }
    parts.finish = ResponseEnd.finishOf(response, status, classifyStatus)
    checkSnapshot(response.output, data, parts)
    const reported = ResponseEnd.usageOf(response)
    if (reported !== undefined) parts.usage = reported
  }

  return {
    onEvent({ data }) {
      // Gateways append OpenAI Chat's sentinel to Responses bodies: here it is not an event.
      if (data === "[DONE]") return undefined
      // §4: any event after the terminal one ends assembly, whatever it contains, and is not read.
      if (terminated) return { failure: afterTerminal() }
      const event = parseObject(data)
      if (isFailure(event)) return { failure: event }
      const type = event.type
      if (typeof type !== "string") return { failure: malformed("the event has no string `type`", data) }
      const parts = new EventParts()
      checkResponse(event, data, parts)
      switch (type) {
        case "response.output_text.delta": {
          if (typeof event.delta !== "string") {
            parts.fail(malformed("`response.output_text.delta` needs a string `delta`", data))
          } else parts.addText(event.delta)
          break
        }
        case "response.output_item.added":
          onItemAdded(event, data, parts)
          break
        case "response.function_call_arguments.delta":
          onArguments(event, data, parts, false)
          break
        case "response.function_call_arguments.done":
          onArguments(event, data, parts, true)
          break
        case "response.output_item.done":
          onItemDone(event, data, parts)
          break
        case "error":
          parts.fail(providerError(event.error ?? event, ["code", "type"]))
          break
        default:
          if (isTerminal(type)) onTerminal(event, data, parts)
      }
      return parts.toEvent()
    }
  }
}

/**
 * Decodes a Responses API response body into core events.
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
