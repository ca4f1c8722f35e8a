/**
 * Counter series with attributes, built once per attribute set. `Metric.withAttributes` returns
 * a new metric each time, whose series key (its attributes sorted, as JSON) is then computed on
 * every update; an agent step updates about ten such series, so the loop and the step stream take
 * them from here instead. The attribute values are bounded sets (providers, outcome tags, token
 * kinds), so the cache stays small.
 *
 * @internal
 */
import { Effect, Metric } from "effect";
type Counter = Metric.Metric<number, unknown>;
/** `metric` with `attributes`: the same series object for the same metric and attribute values. @internal */
export declare const withAttributes: (metric: Counter, attributes: Readonly<Record<string, string>>) => Counter;
/** Adds `by` to the series of `metric` with `attributes`; nothing when `by` is not above 0. @internal */
export declare const count: (metric: Counter, by: number, attributes: Readonly<Record<string, string>>) => Effect.Effect<void>;
export {};
//# sourceMappingURL=metricSeries.d.ts.map