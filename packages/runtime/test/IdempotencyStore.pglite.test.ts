import { IdempotencyStore } from "@toolgate/runtime"
import { Layer } from "effect"
import { claimManyConformance } from "./claimManySuite.js"
import { conformance } from "./conformance.js"
import { groupCommitConformance } from "./groupCommitSuite.js"
import * as Pglite from "./support/pglite.js"

conformance(
  "IdempotencyStore conformance: PGlite (embedded, through EmbeddedPostgres)",
  IdempotencyStore.layerSql().pipe(Layer.provide(Pglite.layer)),
  { propertyRuns: 15 }
)

claimManyConformance(
  "IdempotencyStore batch claims: PGlite (embedded, through EmbeddedPostgres)",
  IdempotencyStore.layerSql().pipe(Layer.provide(Pglite.layer)),
  { propertyRuns: 15 }
)

groupCommitConformance(
  "IdempotencyStore group commit: PGlite (embedded, through EmbeddedPostgres)",
  IdempotencyStore.layerSql({ groupCommit: { inFlight: 1, maxWaitMs: Number.POSITIVE_INFINITY } }).pipe(
    Layer.provideMerge(Pglite.layer)
  ),
  { schema: IdempotencyStore.defaultSchema, propertyRuns: 15, server: false }
)
