/**
 * Metrics of exactly-once execution (effect `Metric`), with no argument values in any attribute:
 * outcomes are counted by a fixed `outcome` attribute, handler time by tool name. Every
 * `ToolExecutor.execute` is counted once, by its final exit (one tap in the executor), plus the
 * events `waited`, `takeover` and `reconciled` on the way. Alert on any `lease_lost` (an effect
 * may exist twice downstream), on `store_unavailable`, and on a growing `unknown` count (each is
 * a call an operator may have to resolve).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Schema from "effect/Schema"

/**
 * The values of the `outcome` attribute of {@link executions}:
 *
 * - `executed`: the handler ran and its result was recorded.
 * - `replayed`: a recorded outcome (result or terminal failure) was returned without running.
 * - `waited`: the call waited for another worker's live lease (counted once per call, besides
 *   its final outcome).
 * - `in_progress`: the bounded wait ended without the other worker finishing.
 * - `mismatch`: the key came with another fingerprint (`IdempotencyKeyReused`).
 * - `failed`: the handler failed and the failure was recorded (`not_applied` or `applied`).
 * - `lease_lost`: a fenced write found another fence (another worker took the call over, or it
 *   was parked meanwhile).
 * - `unknown`: the outcome became, or was found, unknown (ambiguous failure, timeout, manual, an
 *   interrupted handler).
 * - `store_unavailable`: the store could not be reached for a step of the execution (the record
 *   is as its last successful write left it).
 * - `unkeyable`: the call could not be keyed (`UnkeyableArguments`, `MissingKeyField`,
 *   `MissingEventTime`); nothing was claimed.
 * - `takeover`: an expired lease or an unknown record was taken over (counted besides the result).
 * - `reconciled`: a takeover found the effect downstream through the tool's probe.
 * - `exhausted`: attempts are used up.
 * - `parked`: the reaper or an observer parked an abandoned lease as `unknown`.
 * - `purged`: settled records deleted after retention.
 *
 * @since 0.1.0
 * @category models
 */
export const Outcome = Schema.Literals([
  "executed",
  "replayed",
  "waited",
  "in_progress",
  "mismatch",
  "failed",
  "lease_lost",
  "unknown",
  "store_unavailable",
  "unkeyable",
  "takeover",
  "reconciled",
  "exhausted",
  "parked",
  "purged"
])

/** The type of {@link Outcome}. @since 0.1.0 @category models */
export type Outcome = typeof Outcome.Type

/**
 * Counter `toolgate_executions_total{outcome}`: executions by outcome (see {@link Outcome}).
 *
 * @since 0.1.0
 * @category metrics
 */
export const executions = Metric.counter("toolgate_executions_total", {
  description: "tool executions by outcome",
  incremental: true
})

/**
 * Timer `toolgate_handler_duration{tool}`: wall time of tool handlers, in milliseconds
 * (histogram; effect's default exponential buckets from 0.5 ms).
 *
 * @since 0.1.0
 * @category metrics
 */
export const handlerDuration = Metric.timer("toolgate_handler_duration", {
  description: "tool handler wall time"
})

const byOutcome = new Map<Outcome, Metric.Metric<number, Metric.CounterState<number>>>()

/**
 * The series of {@link executions} for one outcome (created once, then cached).
 *
 * @since 0.1.0
 * @category metrics
 */
export const executionsOf = (outcome: Outcome): Metric.Metric<number, Metric.CounterState<number>> => {
  let metric = byOutcome.get(outcome)
  if (metric === undefined) {
    metric = Metric.withAttributes(executions, { outcome })
    byOutcome.set(outcome, metric)
  }
  return metric
}

/**
 * Adds `by` (default 1) to {@link executions} for one outcome.
 *
 * @since 0.1.0
 * @category metrics
 */
export const count = (outcome: Outcome, by = 1): Effect.Effect<void> => Metric.update(executionsOf(outcome), by)
