/**
 * A tool handler that performs each call as an HTTP POST to a webhook through effect's
 * `HttpClient` (provide one: `FetchHttpClient.layer`, or `NodeHttpClient.layerUndici` of
 * `@effect/platform-node`), sending the executor's downstream key as the `Idempotency-Key` header
 * (IETF draft-ietf-httpapi-idempotency-key-header), so a downstream that honours it applies a
 * re-sent call once.
 *
 * Failures are classified the way the executor needs them (`ToolExecutor` module docs):
 * - not applied (the record is released, a later call may retry): nothing reached the webhook
 *   (the connection was refused, the URL is invalid, the body could not be encoded), or it
 *   answered 429 or 503 (it did nothing and asks to be retried);
 * - ambiguous (the record is parked `unknown`): the connection failed after the request was sent,
 *   any other 5xx, or a 2xx whose body was cut or is not JSON (the call may have applied; its
 *   result is lost);
 * - applied / terminal (cached and replayed): any other non-2xx, as the tool's failure
 *   `{ status, message }` (the body's first 200 characters).
 *
 * Interrupting the handler (its timeout, a lost lease) aborts the request. (With `FetchHttpClient`,
 * Node's `fetch` keeps the aborted request's connection open until the server answers;
 * `NodeHttpClient.layerUndici` closes it.)
 *
 * ```ts
 * const Executor = ToolExecutor.layer(Crm, {
 *   create_task: WebhookHandler.handler({ url: "https://crm.example/hooks/create_task", parse: (json) => json as { id: string } })
 * }).pipe(Layer.provide(FetchHttpClient.layer))
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
// Deep imports: the `effect/http` barrel loads the server side too.
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { Ambiguous, type HandlerContext, NotApplied } from "./ToolHandler.js"

/**
 * The failure a webhook's terminal answer becomes: its status and the first 200 characters of its
 * body.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WebhookFailure = Schema.Struct({ status: Schema.Number, message: Schema.String })

/**
 * @since 0.1.0
 * @category models
 */
export type WebhookFailure = typeof WebhookFailure.Type

/**
 * Options of a webhook handler.
 *
 * - `url`: where to POST.
 * - `body`: the JSON body for the call's parameters (default: the parameters themselves).
 * - `parse`: the result from the response's JSON (an empty body is `null`).
 * - `timeoutMs`: the handler timeout (default: the executor's).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<P, A> {
  readonly url: string
  readonly body?: ((params: P) => unknown) | undefined
  readonly parse: (json: unknown) => A
  readonly timeoutMs?: number | undefined
}

/** The first error code (`ECONNREFUSED`, `UND_ERR_SOCKET`, …) on an error's chain of causes. */
const codeOf = (error: unknown): string | undefined => {
  let current = error
  for (let depth = 0; depth < 5 && Predicate.isObject(current); depth++) {
    if (Predicate.isString(current.code)) return current.code
    current = current.cause
  }
  return undefined
}

const sendFailed = (error: HttpClientError.HttpClientError): NotApplied | Ambiguous => {
  const reason = error.reason
  if (reason._tag === "InvalidUrlError" || reason._tag === "EncodeError") {
    return new NotApplied({ detail: `the webhook request could not be sent (${reason._tag})` })
  }
  const code = codeOf(reason.cause)
  return code === "ECONNREFUSED"
    ? new NotApplied({ detail: "the webhook refused the connection" })
    : new Ambiguous({ detail: `the webhook connection failed after the request was sent (${code ?? "no code"})` })
}

/**
 * A handler that POSTs each call to a webhook (see the module docs for the classification).
 * Recovery is `manual`: a call whose outcome is unknown is never re-sent without a person (or a
 * `reconcile` probe) deciding. It requires an `HttpClient`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const handler = <P, A>(options: Options<P, A>) => ({
  recovery: "manual" as const,
  ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  run: (
    params: P,
    context: HandlerContext
  ): Effect.Effect<A, NotApplied | Ambiguous | WebhookFailure, HttpClient.HttpClient> =>
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const request = HttpClientRequest.post(options.url).pipe(
        HttpClientRequest.setHeader("idempotency-key", context.downstreamKey),
        HttpClientRequest.bodyText(
          JSON.stringify(options.body === undefined ? params : options.body(params)),
          "application/json"
        )
      )
      const response = yield* Effect.mapError(client.execute(request), sendFailed)
      const status = response.status
      if (status >= 200 && status < 300) {
        const text = yield* Effect.mapError(
          response.text,
          (error) =>
            new Ambiguous({
              detail: `the webhook answered ${status} and its body was lost (${
                codeOf(error.reason.cause) ?? "no code"
              })`
            })
        )
        return yield* Effect.try({
          try: () => options.parse(text === "" ? null : JSON.parse(text)),
          catch: () => new Ambiguous({ detail: `the webhook answered ${status} with a body that is not JSON` })
        })
      }
      if (status === 429 || status === 503) {
        return yield* new NotApplied({ detail: `the webhook answered ${status}` })
      }
      if (status >= 500) return yield* new Ambiguous({ detail: `the webhook answered ${status}` })
      const text = yield* Effect.orElseSucceed(response.text, () => "")
      return yield* Effect.fail<WebhookFailure>({ status, message: text.slice(0, 200) })
    })
})
