/**
 * The HTTP transport: one streaming POST to a provider, its response bytes decoded into core
 * `StreamEvent`s, under three time budgets and the caller's abort.
 *
 * `HttpTransport` is a service so that a pipeline never depends on HTTP itself: `layer` runs
 * requests through effect's `HttpClient` (`layerNode` brings Undici's), `layerReplay` and
 * `layerFixture` answer from bytes in memory, with no socket, under the same budgets and error
 * rules (and the `Clock`, so `TestClock` drives their delays).
 *
 * What a stream can fail with (`ModelStreamError.TransportFailure`, from `@toolgate/core`), beside
 * the assembly failures that travel inside events:
 *
 * - `ProviderHttpError`: a status outside 2xx, before the first event.
 * - `TransportError`: `connect` (no response head) or `body` (the body was cut: HTTP/1.1 framing
 *   tells a cut from an end, so a reset or a close before the last chunk is this error and not
 *   an `IncompleteStream`; a body that ends cleanly without the provider's finish signal is left
 *   to the assembler, which reports `IncompleteStream`).
 * - `StreamTimeout`: `first_byte` (no response head in time), `idle` (no body bytes in time, from
 *   the head to the first read and between reads), `total` (the stream, from the request to the
 *   last byte, took longer than its deadline).
 * - `NotAnEventStream` (when the stream asked for an event stream only, `answer: "stream"`, the
 *   default): a 2xx response whose `content-type` is JSON (`application/json`, any `…+json` type,
 *   NDJSON), decided from the head with the start of the body as its excerpt (the classic
 *   non-streaming answer: the request did not ask for a stream, or the server ignored it); or,
 *   whatever the content type, a body without one SSE line (`Decoder.decodeSse`). Only JSON is
 *   refused by its label: a missing content type (many servers omit it) and other labels
 *   (`text/plain`, `application/octet-stream`, which some servers put on their streams) are read
 *   by their bytes, so an HTML page from a proxy ends in `NotAnEventStream` too, once its body has
 *   ended.
 *
 * Which answers a stream takes (`StreamOptions.answer`): `stream` (the default) reads an event
 * stream and refuses a JSON answer as above; `json` (a request sent without a stream) and
 * `either` (a streaming request whose caller also takes a whole JSON answer, from a server that
 * ignores `stream`) read a body labelled `text/event-stream` as a stream, a body labelled JSON
 * with `NonStreaming.decode` (the same core events, the same gate), and any other body by its
 * first byte that is not blank: `{` or `[` opens a JSON document, anything else is read as a
 * stream. The request's `accept` header says which answers it takes.
 * - `StreamAborted`: the caller's `AbortSignal` fired. An Effect interruption stays an
 *   interruption (the fiber that was interrupted cannot fail).
 *
 * Stopping at the end event. A body's end event (OpenAI Chat `data: [DONE]`, Anthropic
 * `message_stop`, the terminal Responses event, Gemini's finish chunk: the decoders mark it as
 * `StreamEvent.end`) means everything the turn needs has arrived, but a server or proxy may keep
 * the response open after it. So once an event with `end` has been decoded, the rest of the body
 * is read only for `afterEndMs` (default 100 ms): what arrives by then is still decoded and
 * checked (a second response or a footer behind the end event is still a
 * `ToolCallProtocolError`), and then the response is closed and the stream ends as if the body
 * had ended there. From that point no budget is an error: neither `idle` nor `total` can turn a
 * finished turn into a `StreamTimeout`. A server that ends the body at once (every first-party
 * API) is not waited for at all. The mechanism is the transport's, not the decoder's: a finite
 * body (`Provider.decode` over a file, `inspect`) is always read to its end, so the fixture rules
 * hold under any chunking there; on a live connection, what a server sends later than
 * `afterEndMs` behind the end event is not seen.
 *
 * The finish profile (`FinishProfile`) is the request's: `ProviderRequest.finishProfile`, else
 * `StreamOptions.decode.finishProfile`, else `FinishProfile.forRequest` (`strict` for
 * `api.openai.com` and `api.anthropic.com`, `compatible` elsewhere).
 *
 * In every case the connection is released when the stream ends: the request is tied to the
 * stream's scope, which aborts it on failure, timeout, abort or interruption (a body that was
 * read to its end leaves a reusable keep-alive connection instead).
 *
 * The API key is a `Redacted`: it is sent in the provider's header, that header is added to
 * effect's redacted header names for the request's span, and every string an error carries is
 * masked for the key's value (a provider or a proxy can echo it in an error body).
 *
 * (Why one long module: one request's life, the budgets, the end-of-body rule and the release of
 * the connection, interlock; each rule is documented beside the code that enforces it.)
 *
 * @since 0.1.0
 */
import { ModelStreamError, type StreamEvent } from "@toolgate/core"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
// Deep imports: the `effect/http` barrel loads the whole server side too (~50 ms at start-up).
import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { readFile } from "node:fs/promises"
import * as FinishProfile from "./FinishProfile.js"
import * as Rules from "./internal/transportRules.js"
import * as NonStreaming from "./NonStreaming.js"
import * as Provider from "./Provider.js"

/**
 * One provider request.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProviderRequest {
  /** The wire format of the response body, or `auto` to recognise it (`Provider.decode`). */
  readonly provider: Provider.Name | "auto"
  /** The endpoint, e.g. `https://api.openai.com/v1/chat/completions`. */
  readonly url: string
  /** The JSON request body (sent with `content-type: application/json`); must be serialisable. */
  readonly body: unknown
  /**
   * The API key, sent as {@link apiKeyHeader} names. Never logged, never put in an error.
   */
  readonly apiKey?: Redacted.Redacted<string> | undefined
  /**
   * The header that carries the key, sent with the raw key as its value. Default by provider:
   * `authorization: Bearer KEY` for `openai-chat`, `openai-responses` and `auto`, `x-api-key`
   * for `anthropic`, `x-goog-api-key` for `gemini`. Azure OpenAI, for example, wants `api-key`.
   */
  readonly apiKeyHeader?: string | undefined
  /** Extra request headers (`anthropic-version`, `openai-organization`, …). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * Which finish reasons release tool calls for this endpoint (`FinishProfile`). Default:
   * `FinishProfile.forRequest(request)`, `strict` for the first-party APIs, `compatible` for
   * every other server.
   */
  readonly finishProfile?: FinishProfile.FinishProfile | undefined
}

/**
 * The time budgets of one stream, in milliseconds. `Infinity` disables a budget; `0` fails at
 * once.
 *
 * @since 0.1.0
 * @category models
 */
export interface Budgets {
  /** From sending the request to the response head (status and headers). */
  readonly firstByteMs: number
  /** Longest wait for body bytes: from the head to the first read, and between two reads. */
  readonly idleMs: number
  /** From sending the request to the end of the body. */
  readonly totalMs: number
  /**
   * After the end event: how long the rest of the body is read before the response is closed
   * and the stream ends there (`0`: right after the read that carried the end event; `Infinity`:
   * until the body ends or a read waits `idleMs`). What arrives within it is still checked.
   * Running out is not an error.
   */
  readonly afterEndMs: number
}

/**
 * Defaults: 60 s to the response head, 60 s between body reads (reasoning models can think
 * silently for tens of seconds), 10 min in all, 100 ms behind the end event (a proxy that appends
 * something to a body writes it at once; a server that keeps the socket open costs no more).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBudgets: Budgets = { firstByteMs: 60_000, idleMs: 60_000, totalMs: 600_000, afterEndMs: 100 }

/**
 * Options of one stream.
 *
 * @since 0.1.0
 * @category models
 */
export interface StreamOptions extends Partial<Budgets> {
  /** Aborting it ends the stream with `StreamAborted` (checked before the request is sent too). */
  readonly signal?: AbortSignal | undefined
  /** Options for the decoder (`Provider.decode`, and `NonStreaming.decode` for a JSON answer). */
  readonly decode?: (Provider.Options & Pick<NonStreaming.Options, "maxBodyBytes">) | undefined
  /**
   * Which answers the stream takes (see the module docs): `stream` (default), `json` or
   * `either`.
   */
  readonly answer?: Answer | undefined
  /** Run once, when the answer's form is known: `stream` (SSE) or `json` (a whole body). */
  readonly onAnswer?: ((form: "stream" | "json") => Effect.Effect<void>) | undefined
}

/**
 * Which answers a stream takes: an event stream only (`stream`), a whole JSON body (`json`,
 * for a request sent without a stream; an event stream is still read), or either (`either`, a
 * streaming request to a server that may ignore `stream`).
 *
 * @since 0.1.0
 * @category models
 */
export type Answer = "stream" | "json" | "either"

/**
 * The `accept` header of a request that takes `answer`.
 *
 * @since 0.1.0
 * @category headers
 */
export const acceptHeader = (answer: Answer): string =>
  answer === "stream"
    ? "text/event-stream"
    : answer === "json"
    ? "application/json"
    : "text/event-stream, application/json;q=0.9"

/**
 * The transport service: one call, one provider request, one stream of core events.
 *
 * The stream is cold: each run sends a new request. It fails with a
 * `ModelStreamError.TransportFailure`; assembly failures found in the body are events
 * (`StreamEvent.failure`), as `Provider.decode` emits them.
 *
 * @since 0.1.0
 * @category services
 */
export class HttpTransport extends Context.Service<HttpTransport, {
  readonly stream: (
    request: ProviderRequest,
    options?: StreamOptions
  ) => Stream.Stream<StreamEvent.StreamEvent, ModelStreamError.TransportFailure>
}>()("@toolgate/adapters/HttpTransport") {}

/**
 * The default key header of a provider.
 *
 * @since 0.1.0
 * @category headers
 */
export const apiKeyHeader = (request: ProviderRequest): string =>
  request.apiKeyHeader?.toLowerCase() ??
    (request.provider === "anthropic"
      ? "x-api-key"
      : request.provider === "gemini"
      ? "x-goog-api-key"
      : "authorization")

/**
 * Milliseconds to wait before a retry, from `retry-after-ms` (OpenAI's header: milliseconds,
 * may be fractional) or `Retry-After` (RFC 9110 §10.2.3: delay-seconds, or an HTTP-date read
 * against `now` and floored at 0); `null` when neither is present and readable.
 *
 * @since 0.1.0
 * @category headers
 */
export const retryAfterMs: (headers: Readonly<Record<string, string | undefined>>, now: number) => number | null =
  Rules.retryAfterMs

/** Sends a request; the response lives until the scope closes (closing it releases the connection). */
type Open = (
  request: ProviderRequest,
  answer: Answer
) => Effect.Effect<Rules.Response, ModelStreamError.TransportError, Scope.Scope>

const resolveBudgets = (options: StreamOptions | undefined): Budgets => ({
  firstByteMs: options?.firstByteMs ?? defaultBudgets.firstByteMs,
  idleMs: options?.idleMs ?? defaultBudgets.idleMs,
  totalMs: options?.totalMs ?? defaultBudgets.totalMs,
  afterEndMs: options?.afterEndMs ?? defaultBudgets.afterEndMs
})

/**
 * The transport's rules over any way of opening a response: budgets, status, abort, masking,
 * decoding.
 */
const make = (open: Open): HttpTransport["Service"] => ({
  stream: (request, options) =>
    Stream.suspend(() => {
      const budgets = resolveBudgets(options)
      const signal = options?.signal
      const clean = Rules.sanitize(Rules.masker(request.apiKey), Rules.cutMasker(request.apiKey))
      if (signal?.aborted) {
        return Stream.fail(
          new ModelStreamError.StreamAborted({ finishReason: null, reason: Rules.abortReason(signal) })
        )
          .pipe(Stream.mapError(clean))
      }
      const answer = options?.answer ?? "stream"
      const opened = Number.isFinite(budgets.firstByteMs)
        ? Effect.timeoutOrElse(open(request, answer), {
          duration: Duration.millis(budgets.firstByteMs),
          orElse: () => Effect.fail(Rules.timeout("first_byte", budgets.firstByteMs))
        })
        : open(request, answer)
      /** An event with `end` was decoded and handed downstream (see the module docs). */
      let ended = false
      const finishProfile = request.finishProfile ?? options?.decode?.finishProfile ??
        FinishProfile.forRequest(request)
      const decodeOptions = { ...options?.decode, finishProfile }
      const answered = (form: "stream" | "json") => options?.onAnswer?.(form) ?? Effect.void
      const asStream = (body: Stream.Stream<Uint8Array, ModelStreamError.TransportFailure>) =>
        Effect.as(answered("stream"), body.pipe(Provider.decode(request.provider, decodeOptions)))
      const asJson = (body: Stream.Stream<Uint8Array, ModelStreamError.TransportFailure>) =>
        Effect.as(answered("json"), body.pipe(NonStreaming.decode(request.provider, decodeOptions)))
      let events: Stream.Stream<StreamEvent.StreamEvent, ModelStreamError.TransportFailure> = Stream.unwrap(
        Effect.gen(function*() {
          const response = yield* opened
          if (response.status < 200 || response.status > 299) return yield* Rules.httpError(response, budgets.idleMs)
          const contentType = response.headers["content-type"]
          const labelledJson = contentType !== undefined && Rules.isJsonMediaType(contentType)
          if (labelledJson && answer === "stream") {
            return yield* Rules.jsonAnswer(response, contentType, budgets.idleMs)
          }
          const body = Rules.budgetedBody(response.body, budgets, () => ended)
          if (answer === "stream" || (contentType !== undefined && Rules.isEventStreamMediaType(contentType))) {
            return yield* asStream(body)
          }
          if (labelledJson) return yield* asJson(body)
          const start = yield* Rules.opensWithJson(body)
          return yield* (start.json ? asJson(start.body) : asStream(start.body))
        })
      )
      if (Number.isFinite(budgets.totalMs)) {
        events = Stream.interruptWhen(
          events,
          Effect.andThen(
            Effect.sleep(Duration.millis(budgets.totalMs)),
            Effect.suspend(() => ended ? Effect.void : Effect.fail(Rules.timeout("total", budgets.totalMs)))
          )
        )
      }
      // Marked after the total budget's guard: once set, the event that ended the body has been
      // delivered, so a budget that runs out from here on ends the stream instead of failing it.
      events = Stream.mapArray(events, (batch) => {
        if (!ended) {
          for (let i = 0; i < batch.length; i++) {
            if (batch[i]!.end === true) {
              ended = true
              break
            }
          }
        }
        return batch
      })
      if (signal !== undefined) events = Stream.interruptWhen(events, Rules.awaitAbort(signal))
      return Stream.mapError(events, clean)
    })
})

/**
 * Sends requests through effect's `HttpClient`. Each request is bound to the stream's scope
 * (`HttpClient.withScope`): whatever ends the stream aborts the request, which closes its
 * connection unless the body had been read to its end.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<HttpTransport, never, HttpClient.HttpClient> = Layer.effect(
  HttpTransport,
  Effect.gen(function*() {
    const client = HttpClient.withScope(yield* HttpClient.HttpClient)
    return HttpTransport.of(make((request, answer) =>
      Effect.gen(function*() {
        const keyHeader = apiKeyHeader(request)
        let http = HttpClientRequest.post(request.url).pipe(
          HttpClientRequest.setHeaders({ accept: acceptHeader(answer), ...request.headers }),
          HttpClientRequest.bodyText(JSON.stringify(request.body), "application/json")
        )
        if (request.apiKey !== undefined) {
          const secret = Redacted.value(request.apiKey)
          http = HttpClientRequest.setHeader(
            http,
            keyHeader,
            keyHeader === "authorization" ? `Bearer ${secret}` : secret
          )
        }
        const redacted = yield* Headers.CurrentRedactedNames
        const response = yield* client.execute(http).pipe(
          Effect.provideService(Headers.CurrentRedactedNames, [...redacted, keyHeader]),
          Effect.mapError(Rules.connectError)
        )
        return {
          status: response.status,
          headers: response.headers,
          body: Stream.mapError(response.stream, Rules.bodyError)
        }
      })
    ))
  })
)

/**
 * {@link layer} over Undici (`NodeHttpClient.layerUndici`, Node ≥ 22): its own connection pool,
 * destroyed with the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerNode: Layer.Layer<HttpTransport> = Layer.unwrap(
  // Loaded when the layer is built: `toolgate inspect` imports this package and needs no client
  // (the Node client costs ~40 ms at start-up).
  Effect.map(
    Effect.promise(() => import("@effect/platform-node/NodeHttpClient")),
    (NodeHttpClient) => Layer.provide(layer, NodeHttpClient.layerUndici)
  )
)

/**
 * A response to replay: the body, and how it arrives. Times are read from the `Clock`, so
 * `TestClock` drives them.
 *
 * @since 0.1.0
 * @category replay
 */
export interface Replay {
  /** The response body (a string is sent as UTF-8). */
  readonly body: Uint8Array | string
  /** Default 200. Outside 2xx the body is read as the provider's error body. */
  readonly status?: number | undefined
  /** Response headers (`retry-after`, …), lower-case names. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** Bytes per read; default: the whole body in one read. */
  readonly chunkBytes?: number | undefined
  /** Milliseconds between two reads; default 0. */
  readonly paceMs?: number | undefined
  /** Milliseconds before the response head; `Infinity`: it never comes. Default 0. */
  readonly firstByteDelayMs?: number | undefined
  /** No response at all: fails with `TransportError` `connect`, as a refused connection does. */
  readonly refuse?: boolean | undefined
  /** The body is cut after this many bytes: `TransportError` `body`, as a reset does. */
  readonly cutAfterBytes?: number | undefined
  /** The body stops after this many bytes and never ends, as a stalled server does. */
  readonly stallAfterBytes?: number | undefined
}

/**
 * Chooses the response to a request. `attempt` counts the requests with the same JSON body
 * this layer has answered, from 1 (a retry sends the same body).
 *
 * @since 0.1.0
 * @category replay
 */
export type ReplayPlan = (request: ProviderRequest, attempt: number) => Replay | Effect.Effect<Replay>

const replayResponse = (replay: Replay): Effect.Effect<Rules.Response, ModelStreamError.TransportError> =>
  Effect.gen(function*() {
    const delay = replay.firstByteDelayMs ?? 0
    if (delay === Infinity) return yield* Effect.never
    if (delay > 0) yield* Effect.sleep(Duration.millis(delay))
    if (replay.refuse === true) {
      return yield* new ModelStreamError.TransportError({ phase: "connect", reason: "replay: connection refused" })
    }
    const all = typeof replay.body === "string" ? new TextEncoder().encode(replay.body) : replay.body
    const cut = replay.cutAfterBytes
    const stall = replay.stallAfterBytes
    const end = Math.min(all.length, cut ?? Infinity, stall ?? Infinity)
    const size = Math.max(1, replay.chunkBytes ?? end)
    const chunks: Array<Uint8Array> = []
    for (let at = 0; at < end; at += size) chunks.push(all.subarray(at, Math.min(end, at + size)))
    let body: Stream.Stream<Uint8Array, ModelStreamError.TransportError> = Stream.fromIterable(chunks)
    if ((replay.paceMs ?? 0) > 0) body = Stream.schedule(body, Schedule.spaced(Duration.millis(replay.paceMs!)))
    if (cut !== undefined && cut <= end && cut < all.length) {
      body = Stream.concat(
        body,
        Stream.fail(
          new ModelStreamError.TransportError({ phase: "body", reason: `replay: connection cut after ${cut} bytes` })
        )
      )
    } else if (stall !== undefined && stall < all.length) {
      body = Stream.concat(body, Stream.never)
    }
    return { status: replay.status ?? 200, headers: replay.headers ?? {}, body }
  })

/**
 * A transport with no HTTP: each request is answered with the {@link Replay} the plan chooses
 * (or always the same one), under the same budgets, status and abort rules as {@link layer}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerReplay = (plan: Replay | ReplayPlan): Layer.Layer<HttpTransport> =>
  Layer.sync(HttpTransport, () => {
    const attempts = new Map<string, number>()
    return HttpTransport.of(make((request) =>
      Effect.suspend(() => {
        const key = JSON.stringify(request.body) ?? ""
        const attempt = (attempts.get(key) ?? 0) + 1
        attempts.set(key, attempt)
        const chosen = typeof plan === "function" ? plan(request, attempt) : plan
        return Effect.flatMap(Effect.isEffect(chosen) ? chosen : Effect.succeed(chosen), replayResponse)
      })
    ))
  })

/**
 * {@link layerReplay} of one captured body (a fixture's `.sse` file, read when the layer is
 * built), answered to every request, with `options` for its status, chunking, pace and faults.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFixture = (path: string, options?: Omit<Replay, "body">): Layer.Layer<HttpTransport> =>
  Layer.unwrap(
    Effect.map(
      Effect.promise(() => readFile(path)),
      (bytes) => layerReplay({ ...options, body: new Uint8Array(bytes) })
    )
  )
