/**
 * `ModelStream` over HTTP: each request is encoded in the provider's format
 * (`OpenAiChatRequest`, `AnthropicRequest`), sent as one streaming POST through the
 * `HttpTransport` in context, and its response body decoded into core events (`Provider.decode`),
 * under the layer's per-read budgets and the attempt's remaining time and `AbortSignal`.
 *
 * ```ts
 * const Model = HttpModelStream.layer({
 *   provider: "openai-chat",
 *   baseUrl: "https://api.openai.com/v1",
 *   apiKey: Redacted.make(process.env.OPENAI_API_KEY ?? ""),
 *   model: "gpt-4.1-mini"
 * }).pipe(Layer.provide(HttpTransport.layerNode))
 * ```
 *
 * - Endpoint: `baseUrl` + `path` (default `/chat/completions` for `openai-chat`, `/messages` for
 *   `anthropic`). The key travels in the provider's header (`HttpTransport.apiKeyHeader`); an
 *   `anthropic` request also carries `anthropic-version: 2023-06-01` unless `headers` names
 *   another.
 * - Finish profile: `finishProfile`, else `FinishProfile.forRequest` of each request (`strict` for
 *   `api.openai.com` and `api.anthropic.com`, `compatible` for every other server, `compatible`
 *   for an OpenAI request that names the function to call).
 * - Budgets: `budgets.firstByteMs`, `idleMs` and `afterEndMs` apply to every attempt
 *   (`HttpTransport.Budgets`; defaults `HttpTransport.defaultBudgets`); an attempt's total budget
 *   is its `remainingMs`, capped by `budgets.totalMs` when given.
 *
 * A raw provider body (a field this encoder does not write, another wire format) stays possible
 * through `HttpTransport.stream` directly, or through `providerOptions`.
 *
 * @since 0.1.0
 */
import { ModelStream, type ModelStreamError, type StreamEvent } from "@toolgate/core"
import { Effect, Layer, type Redacted, Result, Stream } from "effect"
import * as AnthropicRequest from "./AnthropicRequest.js"
import * as FinishProfile from "./FinishProfile.js"
import * as HttpTransport from "./HttpTransport.js"
import * as OpenAiChatRequest from "./OpenAiChatRequest.js"
import type * as Provider from "./Provider.js"

/**
 * The wire formats a request can be encoded in today.
 *
 * @since 0.1.0
 * @category models
 */
export type Format = "openai-chat" | "anthropic"

/**
 * Options of the layer.
 *
 * - `provider`: the wire format of the request and of its response.
 * - `baseUrl`: the API base (`https://api.openai.com/v1`, `http://localhost:11434/v1`,
 *   `https://api.anthropic.com/v1`); `path` is appended to it (trailing slashes dropped).
 * - `apiKey`, `apiKeyHeader`, `headers`: as `HttpTransport.ProviderRequest` takes them.
 * - `model`: the model name sent in every body.
 * - `maxOutputTokens`: `anthropic` only, the `max_tokens` of a request that names none (the API
 *   requires one; default `AnthropicRequest.defaultMaxOutputTokens`).
 * - `finishProfile`, `budgets`: see the module docs.
 * - `decode`: decoder options (`maxEventSize`, `choice`).
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
  readonly decode?: Omit<Provider.Options, "finishProfile" | "onDetected"> | undefined
}

const defaultPath: Readonly<Record<Format, string>> = { "openai-chat": "/chat/completions", anthropic: "/messages" }

/**
 * The transport request of one model request: the encoded body, the endpoint, the key and
 * headers, and the finish profile (`options.finishProfile`, else `FinishProfile.forRequest`).
 * Fails with `UnsupportedRequest` when the prompt holds a part the encoder cannot carry.
 *
 * @since 0.1.0
 * @category requests
 */
export const providerRequest = (
  options: Options,
  request: ModelStream.ModelRequest
): Result.Result<HttpTransport.ProviderRequest, ModelStreamError.UnsupportedRequest> => {
  const body = options.provider === "anthropic"
    ? AnthropicRequest.encode(request, { model: options.model, maxOutputTokens: options.maxOutputTokens })
    : OpenAiChatRequest.encode(request, { model: options.model })
  if (Result.isFailure(body)) return Result.fail(body.failure)
  const sent: HttpTransport.ProviderRequest = {
    provider: options.provider,
    url: `${options.baseUrl.replace(/\/+$/, "")}${options.path ?? defaultPath[options.provider]}`,
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
    return ModelStream.ModelStream.of({
      provider: options.provider,
      stream: (request, attempt): Stream.Stream<StreamEvent.StreamEvent, ModelStreamError.ModelStreamError> =>
        Stream.suspend((): Stream.Stream<StreamEvent.StreamEvent, ModelStreamError.ModelStreamError> => {
          const sent = providerRequest(options, request)
          if (Result.isFailure(sent)) return Stream.fail(sent.failure)
          return transport.stream(sent.success, {
            ...options.budgets,
            totalMs: Math.min(options.budgets?.totalMs ?? Infinity, attempt.remainingMs),
            signal: attempt.signal,
            decode: options.decode
          })
        })
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
