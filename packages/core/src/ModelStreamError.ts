/**
 * The failures of asking a model for a stream: the error contract of the `ModelStream` interface.
 * An implementation (the HTTP one in `@toolgate/adapters`, a queue, a replay) raises these in the
 * stream's error channel; the pipeline in `@toolgate/runtime` names and classifies them (which are
 * retried) without knowing the implementation. None carries a request, its headers or an API key:
 * an error is safe to log as it is.
 *
 * - `ProviderHttpError`: the provider answered with a non-2xx status before any stream event.
 * - `TransportError`: no response head arrived (`connect`), or the body was cut (`body`).
 * - `StreamTimeout`: a time budget of the stream ran out before its end event.
 * - `StreamAborted`: the caller aborted through an `AbortSignal`.
 * - `NotAnEventStream`: the answer is not an event stream (a non-streaming JSON body, any other
 *   text).
 * - `UnsupportedRequest`: the request cannot be written in the provider's format (nothing was
 *   sent).
 * - The stream-level failures of assembly (`AssemblyError.StreamFailure`: `ProviderStreamError`,
 *   `ToolCallProtocolError`, `MalformedStreamEvent`): a decoder reports them inside an event
 *   (`StreamEvent.failure`), and an implementation that learns of one outside the body (an SDK's
 *   error) may fail the stream with it instead.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { MalformedStreamEvent, ProviderStreamError, ToolCallProtocolError } from "./AssemblyError.js"

const FinishReasonField = Schema.NullOr(Schema.String)

/**
 * The provider answered with a status outside 2xx, before the stream started: a rate limit
 * (429), a server error (500, 502, 503, 504, Anthropic's 529 `overloaded_error`), a bad request
 * or bad key (400, 401, 403, 404).
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderHttpError extends Schema.TaggedError<ProviderHttpError>()("ProviderHttpError", {
  /** The HTTP status code. */
  status: Schema.Int,
  /**
   * How long the provider asks the client to wait, in milliseconds, from `retry-after-ms`
   * (OpenAI's header) or `Retry-After` (RFC 9110 §10.2.3: delay-seconds or an HTTP-date, which
   * is read against the Clock and floored at 0); `null` when absent or unreadable.
   */
  retryAfterMs: Schema.NullOr(Schema.Number),
  /**
   * The provider's error code or type from the JSON error body: OpenAI `error.code` (else
   * `error.type`), Anthropic `error.type`, Gemini `error.status`; `null` when the body has none.
   */
  code: Schema.NullOr(Schema.String),
  /**
   * The provider's own message (`error.message`), or the start of the body when it is not a
   * known error shape; bounded (≤ 200 characters), with the API key masked out.
   */
  providerMessage: Schema.String
}) {
  override get message(): string {
    const code = this.code === null ? "" : ` (${this.code})`
    const wait = this.retryAfterMs === null ? "" : `, retry after ${this.retryAfterMs} ms`
    const said = this.providerMessage === "" ? "" : `: ${this.providerMessage}`
    return `the provider answered HTTP ${this.status}${code}${wait}${said}`
  }
}

/**
 * The connection failed. `connect`: no response head arrived (refused, reset or closed before
 * the status line, DNS or TLS failure, an invalid URL). `body`: the response had started and
 * its body was cut before its end (a reset, or a close before the last chunk of a chunked body).
 *
 * @since 0.1.0
 * @category errors
 */
export class TransportError extends Schema.TaggedError<TransportError>()("TransportError", {
  phase: Schema.Literals(["connect", "body"]),
  /** What the HTTP client reported (error code and message), bounded, with the API key masked. */
  reason: Schema.String
}) {
  override get message(): string {
    return this.phase === "connect"
      ? `no response from the provider: ${this.reason}`
      : `the provider's response body was cut: ${this.reason}`
  }
}

/**
 * A time budget of the stream ran out: `first_byte` (no response byte in time), `idle` (no byte
 * between two reads in time) or `total` (the whole stream's deadline).
 *
 * @since 0.1.0
 * @category errors
 */
export class StreamTimeout extends Schema.TaggedError<StreamTimeout>()("StreamTimeout", {
  finishReason: FinishReasonField,
  phase: Schema.Literals(["first_byte", "idle", "total"]),
  /** The budget that ran out, in milliseconds. */
  budgetMs: Schema.Number
}) {
  override get message(): string {
    return `stream timed out: no ${
      this.phase === "total" ? "finish" : this.phase === "idle" ? "byte" : "first byte"
    } within ${this.budgetMs} ms`
  }
}

/**
 * The caller aborted the stream (an interruption or an `AbortSignal`).
 *
 * @since 0.1.0
 * @category errors
 */
export class StreamAborted extends Schema.TaggedError<StreamAborted>()("StreamAborted", {
  finishReason: FinishReasonField,
  reason: Schema.String
}) {
  override get message(): string {
    return `stream aborted: ${this.reason}`
  }
}

/**
 * The body is not a server-sent event stream: none of its lines is an SSE line (a `data`, `event`,
 * `id` or `retry` field, or a `:` comment), or the HTTP response said so by its content type.
 * Typically a non-streaming response: a `chat.completion`, Responses, Messages or Gemini JSON body
 * (the request did not ask for a stream), or an HTML page from a proxy, or a file that is not a
 * capture. Not retried by the pipeline: asking again gets the same answer. Raised by the decoders
 * (`Decoder.decodeSse` in `@toolgate/adapters`) and by the HTTP transport.
 *
 * A body gets this verdict when it ends, or once it has passed the decoder's `maxEventSize` in
 * bytes without one SSE line (it is not read further; `found` then looks at its start only).
 * Not raised for an empty or blank body, nor for one cut inside its first line (`IncompleteStream`),
 * nor for Gemini's unframed `{"error": …}` body, which is a `ProviderStreamError`
 * (`test/fixtures/README.md` §1, "Gemini exception"). A body whose events are all comments is an
 * event stream.
 *
 * - `found`: `"json"` when the body's first and last non-blank characters are `{`…`}` or `[`…`]`,
 *   else `"text"`.
 * - `excerpt`: the start of the body, trimmed, at most 160 characters.
 * - `contentType`: the response's `content-type` when the HTTP transport decided from it, else
 *   `null`.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotAnEventStream extends Schema.TaggedError<NotAnEventStream>()("NotAnEventStream", {
  found: Schema.Literals(["json", "text"]),
  excerpt: Schema.String,
  contentType: Schema.NullOr(Schema.String)
}) {
  override get message(): string {
    const answered = this.contentType === null ? "" : `the response is ${this.contentType}: `
    const what = this.found === "json"
      ? "a JSON body, not an event stream; did the request set stream: true?"
      : "no server-sent events found (no data:, event:, id:, retry: or comment line); not an event stream"
    const start = this.excerpt.length <= 100 ? this.excerpt : `${this.excerpt.slice(0, 100)}…`
    return `${answered}${what} (the body starts ${JSON.stringify(start)})`
  }
}

/**
 * The request cannot be written in the provider's format: a part of the prompt its encoder does
 * not carry (a file, a tool approval, a provider-executed call), a history that does not pair up
 * (a tool result that answers no call, a call without a result), arguments a format that takes an
 * object cannot carry, or a strict tool whose schema cannot meet the provider's strict-mode rules.
 * Raised before anything is sent; not retried (the same request meets the same encoder).
 *
 * - `provider`: the wire format (`openai-chat`, `anthropic`, …).
 * - `reason`: what cannot be carried, and where (`message 2 (user): a file part`, `tool
 *   create_task in strict mode: #/properties/due is optional, …`).
 *
 * @since 0.1.0
 * @category errors
 */
export class UnsupportedRequest extends Schema.TaggedError<UnsupportedRequest>()("UnsupportedRequest", {
  provider: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `the ${this.provider} request cannot carry ${this.reason}`
  }
}

/**
 * The failures of getting the bytes of a stream, before its events are read: what an HTTP
 * transport raises.
 *
 * @since 0.1.0
 * @category models
 */
export type TransportFailure = ProviderHttpError | TransportError | StreamTimeout | StreamAborted | NotAnEventStream

/**
 * Schema of {@link TransportFailure}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TransportFailure = Schema.Union([
  ProviderHttpError,
  TransportError,
  StreamTimeout,
  StreamAborted,
  NotAnEventStream
])

/**
 * Whether a value is one of the {@link TransportFailure}s.
 *
 * @since 0.1.0
 * @category guards
 */
export const isTransportFailure: (u: unknown) => u is TransportFailure = Schema.is(TransportFailure)

/**
 * Everything a `ModelStream` may fail with: the {@link TransportFailure}s, a request its
 * encoder cannot write ({@link UnsupportedRequest}), and the stream-level failures of assembly
 * (see the module docs).
 *
 * @since 0.1.0
 * @category models
 */
export type ModelStreamError =
  | TransportFailure
  | UnsupportedRequest
  | ProviderStreamError
  | ToolCallProtocolError
  | MalformedStreamEvent

/**
 * Schema of {@link ModelStreamError}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModelStreamError = Schema.Union([
  ProviderHttpError,
  TransportError,
  StreamTimeout,
  StreamAborted,
  NotAnEventStream,
  UnsupportedRequest,
  ProviderStreamError,
  ToolCallProtocolError,
  MalformedStreamEvent
])

/**
 * Whether a value is one of the {@link ModelStreamError}s.
 *
 * @since 0.1.0
 * @category guards
 */
export const isModelStreamError: (u: unknown) => u is ModelStreamError = Schema.is(ModelStreamError)
