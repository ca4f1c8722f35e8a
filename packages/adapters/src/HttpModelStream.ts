/**
 * `ModelStream` over HTTP: each request is encoded in the provider's format
 * (`OpenAiChatRequest`, `OpenAiResponsesRequest`, `AnthropicRequest`, `GeminiRequest`: the
 * conversation with its tool calls and tool results, the tools, the tool choice), sent as one POST
 * through the `HttpTransport` in context, and its answer decoded into core events
 * (`Provider.decode` for a stream, `NonStreaming.decode` for a whole JSON body), under the
 * layer's per-read budgets and the attempt's remaining time and `AbortSignal`.
 *
 * ```ts
 * const Model = HttpModelStream.layer({
 *   provider: "openai-chat",
 *   baseUrl: "https://api.openai.com/v1",
 *   apiKey: Redacted.make(process.env.OPENAI_API_KEY ?? ""),
 *   model: "gpt-4.1-mini",
 *   stream: "fallback"
 * }).pipe(Layer.provide(HttpTransport.layerNode))
 * ```
 *
 * - Endpoint: `baseUrl` + `path` (default `/chat/completions` for `openai-chat`, `/responses`
 *   for `openai-responses`, `/messages` for `anthropic`, `GeminiRequest.path(model, stream)` for
 *   `gemini`: `/models/MODEL:streamGenerateContent?alt=sse`, or `:generateContent` without a
 *   stream). The key travels in the provider's header (`HttpTransport.apiKeyHeader`); an
 *   `anthropic` request also carries `anthropic-version: 2023-06-01` unless `headers` names
 *   another.
 * - Finish profile: `finishProfile`, else `FinishProfile.forRequest` of each request (`strict` for
 *   `api.openai.com` and `api.anthropic.com`, `compatible` for every other server, `compatible`
 *   for an OpenAI request that names the function to call).
 * - Budgets: `budgets.firstByteMs`, `idleMs` and `afterEndMs` apply to every attempt
 *   (`HttpTransport.Budgets`; defaults `HttpTransport.defaultBudgets`); an attempt's total budget
 *   is its `remainingMs`, capped by `budgets.totalMs` when given.
 *
 * The stream policy (`stream`, per request when it is a function of the request):
 *
 * - `stream` (the default): the request asks for a stream; a JSON answer (a server that ignores
 *   `stream`) is `NotAnEventStream`, not retried.
 * - `never`: the request is sent without a stream (`stream: false`, Gemini's `generateContent`)
 *   and its JSON answer is decoded whole (`NonStreaming`): the same events, the same gate. Text
 *   arrives when the answer has.
 * - `fallback`: the request asks for a stream; a JSON answer is decoded whole instead of refused;
 *   and an HTTP 400 whose error names streaming ({@link rejectsStreaming}: OpenAI's
 *   "Unsupported value: 'stream' does not support true with this model", "Your organization must
 *   be verified to stream this model", a server that refuses `stream_options`, …) is retried once
 *   without a stream, within the attempt's remaining time, with a warning in the log and a count
 *   in {@link metrics}. Any other failure is the caller's to retry, as under `stream`.
 *
 * A raw provider body (a field this encoder does not write, another wire format) stays possible
 * through `HttpTransport.stream` directly, or through `providerOptions`.
 *
 * @since 0.1.0
 */
import { ModelStream, type ModelStreamError, type StreamEvent } from "@toolgate/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as AnthropicRequest from "./AnthropicRequest.js"
import * as FinishProfile from "./FinishProfile.js"
import * as GeminiRequest from "./GeminiRequest.js"
import * as HttpTransport from "./HttpTransport.js"
import * as OpenAiChatRequest from "./OpenAiChatRequest.js"
import * as OpenAiResponsesRequest from "./OpenAiResponsesRequest.js"
import type * as Provider from "./Provider.js"

/**
 * The wire formats a request can be encoded in: every format toolgate reads.
 *
 * @since 0.1.0
 * @category models
 */
export type Format = Provider.Name

/**
 * How a request asks for its answer (see the module docs): `stream`, `never`, or `fallback`.
 *
 * @since 0.1.0
 * @category models
 */
export type StreamPolicy = "stream" | "never" | "fallback"

/**
 * Options of the layer.
 *
 * - `provider`: the wire format of the request and of its response.
 * - `baseUrl`: the API base (`https://api.openai.com/v1`, `http://localhost:11434/v1`,
 *   `https://api.anthropic.com/v1`, `https://generativelanguage.googleapis.com/v1beta`); `path`
 *   is appended to it (trailing slashes dropped). For `gemini`, a given `path` is the streaming
 *   one; without a stream, its `:streamGenerateContent` becomes `:generateContent` and its
 *   `alt=sse` is dropped.
 * - `apiKey`, `apiKeyHeader`, `headers`: as `HttpTransport.ProviderRequest` takes them.
 * - `model`: the model name sent in every body (in the path for `gemini`).
 * - `maxOutputTokens`: `anthropic` only, the `max_tokens` of a request that names none (the API
 *   requires one; default `AnthropicRequest.defaultMaxOutputTokens`).
 * - `finishProfile`, `budgets`: see the module docs.
 * - `decode`: decoder options (`maxEventSize`, `choice`, `maxBodyBytes` for a JSON answer).
 * - `stream`: the {@link StreamPolicy}, or a function choosing it per request. Default `stream`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly provider: Format
  readonly baseUrl: string
  readonly path?: string | undefined
  readonly apiKey?: Redacted.Redacted<string> | undefined
  readonly apiKeyHeader?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly model: string
  readonly maxOutputTokens?: number | undefined
  readonly finishProfile?: FinishProfile.FinishProfile | undefined
  readonly budgets?: Partial<HttpTransport.Budgets> | undefined
  readonly decode?: Omit<NonNullable<HttpTransport.StreamOptions["decode"]>, "finishProfile" | "onDetected"> | undefined
  readonly stream?: StreamPolicy | ((request: ModelStream.ModelRequest) => StreamPolicy) | undefined
}

const defaultPath: Readonly<Record<Exclude<Format, "gemini">, string>> = {
  "openai-chat": "/chat/completions",
  "openai-responses": "/responses",
  anthropic: "/messages"
}

const pathOf = (options: Options, stream: boolean): string => {
  if (options.provider !== "gemini") return options.path ?? defaultPath[options.provider]
  if (options.path === undefined) return GeminiRequest.path(options.model, stream)
  if (stream) return options.path
  const [base, query] = options.path.split("?", 2) as [string, string | undefined]
  const params = (query ?? "").split("&").filter((param) => param !== "" && param !== "alt=sse")
  return `${base.replace(":streamGenerateContent", ":generateContent")}${
    params.length > 0 ? `?${params.join("&")}` : ""
  }`
}

const bodyOf = (options: Options, request: ModelStream.ModelRequest, stream: boolean) => {
  switch (options.provider) {
    case "openai-chat":
      return OpenAiChatRequest.encode(request, { model: options.model, stream })
    case "openai-responses":
      return OpenAiResponsesRequest.encode(request, { model: options.model, stream })
    case "anthropic":
      return AnthropicRequest.encode(request, {
        model: options.model,
        maxOutputTokens: options.maxOutputTokens,
        stream
      })
    case "gemini":
      return GeminiRequest.encode(request)
  }
}

/**
 * The transport request of one model request: the encoded body (asking for a stream or not,
 * default a stream), the endpoint, the key and headers, and the finish profile
 * (`options.finishProfile`, else `FinishProfile.forRequest`). Fails with `UnsupportedRequest`
 * when the prompt holds a part the encoder cannot carry.
 *
 * @since 0.1.0
 * @category requests
 */
export const providerRequest = (
  options: Options,
  request: ModelStream.ModelRequest,
  stream = true
): Result.Result<HttpTransport.ProviderRequest, ModelStreamError.UnsupportedRequest> => {
  const body = bodyOf(options, request, stream)
  if (Result.isFailure(body)) return Result.fail(body.failure)
  const sent: HttpTransport.ProviderRequest = {
    provider: options.provider,
    url: `${options.baseUrl.replace(/\/+$/, "")}${pathOf(options, stream)}`,
    body: body.success,
    apiKey: options.apiKey,
    apiKeyHeader: options.apiKeyHeader,
    headers: options.provider === "anthropic"
      ? { "anthropic-version": "2023-06-01", ...options.headers }
      : options.headers
  }
  return Result.succeed({ ...sent, finishProfile: options.finishProfile ?? FinishProfile.forRequest(sent) })
}

/**
 * Whether a provider's refusal names streaming, so that the same request without a stream may
 * be answered: HTTP 400 with an error code or message that mentions `stream` as a word (OpenAI's
 * `{"message": "Unsupported value: 'stream' does not support true with this model. …", "param":
 * "stream", "code": "unsupported_value"}` for models that do not stream, "Your organization must
 * be verified to stream this model. …" for models an unverified organization may only call
 * without a stream, and servers that refuse `stream` or `stream_options` with tools or strict
 * schemas).
 *
 * @since 0.1.0
 * @category fallback
 */
export const rejectsStreaming = (error: ModelStreamError.ProviderHttpError): boolean =>
  error.status === 400 && /\bstream/i.test(`${error.code ?? ""} ${error.providerMessage}`)

/**
 * The layer's metric: `toolgate_stream_fallbacks_total`, requests of the `fallback` policy
 * answered without a stream, by `provider` and `reason`: `rejected` (an HTTP 400 that names
 * streaming, retried once without a stream) or `json_answer` (the server answered a streaming
 * request with a whole JSON body).
 *
 * @since 0.1.0
 * @category metrics
 */
export const metrics = {
  streamFallbacks: Metric.counter("toolgate_stream_fallbacks_total", {
    description: "requests of the fallback policy answered without a stream, by reason"
  })
} as const

const fallback = (provider: Format, reason: "rejected" | "json_answer") =>
  Metric.update(Metric.withAttributes(metrics.streamFallbacks, { provider, reason }), 1)

/**
 * A {@link ModelStream.ModelStream} over the `HttpTransport` in context (see the module docs).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<ModelStream.ModelStream["Service"], never, HttpTransport.HttpTransport> =>
  Effect.gen(function*() {
    const transport = yield* HttpTransport.HttpTransport
    const send = (
      request: ModelStream.ModelRequest,
      attempt: ModelStream.Attempt,
      stream: boolean,
      answer: HttpTransport.Answer,
      remainingMs: number
    ): Stream.Stream<StreamEvent.StreamEvent, ModelStreamError.ModelStreamError> => {
      const sent = providerRequest(options, request, stream)
      if (Result.isFailure(sent)) return Stream.fail(sent.failure)
      return transport.stream(sent.success, {
        ...options.budgets,
        totalMs: Math.max(0, Math.min(options.budgets?.totalMs ?? Infinity, remainingMs)),
        signal: attempt.signal,
        decode: options.decode,
        answer,
        onAnswer: answer === "either"
          ? (form) =>
            form === "json"
              ? Effect.andThen(
                fallback(options.provider, "json_answer"),
                Effect.logInfo("the provider answered a streaming request with a whole JSON body; decoded whole")
              )
              : Effect.void
          : undefined
      })
    }
    return ModelStream.ModelStream.of({
      provider: options.provider,
      stream: (request, attempt) =>
        Stream.unwrap(Effect.gen(function*() {
          const policy = typeof options.stream === "function" ? options.stream(request) : options.stream ?? "stream"
          if (policy === "stream") return send(request, attempt, true, "stream", attempt.remainingMs)
          if (policy === "never") return send(request, attempt, false, "json", attempt.remainingMs)
          const started = yield* Clock.currentTimeMillis
          return send(request, attempt, true, "either", attempt.remainingMs).pipe(
            Stream.catchTag("ProviderHttpError", (error) =>
              rejectsStreaming(error)
                ? Stream.unwrap(Effect.gen(function*() {
                  yield* fallback(options.provider, "rejected")
                  yield* Effect.logWarning(
                    `the provider refused a stream (HTTP 400: ${error.providerMessage}); retrying once without a stream`
                  ).pipe(Effect.annotateLogs({ provider: options.provider, code: error.code ?? "" }))
                  const elapsed = (yield* Clock.currentTimeMillis) - started
                  return send(request, attempt, false, "json", attempt.remainingMs - elapsed)
                }))
                : Stream.fail(error))
          )
        }))
    })
  })

/**
 * The {@link ModelStream.ModelStream} layer over the `HttpTransport` in context (e.g.
 * `HttpTransport.layerNode`, or `HttpTransport.layerReplay` in tests).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<ModelStream.ModelStream, never, HttpTransport.HttpTransport> =>
  Layer.effect(ModelStream.ModelStream, make(options))
