/**
 * The cached counter series of the agent loop and the step stream: the same series object for the
 * same attributes, and every update landing in the series `Metric.withAttributes` names, with the
 * same total.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Metric, Schema } from "effect"
import * as MetricSeries from "../src/internal/metricSeries.js"

const counter = Metric.counter("toolgate_test_metric_series_total", { description: "test series" })

/** One update: its attribute values (few, so that series repeat) and its amount (0 and negatives included). */
const Update = Schema.Struct({
  provider: Schema.Literals(["openai-chat", "anthropic"]),
  outcome: Schema.Literals(["completed", "failed", "aborted"]),
  by: Schema.Int.check(Schema.isBetween({ minimum: -2, maximum: 5 }))
})

describe("MetricSeries", () => {
  it("returns one series object per metric and attribute values", () => {
    const a = MetricSeries.withAttributes(counter, { provider: "anthropic", outcome: "completed" })
    assert.strictEqual(MetricSeries.withAttributes(counter, { provider: "anthropic", outcome: "completed" }), a)
    assert.notStrictEqual(MetricSeries.withAttributes(counter, { provider: "anthropic", outcome: "failed" }), a)
  })

  it.prop(
    "any updates: each series holds what Metric.withAttributes counts, only amounts above 0 added",
    { updates: Schema.Array(Update) },
    ({ updates }) =>
      Effect.gen(function*() {
        for (const u of updates) yield* MetricSeries.count(counter, u.by, { provider: u.provider, outcome: u.outcome })
        for (const provider of ["openai-chat", "anthropic"] as const) {
          for (const outcome of ["completed", "failed", "aborted"] as const) {
            const expected = updates
              .filter((u) => u.provider === provider && u.outcome === outcome && u.by > 0)
              .reduce((n, u) => n + u.by, 0)
            const state = yield* Metric.value(Metric.withAttributes(counter, { provider, outcome }))
            assert.strictEqual(state.count, expected)
          }
        }
      }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()), Effect.runSync)
  )
})
