/**
 * The typed errors of stream assembly. Every failure the assembler finds in a streamed turn is one
 * of these tagged errors, in Effect's error channel; none is thrown. (Getting the stream can fail
 * too: those errors are `ModelStreamError`'s; validating the released calls against the tools is
 * `ToolCall`'s.) Each carries what a caller needs to act on
 * it: the tool-call index, provider id and tool name where one is involved, the raw finish reason
 * that was read (`null` when none was), and at most a bounded excerpt (≤ 200 characters) of the
 * offending text, never the whole payload.
 *
 * The meaning of each tag on provider streams is fixed by `test/fixtures/README.md` (table "error
 * tag / when" and "Failures, precedence and the verdict").
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** Longest excerpt an error carries, in UTF-16 code units. */
const maxExcerpt = 200

/**
 * A bounded excerpt of `text`: the text itself when it is at most 200 characters, otherwise its
 * first 120 and last 79 characters around an ellipsis (the end of a broken JSON value is usually
 * where it broke).
 *
 * @since 0.1.0
 * @category excerpts
 */
export const excerpt = (text: string): string =>
  text.length <= maxExcerpt ? text : `${text.slice(0, 120)}…${text.slice(text.length - 79)}`

const FinishReasonField = Schema.NullOr(Schema.String)

/**
 * The body ended without the provider's finish signal (no `finish_reason`, no `message_stop`,
 * no terminal `response.*` event, no `finishReason` or `blockReason`). `[DONE]` is not a finish.
 * Typical cause: a dropped connection or a proxy that closed the response early.
 *
 * @since 0.1.0
 * @category errors
 */
export class IncompleteStream extends Schema.TaggedError<IncompleteStream>()("IncompleteStream", {
  finishReason: FinishReasonField,
  /** Tool calls that had started and were withheld. */
  pendingToolCalls: Schema.Int
}) {
  override get message(): string {
    return `stream ended without a finish signal; ${this.pendingToolCalls} tool call(s) withheld`
  }
}

/**
 * The finish signal says the output token limit was hit (`length`, `max_tokens`, `MAX_TOKENS`,
 * Responses `incomplete` / `max_output_tokens`). Tool arguments may be cut; nothing is released.
 *
 * @since 0.1.0
 * @category errors
 */
export class TokenLimitExceeded extends Schema.TaggedError<TokenLimitExceeded>()("TokenLimitExceeded", {
  finishReason: FinishReasonField,
  pendingToolCalls: Schema.Int
}) {
  override get message(): string {
    return `the model hit its output token limit (finish reason ${
      JSON.stringify(this.finishReason === null ? null : excerpt(this.finishReason))
    }); ${this.pendingToolCalls} tool call(s) withheld`
  }
}

/**
 * Any other non-success finish: `content_filter`, `refusal`, `pause_turn`, `SAFETY`,
 * `MALFORMED_FUNCTION_CALL`, a blocked prompt, or a finish signal without a reason
 * (`finishClass: "unexpected"`); or a reason that ends a text turn arriving with tool calls
 * (`finishClass: "success_no_calls"`: OpenAI Chat `stop`, Anthropic `end_turn` under the strict
 * finish profile, the shape of a finish a gateway made up after the upstream was cut).
 *
 * @since 0.1.0
 * @category errors
 */
export class UnexpectedFinishReason extends Schema.TaggedError<UnexpectedFinishReason>()("UnexpectedFinishReason", {
  finishReason: FinishReasonField,
  /** What the reason means: not a success at all, or a success that releases no tool calls. */
  finishClass: Schema.Literals(["unexpected", "success_no_calls"]),
  /** Tool calls that had started and were withheld. */
  pendingToolCalls: Schema.Int
}) {
  override get message(): string {
    if (this.finishClass === "success_no_calls") {
      return `the stream finished with ${
        JSON.stringify(this.finishReason === null ? null : excerpt(this.finishReason))
      }, which ends a turn without tool calls, but ${this.pendingToolCalls} tool call(s) arrived; none released`
    }
    return this.finishReason === null
      ? "the stream finished without a finish reason"
      : `the stream finished with ${JSON.stringify(excerpt(this.finishReason))}, which is not a success`
  }
}

/**
 * A call's accumulated arguments are not exactly one JSON object at a success finish: invalid
 * JSON, a JSON value that is not an object, or an object followed by anything but whitespace.
 * Nothing is repaired.
 *
 * @since 0.1.0
 * @category errors
 */
export class MalformedToolArguments extends Schema.TaggedError<MalformedToolArguments>()("MalformedToolArguments", {
  finishReason: FinishReasonField,
  index: Schema.Int,
  id: Schema.NullOr(Schema.String),
  toolName: Schema.String,
  /** Why the text is not one JSON object (the parser's message, or "not an object"). */
  reason: Schema.String,
  /** A bounded excerpt of the arguments text. */
  excerpt: Schema.String
}) {
  override get message(): string {
    return `tool call ${this.index} (${this.toolName}) has malformed arguments: ${this.reason}`
  }
}

/**
 * Deltas that cannot be assembled consistently: a delta for a call that was never started, one
 * call given two different ids or names, tool data after the finish, a spliced second response.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolCallProtocolError extends Schema.TaggedError<ToolCallProtocolError>()("ToolCallProtocolError", {
  finishReason: FinishReasonField,
  index: Schema.NullOr(Schema.Int),
  id: Schema.NullOr(Schema.String),
  toolName: Schema.NullOr(Schema.String),
  /** What was inconsistent, in one sentence. */
  reason: Schema.String
}) {
  override get message(): string {
    return `tool-call protocol error${this.index === null ? "" : ` at index ${this.index}`}: ${this.reason}`
  }
}

/**
 * The provider reported an error inside the stream (an `error` chunk or event,
 * `response.failed`, Gemini's trailing `{"error": …}` body).
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderStreamError extends Schema.TaggedError<ProviderStreamError>()("ProviderStreamError", {
  finishReason: FinishReasonField,
  /** The provider's error type or code (`overloaded_error`, `503`, `server_error`), if any. */
  code: Schema.NullOr(Schema.String),
  /** The provider's own message, bounded. */
  providerMessage: Schema.String
}) {
  override get message(): string {
    return `the provider reported an error in the stream${
      this.code === null ? "" : ` (${this.code})`
    }: ${this.providerMessage}`
  }
}

/**
 * A data payload that is not JSON or not the provider's event shape, or an SSE event larger than
 * the decoder's limit.
 *
 * @since 0.1.0
 * @category errors
 */
export class MalformedStreamEvent extends Schema.TaggedError<MalformedStreamEvent>()("MalformedStreamEvent", {
  finishReason: FinishReasonField,
  reason: Schema.String,
  /** A bounded excerpt of the payload. */
  excerpt: Schema.String
}) {
  override get message(): string {
    return `malformed stream event: ${this.reason}`
  }
}

/**
 * A call's arguments grew past the configured limit (default 1 MiB). Raised as soon as the limit
 * is crossed, before the rest of the stream is read.
 *
 * @since 0.1.0
 * @category errors
 */
export class ArgumentsTooLarge extends Schema.TaggedError<ArgumentsTooLarge>()("ArgumentsTooLarge", {
  finishReason: FinishReasonField,
  index: Schema.Int,
  id: Schema.NullOr(Schema.String),
  toolName: Schema.String,
  /** The limit, in UTF-8 bytes. */
  maxBytes: Schema.Int
}) {
  override get message(): string {
    return `tool call ${this.index} (${this.toolName}) arguments exceed ${this.maxBytes} bytes`
  }
}

/**
 * A failure that ends assembly at the event where it is found (`test/fixtures/README.md` §2:
 * "Stream-level failures"). Adapters report these inside a `StreamEvent`.
 *
 * @since 0.1.0
 * @category models
 */
export type StreamFailure = ProviderStreamError | ToolCallProtocolError | MalformedStreamEvent

/**
 * Schema of {@link StreamFailure}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamFailure = Schema.Union([ProviderStreamError, ToolCallProtocolError, MalformedStreamEvent])

/**
 * Everything assembling one streamed turn can fail with.
 *
 * @since 0.1.0
 * @category models
 */
export type AssemblyError =
  | StreamFailure
  | ArgumentsTooLarge
  | IncompleteStream
  | TokenLimitExceeded
  | UnexpectedFinishReason
  | MalformedToolArguments

/**
 * Schema of {@link AssemblyError}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AssemblyError = Schema.Union([
  ProviderStreamError,
  ToolCallProtocolError,
  MalformedStreamEvent,
  ArgumentsTooLarge,
  IncompleteStream,
  TokenLimitExceeded,
  UnexpectedFinishReason,
  MalformedToolArguments
])

/**
 * The same failure with the finish reason that was read by the time assembly ended. A stream
 * failure is reported at the end of the event that contains it, and that event's finish reason
 * still counts (`test/fixtures/README.md` §2).
 *
 * @since 0.1.0
 * @category combinators
 */
export const withFinishReason = <F extends StreamFailure | ArgumentsTooLarge>(
  failure: F,
  finishReason: string | null
): F => {
  if (failure.finishReason === finishReason) return failure
  const Ctor = failure.constructor as new(fields: object) => F
  return new Ctor({ ...failure, finishReason })
}

/**
 * Whether a value is one of the {@link AssemblyError}s.
 *
 * @since 0.1.0
 * @category guards
 */
export const isAssemblyError: (u: unknown) => u is AssemblyError = Schema.is(AssemblyError)
