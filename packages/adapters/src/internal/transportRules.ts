/**
 * The HTTP transport's rules for a response, whichever layer opened it: reading a provider's error
 * body into a `ProviderHttpError` (code, message, `Retry-After`), recognising a JSON answer
 * (`NotAnEventStream`), the read budgets of a body before and after its end event, and the text of
 * every failure (the API key masked, then bounded). `HttpTransport` composes them.
 *
 * @internal
 */
import { AssemblyError, ModelStreamError } from "@toolgate/core"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as Predicate from "effect/Predicate"
import * as Pull from "effect/Pull"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as EventStreamProbe from "./eventStreamProbe.js"

/** A response head and its body, as every layer hands it to the shared budget and error rules. */
export interface Response {
  readonly status: number
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: Stream.Stream<Uint8Array, ModelStreamError.TransportError>
}

/** The most of an error body read into `ProviderHttpError.providerMessage`, in bytes. */
const maxErrorBodyBytes = 16 * 1024

/** A `StreamTimeout` of a phase and its budget. */
export const timeout = (phase: ModelStreamError.StreamTimeout["phase"], budgetMs: number) =>
  new ModelStreamError.StreamTimeout({ finishReason: null, phase, budgetMs })

/** Masks every occurrence of the key's value (keys shorter than 4 characters are not masked). */
export const masker = (apiKey: Redacted.Redacted<string> | undefined) => {
  const secret = apiKey === undefined ? "" : Redacted.value(apiKey)
  return secret.length < 4 ? (s: string) => s : (s: string) => s.split(secret).join("<redacted>")
}

/**
 * Masks the start of the key (4 characters or more) at the end of a text that was cut there: an
 * excerpt of a body's start can end inside the key.
 */
export const cutMasker = (apiKey: Redacted.Redacted<string> | undefined) => {
  const secret = apiKey === undefined ? "" : Redacted.value(apiKey)
  return (s: string) => {
    for (let k = Math.min(secret.length - 1, s.length); k >= 4; k--) {
      if (s.endsWith(secret.slice(0, k))) return `${s.slice(0, s.length - k)}<redacted>`
    }
    return s
  }
}

/**
 * The one place a failure's text is finished: masked for the key, then bounded. Failures are built
 * with their full text so that masking sees the whole key (bounding first could keep half of it).
 */
export const sanitize =
  (mask: (s: string) => string, maskCut: (s: string) => string) =>
  (failure: ModelStreamError.TransportFailure): ModelStreamError.TransportFailure => {
    const clean = (s: string) => AssemblyError.excerpt(mask(s))
    switch (failure._tag) {
      case "TransportError":
        return new ModelStreamError.TransportError({ phase: failure.phase, reason: clean(failure.reason) })
      case "ProviderHttpError":
        return new ModelStreamError.ProviderHttpError({ ...failure, providerMessage: clean(failure.providerMessage) })
      case "StreamAborted":
        return new ModelStreamError.StreamAborted({ finishReason: null, reason: clean(failure.reason) })
      case "StreamTimeout":
        return failure
      case "NotAnEventStream":
        return new ModelStreamError.NotAnEventStream({
          found: failure.found,
          excerpt: maskCut(EventStreamProbe.excerptOf(mask(failure.excerpt))),
          contentType: failure.contentType === null ? null : clean(failure.contentType)
        })
    }
  }

/** An error and its causes as one line: `code: message (code: message)`, at most three deep. */
export const describe = (error: unknown): string => {
  const parts: Array<string> = []
  let current = error
  for (let depth = 0; depth < 3 && current !== undefined && current !== null; depth++) {
    if (Predicate.isObject(current)) {
      const code = Predicate.isString(current.code) ? `${current.code}: ` : ""
      const message = Predicate.isString(current.message) && current.message !== "" ? current.message : undefined
      if (message !== undefined || code !== "") parts.push(`${code}${message ?? ""}`.replace(/: $/, ""))
      current = current.cause
    } else {
      parts.push(String(current))
      break
    }
  }
  const [head, ...rest] = parts.filter((p, i) => parts.indexOf(p) === i)
  return head === undefined ? "unknown error" : rest.length === 0 ? head : `${head} (${rest.join("; ")})`
}

export const abortReason = (signal: AbortSignal): string => {
  const reason: unknown = signal.reason
  if (reason === undefined) return "the AbortSignal was aborted"
  return Predicate.isString(reason) ? reason : describe(reason)
}

/** Fails with `StreamAborted` when the signal fires (at once when it already has). */
export const awaitAbort = (signal: AbortSignal) =>
  Effect.callback<never, ModelStreamError.StreamAborted>((resume) => {
    const onAbort = () =>
      resume(Effect.fail(new ModelStreamError.StreamAborted({ finishReason: null, reason: abortReason(signal) })))
    if (signal.aborted) {
      onAbort()
      return
    }
    signal.addEventListener("abort", onAbort, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", onAbort))
  })

/**
 * Milliseconds to wait before a retry, from `retry-after-ms` (OpenAI's header: milliseconds,
 * may be fractional) or `Retry-After` (RFC 9110 §10.2.3: delay-seconds, or an HTTP-date read
 * against `now` and floored at 0); `null` when neither is present and readable.
 */
export const retryAfterMs = (headers: Readonly<Record<string, string | undefined>>, now: number): number | null => {
  const ms = headers["retry-after-ms"]?.trim()
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Number(ms)
  const value = headers["retry-after"]?.trim()
  if (value === undefined || value === "") return null
  if (/^\d+$/.test(value)) return Number(value) * 1000
  // An HTTP-date always names its day or month; `Date.parse` would take "-3" for a year.
  const date = /[A-Za-z]/.test(value) ? Date.parse(value) : Number.NaN
  return Number.isNaN(date) ? null : Math.max(0, date - now)
}

/**
 * The code and message of a provider's JSON error body: `{"error": {...}}` (OpenAI, Anthropic,
 * Gemini, most compatible servers), `[{"error": {...}}]` (Gemini without `alt=sse`),
 * `{"error": "text"}` (Ollama) or a top-level `{"message", "type"|"code"}` (vLLM).
 */
export const readErrorBody = (text: string): { readonly code: string | null; readonly message: string | null } => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return { code: null, message: null }
  }
  if (Array.isArray(json)) json = json[0]
  if (!Predicate.isObject(json)) return { code: null, message: null }
  if (Predicate.isString(json.error)) return { code: null, message: json.error }
  const error = Predicate.isObject(json.error) ? json.error : json
  const code = [error.code, error.status, error.type].find(Predicate.isString) ?? null
  const message = Predicate.isString(error.message) ? error.message : null
  return { code, message }
}

/** Reads at most `maxErrorBodyBytes` of an error body within `ms`, keeping what arrived on a failure. */
export const readExcerpt = (body: Stream.Stream<Uint8Array, ModelStreamError.TransportError>, ms: number) =>
  Effect.suspend(() => {
    const chunks: Array<Uint8Array> = []
    let size = 0
    const read = body.pipe(
      Stream.runForEachWhile((chunk) =>
        Effect.sync(() => {
          chunks.push(chunk)
          size += chunk.length
          return size < maxErrorBodyBytes
        })
      ),
      Effect.ignore
    )
    return (Number.isFinite(ms) ? Effect.timeoutOption(read, Duration.millis(ms)) : read).pipe(
      Effect.map(() => {
        const bytes = new Uint8Array(Math.min(size, maxErrorBodyBytes))
        let at = 0
        for (const chunk of chunks) {
          if (at >= bytes.length) break
          const part = chunk.subarray(0, bytes.length - at)
          bytes.set(part, at)
          at += part.length
        }
        return new TextDecoder().decode(bytes)
      })
    )
  })

export const httpError = (response: Response, idleMs: number) =>
  Effect.gen(function*() {
    const text = yield* readExcerpt(response.body, idleMs)
    const now = yield* Clock.currentTimeMillis
    const { code, message } = readErrorBody(text)
    return yield* new ModelStreamError.ProviderHttpError({
      status: response.status,
      retryAfterMs: retryAfterMs(response.headers, now),
      code,
      providerMessage: (message ?? text).trim()
    })
  })

/**
 * Whether a `content-type` names JSON: `application/json`, a structured `…+json` type
 * (`application/problem+json`), or newline-delimited JSON (RFC 6838 media types, case-insensitive,
 * parameters ignored).
 */
export const isJsonMediaType = (contentType: string): boolean => {
  const type = contentType.split(";")[0]!.trim().toLowerCase()
  return type === "application/json" || type.endsWith("+json") || type === "application/x-ndjson" ||
    type === "application/ndjson" || type === "application/jsonl"
}

/** A 2xx answer labelled JSON: `NotAnEventStream` with the start of its body (read as an error body is). */
export const jsonAnswer = (response: Response, contentType: string, idleMs: number) =>
  Effect.flatMap(
    readExcerpt(response.body, idleMs),
    // The whole excerpt goes into the error: `sanitize` masks the key, then cuts it.
    (text) =>
      Effect.fail(
        new ModelStreamError.NotAnEventStream({ found: "json", excerpt: text, contentType: contentType.trim() })
      )
  )

/**
 * The body under its read budgets. Before the end event each read gets `idleMs` (running out is
 * `StreamTimeout` `idle`); once `ended()` holds, the rest of the body gets `afterEndMs` in all
 * and each read still at most `idleMs`, and running out of either ends the body cleanly. An
 * abandoned read only ever precedes the end of the stream, so racing it loses nothing.
 */
export const budgetedBody = (
  body: Stream.Stream<Uint8Array, ModelStreamError.TransportError>,
  budgets: { readonly idleMs: number; readonly afterEndMs: number },
  ended: () => boolean
): Stream.Stream<Uint8Array, ModelStreamError.TransportError | ModelStreamError.StreamTimeout> =>
  Stream.transformPull(body, (pull) =>
    Effect.map(Clock.clockWith(Effect.succeed), (clock) => {
      let endBy: number | undefined
      const idle = Number.isFinite(budgets.idleMs)
        ? Effect.raceFirst(
          pull,
          // the error is built when the budget runs out, not per response (its stack costs tens of µs)
          Effect.andThen(
            Effect.sleep(Duration.millis(budgets.idleMs)),
            Effect.failSync(() => timeout("idle", budgets.idleMs))
          )
        )
        : pull
      return Effect.suspend(() => {
        if (!ended()) return idle
        const now = clock.currentTimeMillisUnsafe()
        endBy ??= now + budgets.afterEndMs
        const left = Math.min(endBy - now, budgets.idleMs)
        if (left <= 0) return Cause.done()
        if (!Number.isFinite(left)) return pull
        return Effect.raceFirst(pull, Effect.andThen(Effect.sleep(Duration.millis(left)), Cause.done()))
      })
    }))

/** Whether a `content-type` names an event stream (`text/event-stream`, parameters ignored). */
export const isEventStreamMediaType = (contentType: string): boolean =>
  contentType.split(";")[0]!.trim().toLowerCase() === "text/event-stream"

const isBlank = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d

/**
 * Looks at the start of a body whose label does not say what it is: reads until its first byte
 * that is not blank (a UTF-8 BOM skipped) and tells whether it opens a JSON document (`{` or
 * `[`), an SSE body never does (its lines start with a field name or `:`). The bytes read are
 * handed back in front of the rest of the body, which is not read further; an empty body is not
 * JSON.
 */
export const opensWithJson = <E>(
  body: Stream.Stream<Uint8Array, E>
): Effect.Effect<{ readonly json: boolean; readonly body: Stream.Stream<Uint8Array, E> }, E, Scope.Scope> =>
  Effect.gen(function*() {
    const pull = yield* Stream.toPull(body)
    const seen: Array<Uint8Array> = []
    let offset = 0
    while (true) {
      const exit = yield* Effect.exit(pull)
      if (exit._tag === "Failure") {
        if (Pull.isDoneCause(exit.cause)) return { json: false, body: Stream.fromIterable(seen) }
        return yield* Effect.failCause(exit.cause as Cause.Cause<E>)
      }
      for (const chunk of exit.value) {
        seen.push(chunk)
        for (let i = 0; i < chunk.length; i++, offset++) {
          const byte = chunk[i]!
          // A UTF-8 BOM (EF BB BF) can only open the body.
          if (offset < 3 && byte === [0xef, 0xbb, 0xbf][offset]) continue
          if (isBlank(byte)) continue
          return {
            json: byte === 0x7b || byte === 0x5b,
            body: Stream.concat(Stream.fromIterable(seen), Stream.fromPull(Effect.succeed(pull)))
          }
        }
      }
    }
  })

/** A failure to get a response head: `TransportError` `connect`. */
export const connectError = (error: HttpClientError.HttpClientError) =>
  new ModelStreamError.TransportError({
    phase: "connect",
    reason: error.reason._tag === "InvalidUrlError"
      ? `invalid URL: ${describe(error.reason.cause)}`
      : describe(error.reason.cause)
  })

/** A failure while reading a body: `TransportError` `body`. */
export const bodyError = (error: HttpClientError.HttpClientError) =>
  new ModelStreamError.TransportError({ phase: "body", reason: describe(error.reason.cause ?? error.reason) })
