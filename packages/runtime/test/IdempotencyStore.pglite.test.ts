import { IdempotencyStore } from "@toolgate/runtime"
import { Layer } from "effect"
import { conformance } from "./conformance.js"
import * as Pglite from "./support/pglite.js"

conformance(
  "IdempotencyStore conformance: PGlite (embedded, through EmbeddedPostgres)",
  IdempotencyStore.layerSql().pipe(Layer.provide(Pglite.layer)),
  { propertyRuns: 15 }
)
