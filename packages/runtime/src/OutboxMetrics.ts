/**
 * Metrics of the outbox's delivery (effect `Metric`), in the style of `ExecutionMetrics`: fixed
 * attributes only, never a payload or a key. Alert on any `dead_lettered` (a follow-up that will
 * not be delivered without a person), on a growing `pending` gauge, and on `lease_lost` (a
 * dispatcher outlived its lease: a message may have been delivered twice, absorbed by receivers
 * that deduplicate on the delivery key).
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Schema from "effect/Schema"

/**
 * The values of the `outcome` attribute of {@link deliveries}:
 *
 * - `delivered`: a message was delivered (its destination answered 2xx, or the named dispatcher
 *   succeeded) and recorded so.
 * - `retried`: an attempt failed and the message was put back, due again after a jittered delay.
 * - `dead_lettered`: an attempt failed for good (a permanent answer, or the last attempt).
 * - `lease_lost`: a settlement was fenced off (another dispatcher leased the message since).
 *
 * @since 0.1.0
 * @category models
 */
export const Outcome = Schema.Literals(["delivered", "retried", "dead_lettered", "lease_lost"])

/** The type of {@link Outcome}. @since 0.1.0 @category models */
export type Outcome = typeof Outcome.Type

/**
 * Counter `toolgate_outbox_deliveries_total{outcome}`: delivery attempts by outcome.
 *
 * @since 0.1.0
 * @category metrics
 */
export const deliveries = Metric.counter("toolgate_outbox_deliveries_total", {
  description: "outbox delivery attempts by outcome",
  incremental: true
})

/**
 * Gauge `toolgate_outbox_pending`: messages `pending` or `delivering`, as the dispatcher last read
 * them (after each round).
 *
 * @since 0.1.0
 * @category metrics
 */
export const pending = Metric.gauge("toolgate_outbox_pending", {
  description: "outbox messages not yet delivered nor dead-lettered"
})

/**
 * Timer `toolgate_outbox_delivery_latency`: from a message's writing (the call's completion) to
 * its delivery, in milliseconds on the store's clock (histogram).
 *
 * @since 0.1.0
 * @category metrics
 */
export const deliveryLatency = Metric.timer("toolgate_outbox_delivery_latency", {
  description: "outbox delivery latency, from completion to delivery"
})

const byOutcome = new Map<Outcome, Metric.Metric<number, Metric.CounterState<number>>>()

/**
 * Adds `by` (default 1) to {@link deliveries} for one outcome.
 *
 * @since 0.1.0
 * @category metrics
 */
export const count = (outcome: Outcome, by = 1): Effect.Effect<void> => {
  let metric = byOutcome.get(outcome)
  if (metric === undefined) {
    metric = Metric.withAttributes(deliveries, { outcome })
    byOutcome.set(outcome, metric)
  }
  return Metric.update(metric, by)
}

/**
 * Records one delivery's latency (ms) in {@link deliveryLatency}.
 *
 * @since 0.1.0
 * @category metrics
 */
export const recordLatency = (ms: number): Effect.Effect<void> => Metric.update(deliveryLatency, Duration.millis(ms))

/**
 * Sets {@link pending}.
 *
 * @since 0.1.0
 * @category metrics
 */
export const setPending = (messages: number): Effect.Effect<void> => Metric.update(pending, messages)
