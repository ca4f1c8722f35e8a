/**
 * The spans of the executor's, the store's and the step journal's per-call path, opened only when a
 * tracing backend is installed: with effect's default tracer (`Tracer.nativeTracer`, which makes
 * in-memory spans and exports none) they are skipped, as effect's `Tracer` docs suggest for work
 * only a backend can observe. Three spans per execution (the execution, its claim, its complete)
 * cost about 20 µs of CPU per call with no backend to see them (`bench/RESULTS.md`, execution). With
 * a tracer installed (`Effect.withTracer`, effect's OTLP exporter) every span is opened as before:
 * the name, the attributes, no call-site stack capture (one `Error` per call costs more than the
 * rest of the span).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"

/**
 * `Effect.withSpan(name, { attributes })` when the fiber's tracer is not effect's native one; the
 * effect itself otherwise. Pipeable, and usable as an `Effect.fnUntraced` step.
 *
 * @internal
 */
export const traced =
  (name: string, attributes?: Record<string, unknown>) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiber((fiber) =>
      fiber.getRef(Tracer.Tracer) === Tracer.nativeTracer
        ? self
        : Effect.withSpan(self, name, { attributes, captureStackTrace: false })
    )
