/**
 * The normalized stream event: what every provider adapter turns its wire format into, and the
 * only input of the assembler. One provider event (one SSE `data:` payload) becomes at most one
 * `StreamEvent`, so the rule "the first event that contains a failure ends assembly, but that
 * event is still read to its end" (`test/fixtures/README.md` §2) holds by construction.
 *
 * The assembler reads an event's parts in this order: `text`, `toolCalls` (in array order),
 * `failure`, `finish`, `usage`. An adapter that finds a failure part-way through a provider event
 * leaves out the tool-call deltas that come after it in the provider's reading order and puts the
 * failure in `failure`.
 *
 * The assembler knows nothing of providers and the adapters know nothing of assembly.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { StreamFailure } from "./AssemblyError.js"
import { FinishClass } from "./FinishReason.js"

/**
 * One fragment of a tool call, keyed the way OpenAI Chat Completions keys them (the most general
 * form; other providers map onto it):
 *
 * - `index`: the call's key. Indices are keys, not positions: sparse, any start, any order.
 *   Absent when the provider sends none; then `id` decides (see `Assembler`).
 * - `id`, `name`, `type`: identity. Absent, `""` and repeats of the same value are no-ops; a
 *   different `name` or `type` for the same call is a `ToolCallProtocolError`.
 * - `argumentsDelta`: the next slice of the call's JSON arguments text, appended as is.
 * - `arguments`: the complete arguments text the provider reports when the call ends
 *   (OpenAI Responses `.done`). It must equal what was accumulated, or it is taken when nothing
 *   was.
 * - `argumentsBytes`: for arguments an adapter builds as a value rather than as text (Vertex AI
 *   streamed `partialArgs`), a lower bound, in UTF-8 bytes, of their JSON text so far. It adds
 *   nothing to the arguments; it lets the size limit fail the call as soon as it is crossed
 *   instead of when the text is finally handed over.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolCallDelta {
  readonly index?: number | undefined
  readonly id?: string | undefined
  readonly name?: string | undefined
  readonly type?: string | undefined
  readonly argumentsDelta?: string | undefined
  readonly arguments?: string | undefined
  readonly argumentsBytes?: number | undefined
}

/**
 * Schema of {@link ToolCallDelta}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolCallDelta: Schema.Codec<ToolCallDelta> = Schema.Struct({
  index: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  id: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  type: Schema.optional(Schema.String),
  argumentsDelta: Schema.optional(Schema.String),
  arguments: Schema.optional(Schema.String),
  argumentsBytes: Schema.optional(Schema.Number)
})

/**
 * A finish signal or finish reason.
 *
 * - `reason`: the raw reason as the provider sent it (`null` when a finish signal came without
 *   one, like an Anthropic `message_stop` with no `stop_reason`).
 * - `class`: what the reason means under the provider's `FinishReason` policy.
 * - `terminal`: whether this event ends the turn. Anthropic sends the reason in `message_delta`
 *   (`terminal: false`) and ends with `message_stop` (`terminal: true`); the other providers do
 *   both at once.
 *
 * Only the first non-null reason counts; later ones are ignored.
 *
 * @since 0.1.0
 * @category models
 */
export interface Finish {
  readonly reason: string | null
  readonly class: FinishClass
  readonly terminal: boolean
}

/**
 * Schema of {@link Finish}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Finish: Schema.Codec<Finish> = Schema.Struct({
  reason: Schema.NullOr(Schema.String),
  class: FinishClass,
  terminal: Schema.Boolean
})

/**
 * Token usage as the provider reports it, in tokens. Fields a provider does not report are
 * absent. Later reports replace earlier ones field by field (Anthropic's `message_delta` usage is
 * cumulative; OpenAI sends usage once, after the finish).
 *
 * @since 0.1.0
 * @category models
 */
export interface Usage {
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
  readonly totalTokens?: number | undefined
  readonly cachedInputTokens?: number | undefined
}

/**
 * Schema of {@link Usage}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Usage: Schema.Codec<Usage> = Schema.Struct({
  inputTokens: Schema.optional(Schema.Number),
  outputTokens: Schema.optional(Schema.Number),
  totalTokens: Schema.optional(Schema.Number),
  cachedInputTokens: Schema.optional(Schema.Number)
})

/**
 * One normalized provider event. Every field is optional; an event with none (a lifecycle event,
 * a ping) is valid and changes nothing.
 *
 * @since 0.1.0
 * @category models
 */
export interface StreamEvent {
  /** Assistant text, forwarded to the caller at once. Never parsed into tool calls. */
  readonly text?: string | undefined
  /** Tool-call fragments, applied in array order. A non-empty array after the finish is a `ToolCallProtocolError`. */
  readonly toolCalls?: ReadonlyArray<ToolCallDelta> | undefined
  /** A stream-level failure found in this event; assembly ends after this event. */
  readonly failure?: StreamFailure | undefined
  readonly finish?: Finish | undefined
  readonly usage?: Usage | undefined
  /**
   * This event ends the provider's stream: OpenAI Chat `data: [DONE]`, Anthropic `message_stop`,
   * the terminal Responses event, Gemini's finish chunk. Everything the turn needs has arrived,
   * so a reader of a live connection stops reading after the read that carried it (what that
   * read holds is still decoded and checked); a finite body is read to its end. What may still
   * follow it in a body is each adapter's rule (`test/fixtures/README.md` §2, "One body, one
   * lifecycle"). It is not a finish: the assembler reads finishes from `finish`.
   */
  readonly end?: boolean | undefined
}

/**
 * Schema of {@link StreamEvent}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamEvent: Schema.Codec<StreamEvent, unknown> = Schema.Struct({
  text: Schema.optional(Schema.String),
  toolCalls: Schema.optional(Schema.Array(ToolCallDelta)),
  failure: Schema.optional(StreamFailure),
  finish: Schema.optional(Finish),
  usage: Schema.optional(Usage),
  end: Schema.optional(Schema.Boolean)
})
