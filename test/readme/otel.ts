/**
 * A code example of `README.md`, verbatim between the markers, so that `tsc -b` type-checks it
 * (`test/readme.test.ts` checks that the README still holds it).
 */
import { Effect, Layer } from "effect"

declare const program: Effect.Effect<void>
declare const Pipeline: Layer.Layer<never>

// begin: README.md
import { NodeHttpClient } from "@effect/platform-node"
import { Otlp } from "effect/observability"

const Telemetry = Otlp.layerJson({ baseUrl: "http://localhost:4318", resource: { serviceName: "agent" } })
  .pipe(Layer.provide(NodeHttpClient.layerUndici))
program.pipe(Effect.provide(Layer.merge(Pipeline, Telemetry)))
// end: README.md
