import { IdempotencyStore, Outbox } from "@toolgate/runtime"
import { Layer } from "effect"
import { outboxSuite } from "./outboxSuite.js"
import * as Pglite from "./support/pglite.js"

outboxSuite(
  "outbox: PGlite",
  Layer.mergeAll(IdempotencyStore.layerSql(), Outbox.layerSql()).pipe(Layer.provide(Pglite.layer)),
  { propertyRuns: 15 }
)
