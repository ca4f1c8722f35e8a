/**
 * A tool handler that performs its call as an HTTP POST to a webhook, sending the executor's
 * downstream key as the `Idempotency-Key` header (IETF draft-ietf-httpapi-idempotency-key-header),
 * so a downstream that honours it applies a re-sent call once.
 *
 * Failures are classified the way the executor needs them (`ToolExecutor` module docs):
 * - not applied (the record is released, a later call may retry): the connection was refused, or
 *   the webhook answered 429 or 503 (it did nothing and asks to be retried);
 * - ambiguous (the record is parked `unknown`): the connection failed after the request was sent,
 *   or any other 5xx;
 * - applied / terminal (cached and replayed): any other non-2xx, as the tool's failure
 *   `{ status, message }`.
 *
 * @since 0.1.0
 */
import { ToolExecutor } from "@toolgate/runtime"
import { Effect, Schema } from "effect"

/**
 * The failure a webhook's terminal answer becomes.
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
 * - `parse`: the result from the response's JSON (default: the JSON as is).
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

/**
 * A handler that POSTs each call to a webhook. Recovery is `manual`: a call whose outcome is
 * unknown is never re-sent without a person (or a `reconcile` probe) deciding.
 *
 * @since 0.1.0
 * @category constructors
 */
export const handler = <P, A>(options: Options<P, A>) => ({
  recovery: "manual" as const,
  ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  run: (params: P, context: ToolExecutor.HandlerContext) =>
    Effect.tryPromise({
      try: (signal) =>
        fetch(options.url, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": context.downstreamKey },
          body: JSON.stringify(options.body === undefined ? params : options.body(params)),
          signal
        }).then(async (response) => ({ status: response.status, text: await response.text() })),
      catch: (cause) => {
        const code = (cause as { cause?: { code?: string } }).cause?.code
        return code === "ECONNREFUSED"
          ? new ToolExecutor.NotApplied({ detail: "the webhook refused the connection" })
          : new ToolExecutor.Ambiguous({
            detail: `the webhook connection failed after the request was sent (${code ?? "no code"})`
          })
      }
    }).pipe(
      Effect.flatMap(({ status, text }): Effect.Effect<
        A,
        ToolExecutor.NotApplied | ToolExecutor.Ambiguous | WebhookFailure
      > => {
        if (status >= 200 && status < 300) {
          return Effect.try({
            try: () => options.parse(text === "" ? null : JSON.parse(text)),
            catch: () =>
              new ToolExecutor.Ambiguous({ detail: `the webhook answered ${status} with a body that is not JSON` })
          })
        }
        if (status === 429 || status === 503) {
          return Effect.fail(new ToolExecutor.NotApplied({ detail: `the webhook answered ${status}` }))
        }
        if (status >= 500) return Effect.fail(new ToolExecutor.Ambiguous({ detail: `the webhook answered ${status}` }))
        return Effect.fail({ status, message: text.slice(0, 200) })
      })
    )
})
