/**
 * Counter series with attributes, built once per attribute set. `Metric.withAttributes` returns
 * a new metric each time, whose series key (its attributes sorted, as JSON) is then computed on
 * every update; an agent step updates about ten such series, so the loop and the step stream take
 * them from here instead. The attribute values are bounded sets (providers, outcome tags, token
 * kinds), so the cache stays small.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"

type Counter = Metric.Metric<number, unknown>

const series = new WeakMap<Counter, Map<string, Counter>>()

/** `metric` with `attributes`: the same series object for the same metric and attribute values. @internal */
export const withAttributes = (metric: Counter, attributes: Readonly<Record<string, string>>): Counter => {
  let byAttributes = series.get(metric)
  if (byAttributes === undefined) {
    byAttributes = new Map()
    series.set(metric, byAttributes)
  }
  const key = JSON.stringify(attributes)
  let found = byAttributes.get(key)
  if (found === undefined) {
    found = Metric.withAttributes(metric, attributes)
    byAttributes.set(key, found)
  }
  return found
}

/** Adds `by` to the series of `metric` with `attributes`; nothing when `by` is not above 0. @internal */
export const count = (metric: Counter, by: number, attributes: Readonly<Record<string, string>>): Effect.Effect<void> =>
  by > 0 ? Metric.update(withAttributes(metric, attributes), by) : Effect.void
