/**
 * The typed errors of the HTTP transport: what can go wrong between sending a provider request
 * and the last byte of its streamed response, beside what assembly itself finds
 * (`@toolgate/core` `AssemblyError`). None carries the request, its headers or the API key: an
 * error is safe to log as it is.
 *
 * - `ProviderHttpError`: the provider answered with a non-2xx status before any stream event.
 * - `TransportError`: no response head arrived (`connect`), or the body was cut (`body`).
 * - `StreamTimeout` and `StreamAborted` (from core): a time budget ran out, or the caller
 *   aborted through an `AbortSignal`.
 * - `NotAnEventStream` (from `Decoder`): the response is not an event stream (an
 *   `application/json` content type, or a body without one SSE line).
 *
 * @since 0.1.0
 */
import { AssemblyError } from "@toolgate/core"
import { Schema } from "effect"
import { NotAnEventStream } from "./Decoder.js"

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
 * Everything a provider stream can fail with before assembly sees its events.
 *
 * @since 0.1.0
 * @category models
 */
export type TransportFailure =
  | ProviderHttpError
  | TransportError
  | AssemblyError.StreamTimeout
  | AssemblyError.StreamAborted
  | NotAnEventStream

/**
 * Schema of {@link TransportFailure}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TransportFailure = Schema.Union([
  ProviderHttpError,
  TransportError,
  AssemblyError.StreamTimeout,
  AssemblyError.StreamAborted,
  NotAnEventStream
])

/**
 * Whether a value is one of the {@link TransportFailure}s.
 *
 * @since 0.1.0
 * @category guards
 */
export const isTransportFailure: (u: unknown) => u is TransportFailure = Schema.is(TransportFailure)
