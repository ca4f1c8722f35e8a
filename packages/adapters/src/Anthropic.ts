/**
 * Anthropic Messages API (`stream: true`): message and content-block events to core events.
 *
 * Wire format: https://docs.anthropic.com/en/docs/build-with-claude/streaming,
 * https://docs.anthropic.com/en/api/handling-stop-reasons and
 * https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/fine-grained-tool-streaming. The
 * exact rules are `test/fixtures/README.md` §5:
 *
 * - The event type is the payload's `type` (not a JSON object with a string `type`:
 *   `MalformedStreamEvent`). `ping` is ignored anywhere, unknown types inside the message;
 *   `error` is a `ProviderStreamError`, and so is an error payload without a `type`
 *   (`data: {"error": {…}}`, what LiteLLM's Anthropic endpoint sends after its upstream timeout):
 *   it carries the provider's message instead of becoming a `MalformedStreamEvent`. The shapes the
 *   rules read must be there: `message.id` on `message_start`, an integer `index` on block
 *   events, `content_block` / `delta` objects, `id` and `name` on a `tool_use` block, string
 *   `text_delta.text` and `partial_json`, a `stop_reason` that is a string or null (else
 *   `MalformedStreamEvent`).
 * - One body is one message (§2, one body, one lifecycle). Its first event other than `ping` must
 *   be `message_start`: any other first event (content before the message started, a proxy that
 *   resumed mid-message) is a `ToolCallProtocolError`, read to its end; an error stays a
 *   `ProviderStreamError`, first or not. A repeated `message_start` with the same `message.id`
 *   before any `content_block_start` is ignored (bridges emit it twice); any other second
 *   `message_start` (another id while the message is open, content already started) is a
 *   `ToolCallProtocolError`.
 * - `message_stop` ends the body (the core event's `end`): any later event but `ping` is a
 *   `ToolCallProtocolError` and is not read, so a `stop_reason` that arrives after it is never
 *   the finish reason, and a relay's footer text does not count.
 * - `data: [DONE]`, which gateways append to Anthropic bodies, is not an event here: ignored
 *   wherever it appears.
 * - Blocks are keyed by `index`. A second `content_block_start` for an index, a delta or stop
 *   for an index never started, a delta after the block's stop, an `input_json_delta` on a block
 *   that is not `tool_use`/`server_tool_use`, or a `text_delta` on a block that is not `text` is
 *   a `ToolCallProtocolError`.
 * - A `tool_use` block is a client tool call (`id` and `name` from `content_block_start`),
 *   listed in block index order. Its arguments are the concatenated `partial_json` pieces, or,
 *   when those are empty, the block's start `input` (the API always sends `{}`); a non-empty
 *   start `input` is handed over when the block stops, or with the finish if it never does.
 * - `server_tool_use` blocks run on Anthropic's side and are ignored; `thinking` and
 *   `redacted_thinking` blocks are not text. Text is `text_delta` plus the (normally empty)
 *   `text` of a text block's start.
 * - The finish reason is the first non-null `stop_reason` of a `message_delta`
 *   (`Finish.terminal: false`); only `message_stop` finishes the stream (`terminal: true`), so a
 *   body without it is `IncompleteStream` even after a `stop_reason`, and a `message_stop`
 *   without a `stop_reason` before it is `UnexpectedFinishReason` with a `null` reason. A
 *   `tool_use` block or tool input after the `stop_reason` is a `ToolCallProtocolError` (the
 *   assembler rejects tool data after a finish).
 * - Stop reasons ({@link finishPolicy}): `tool_use` succeeds; `end_turn` and `stop_sequence`
 *   succeed under the `compatible` profile and, under `strict`, only for a turn without tool
 *   calls (`FinishProfile`); `max_tokens` is the token limit; anything else (`refusal`,
 *   `pause_turn`, …) is unexpected.

 * Events are checked with plain `typeof` tests on the hot path; the {@link MessagesEvent} Schema
 * documents the accepted shapes. A `content_block_delta` in the exact spelling the API writes
 * (nearly every event of a stream) is read without `JSON.parse` of the whole payload, only of its
 * string, with the same result (`internal/anthropicDelta.ts`; property-tested against `JSON.parse`).
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
  type DeltaKind,
  INPUT_DELTA,
  NOT_WIRE_FORM,
  OTHER_DELTA,
  TEXT_DELTA,
  WireDelta
} from "./internal/anthropicDelta.js"
import {
  EventParts,
  isFailure,
  isIndex,
  type Json,
  malformed,
  otherThan,
  parseObject,
  protocol,
  providerError,
  usage,
  writeJson
} from "./internal/payload.js"

const Index = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * The stop reasons of the Messages API (https://docs.anthropic.com/en/api/handling-stop-reasons)
 * under a finish profile: `tool_use` releases calls; `end_turn` and `stop_sequence` do too under
 * `compatible` and only end a text turn under `strict`; `max_tokens` is the token limit.
 *
 * @since 0.1.0
 * @category finish
 */
export const finishPolicy = (profile: FinishProfile.FinishProfile): FinishReason.Policy =>
  profile === "strict" ? strictPolicy : compatiblePolicy

const compatiblePolicy = FinishReason.makePolicy("anthropic", {
  success: ["tool_use", "end_turn", "stop_sequence"],
  tokenLimit: ["max_tokens"]
})
const strictPolicy = FinishReason.makePolicy("anthropic", {
  success: ["tool_use"],
  successWithoutCalls: ["end_turn", "stop_sequence"],
  tokenLimit: ["max_tokens"]
})

/**
 * Options of the Messages decoder.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends Decoder.DecodeOptions {
  /** Which stop reasons release tool calls. Default `compatible` (`FinishProfile.defaultProfile`). */
  readonly finishProfile?: FinishProfile.FinishProfile | undefined
}

/**
 * Schema of the Messages stream events this adapter reads (fields it does not read are allowed
 * and ignored; unknown event types are accepted and change nothing).
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessagesEvent = Schema.Union([
  Schema.Struct({ type: Schema.Literal("message_start"), message: Schema.Struct({ id: Schema.String }) }),
  Schema.Struct({
    type: Schema.Literal("content_block_start"),
    index: Index,
    content_block: Schema.Union([
      Schema.Struct({
        type: Schema.Literal("tool_use"),
        id: Schema.String.check(Schema.isNonEmpty()),
        name: Schema.String.check(Schema.isNonEmpty()),
        input: Schema.optional(Schema.Unknown)
      }),
      Schema.Struct({ type: Schema.Literal("text"), text: Schema.optional(Schema.String) }),
      Schema.Struct({ type: otherThan(["tool_use", "text"]) })
    ])
  }),
  Schema.Struct({
    type: Schema.Literal("content_block_delta"),
    index: Index,
    delta: Schema.Union([
      Schema.Struct({ type: Schema.Literal("text_delta"), text: Schema.String }),
      Schema.Struct({ type: Schema.Literal("input_json_delta"), partial_json: Schema.String }),
      Schema.Struct({ type: otherThan(["text_delta", "input_json_delta"]) })
    ])
  }),
  Schema.Struct({ type: Schema.Literal("content_block_stop"), index: Index }),
  Schema.Struct({
    type: Schema.Literal("message_delta"),
    delta: Schema.Struct({ stop_reason: Schema.NullOr(Schema.String) }),
    usage: Schema.optional(Schema.Unknown)
  }),
  Schema.Struct({ type: Schema.Literals(["message_stop", "ping"]) }),
  Schema.Struct({ type: Schema.Literal("error"), error: Schema.Unknown }),
  Schema.Struct({
    type: otherThan([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
      "ping",
      "error"
    ])
  })
])

interface Block {
  readonly type: string
  /** A `tool_use` block's `id` and `name`, so errors about the block can name its call. */
  readonly id: string | undefined
  readonly name: string | undefined
  open: boolean
  /** A non-empty `partial_json` piece arrived. */
  hasInput: boolean
  /** The start `input` as JSON when it is not `{}`, until it is handed over. */
  startInput: string | undefined
}

const usageOf = (u: unknown): StreamEvent.Usage | undefined =>
  Predicate.isObject(u)
    ? usage({
      inputTokens: u.input_tokens,
      outputTokens: u.output_tokens,
      cachedInputTokens: u.cache_read_input_tokens
    })
    : undefined

/**
 * The start `input` as arguments text when it is anything but `{}` or absent (which mean `{}`);
 * `null` when it cannot be written as JSON (nested too deeply).
 */
const startInputText = (input: unknown): string | undefined | null => {
  if (input === undefined || input === null) return undefined
  if (Predicate.isObject(input) && Object.keys(input).length === 0) return undefined
  return writeJson(input) ?? null
}

/** Where a protocol error about a block is: its index and, for a `tool_use` block, its call. */
const where = (index: number, block: Block) => ({ index, id: block.id, name: block.name })

/** The integer `index` of a block event, or `undefined` after failing the event (`MalformedStreamEvent`). */
const blockIndex = (event: Json, data: string, parts: EventParts): number | undefined => {
  if (isIndex(event.index)) return event.index
  parts.fail(malformed(`\`${String(event.type)}\` needs an integer \`index\` >= 0`, data))
  return undefined
}

/**
 * A fresh decoder for one Messages stream.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decoder = (options?: Options): Decoder.Decoder => {
  const policy = finishPolicy(options?.finishProfile ?? FinishProfile.defaultProfile)
  const blocks = new Map<number, Block>()
  let messageId: string | undefined
  let contentStarted = false
  let stopped = false
  /** Tool blocks whose start `input` may still need handing over. */
  let pendingInputs = 0
  const wireDelta = new WireDelta()

  /** Hands over a tool block's non-`{}` start `input` when it got no `partial_json`, once. */
  const handOver = (parts: EventParts, index: number, block: Block) => {
    if (block.startInput === undefined) return
    if (!block.hasInput) parts.addToolCall({ index, arguments: block.startInput })
    block.startInput = undefined
  }

  /** At the finish: hands over the start `input` of tool blocks that never stopped. */
  const handOverAll = (parts: EventParts) => {
    if (pendingInputs === 0) return
    for (const [index, block] of blocks) handOver(parts, index, block)
    pendingInputs = 0
  }

  const onMessageStart = (event: Json, data: string, parts: EventParts) => {
    const message = event.message
    if (!Predicate.isObject(message) || typeof message.id !== "string") {
      return parts.fail(malformed("`message_start` needs a `message` with a string `id`", data))
    }
    if (messageId === undefined) {
      messageId = message.id
      parts.usage = usageOf(message.usage)
      return
    }
    if (!contentStarted && message.id === messageId) return
    parts.fail(protocol(
      contentStarted
        ? "a second message_start after content started"
        : `a second message_start with another id (${message.id}, open: ${messageId})`
    ))
  }

  const onBlockStart = (event: Json, data: string, parts: EventParts) => {
    const index = blockIndex(event, data, parts)
    if (index === undefined) return
    const block = event.content_block
    if (!Predicate.isObject(block) || typeof block.type !== "string") {
      return parts.fail(malformed("`content_block_start` needs a `content_block` object with a string `type`", data))
    }
    const isTool = block.type === "tool_use"
    if (
      isTool && (typeof block.id !== "string" || block.id === "" || typeof block.name !== "string" || block.name === "")
    ) {
      return parts.fail(malformed("a `tool_use` block needs a non-empty string `id` and `name`", data))
    }
    if (block.type === "text" && block.text !== undefined && typeof block.text !== "string") {
      return parts.fail(malformed("a text block's `text` is not a string", data))
    }
    contentStarted = true
    const existing = blocks.get(index)
    if (existing !== undefined) {
      return parts.fail(protocol(`a second content_block_start for index ${index}`, where(index, existing)))
    }
    const startInput = isTool ? startInputText(block.input) : undefined
    if (startInput === null) {
      return parts.fail(malformed("a `tool_use` block's `input` nests too deeply to be written as JSON", data))
    }
    const entry: Block = {
      type: block.type,
      id: isTool ? block.id as string : undefined,
      name: isTool ? block.name as string : undefined,
      open: true,
      hasInput: false,
      startInput
    }
    blocks.set(index, entry)
    if (isTool) {
      if (startInput !== undefined) pendingInputs++
      parts.addToolCall({ index, id: block.id as string, name: block.name as string })
    } else if (block.type === "text" && typeof block.text === "string") {
      parts.addText(block.text)
    }
  }

  const onBlockDelta = (event: Json, data: string, parts: EventParts) => {
    const index = blockIndex(event, data, parts)
    if (index === undefined) return
    const delta = event.delta
    if (!Predicate.isObject(delta) || typeof delta.type !== "string") {
      return parts.fail(malformed("`content_block_delta` needs a `delta` object with a string `type`", data))
    }
    const isText = delta.type === "text_delta"
    const isInput = delta.type === "input_json_delta"
    if (isText && typeof delta.text !== "string") {
      return parts.fail(malformed("a `text_delta` needs a string `text`", data))
    }
    if (isInput && typeof delta.partial_json !== "string") {
      return parts.fail(malformed("an `input_json_delta` needs a string `partial_json`", data))
    }
    onDelta(
      index,
      isText ? TEXT_DELTA : isInput ? INPUT_DELTA : OTHER_DELTA,
      isText ? delta.text as string : isInput ? delta.partial_json as string : "",
      parts
    )
  }

  /** A well-formed delta for block `index`: its text or `partial_json` (`value`), or a delta of another type. */
  const onDelta = (index: number, kind: DeltaKind, value: string, parts: EventParts) => {
    const block = blocks.get(index)
    if (block === undefined) {
      return parts.fail(protocol(`a delta for block ${index}, which was never started`, { index }))
    }
    if (!block.open) {
      return parts.fail(protocol(`a delta for block ${index} after its content_block_stop`, where(index, block)))
    }
    if (kind === TEXT_DELTA) {
      if (block.type !== "text") {
        return parts.fail(
          protocol(`a text_delta on block ${index}, which is a ${block.type} block`, where(index, block))
        )
      }
      parts.addText(value)
    } else if (kind === INPUT_DELTA) {
      if (block.type !== "tool_use" && block.type !== "server_tool_use") {
        return parts.fail(protocol(`an input_json_delta on block ${index}, which is a ${block.type} block`, { index }))
      }
      if (block.type === "tool_use") {
        if (value !== "") block.hasInput = true
        parts.addToolCall({ index, argumentsDelta: value })
      }
    }
  }

  const onBlockStop = (event: Json, data: string, parts: EventParts) => {
    const index = blockIndex(event, data, parts)
    if (index === undefined) return
    const block = blocks.get(index)
    if (block === undefined) {
      return parts.fail(protocol(`content_block_stop for block ${index}, which was never started`, { index }))
    }
    handOver(parts, index, block)
    block.open = false
  }

  const onMessageDelta = (event: Json, data: string, parts: EventParts) => {
    const delta = event.delta
    if (!Predicate.isObject(delta) || !(delta.stop_reason === null || typeof delta.stop_reason === "string")) {
      return parts.fail(
        malformed("`message_delta` needs a `delta` with a `stop_reason` that is a string or null", data)
      )
    }
    const reason = delta.stop_reason
    if (reason !== null && reason !== "") {
      handOverAll(parts)
      parts.finish = { reason, class: FinishReason.classify(policy, reason), terminal: false }
    }
    parts.usage = usageOf(event.usage)
  }

  /**
   * The parts of an event of `type`, failed already when it opens the body before `message_start`:
   * it is read to its end like any failing event (§2), so its text and stop reason still count.
   */
  const partsOf = (type: string): EventParts => {
    const parts = new EventParts()
    if (messageId === undefined && type !== "message_start" && type !== "error") {
      parts.fail(protocol(`the body opens with ${type}, not message_start`))
    }
    return parts
  }

  return {
    onEvent({ data }) {
      // Nearly every event is a delta in the API's own spelling: it is read without building its object.
      const kind = stopped ? NOT_WIRE_FORM : wireDelta.read(data)
      if (kind !== NOT_WIRE_FORM) {
        const parts = partsOf("content_block_delta")
        onDelta(wireDelta.index, kind, wireDelta.value, parts)
        return parts.toEvent()
      }
      // Gateways append OpenAI Chat's sentinel to Anthropic bodies: here it is not an event.
      if (data === "[DONE]") return undefined
      const event = parseObject(data)
      if (stopped) {
        // §5: message_stop ended the body; only pings may follow, and nothing else is read.
        return !isFailure(event) && event.type === "ping" ? undefined : { failure: afterStop() }
      }
      if (isFailure(event)) return { failure: event }
      const type = event.type
      if (typeof type !== "string") {
        if (event.error !== undefined && event.error !== null) {
          return { failure: providerError(event.error, ["type", "code"]) }
        }
        return { failure: malformed("the event has no string `type`", data) }
      }
      if (type === "ping") return undefined
      const parts = partsOf(type)
      // Nearly every event is a delta: its case comes first (a switch compares the cases in order).
      switch (type) {
        case "content_block_delta":
          onBlockDelta(event, data, parts)
          break
        case "message_start":
          onMessageStart(event, data, parts)
          break
        case "content_block_start":
          onBlockStart(event, data, parts)
          break
        case "content_block_stop":
          onBlockStop(event, data, parts)
          break
        case "message_delta":
          onMessageDelta(event, data, parts)
          break
        case "message_stop":
          handOverAll(parts)
          stopped = true
          parts.end = true
          parts.finish = { reason: null, class: "unexpected", terminal: true }
          break
        case "error":
          parts.fail(providerError(event.error ?? event, ["type", "code"]))
          break
      }
      return parts.toEvent()
    }
  }
}

/** The failure of any event but `ping` after `message_stop` (§2, one body, one lifecycle). */
const afterStop = () => protocol("an event arrived after message_stop, which ends the body")

/**
 * Decodes a Messages API response body into core events.
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
 * Decodes a Messages API response body read from a web `ReadableStream` (`source.evaluate`; a rejected read fails with
 * `source.onError` of it) into core events: the events and failures of {@link decode}. Piped
 * straight into `Assembler.assemble()` or `Assembler.stream()`, the body's reader is driven with
 * no `Stream` in between (`Decoder.decodeReadableStream`).
 *
 * ```ts
 * const turn = Anthropic.decodeReadableStream({ evaluate: () => response.body!, onError: (cause) => new BodyError({ cause }) })
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
