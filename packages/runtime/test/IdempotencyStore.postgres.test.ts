import { IdempotencyStore } from "@toolgate/runtime"
import { Layer } from "effect"
import * as Postgres from "../../../test/support/postgres.js"
import { claimManyConformance } from "./claimManySuite.js"
import { conformance } from "./conformance.js"
import { groupCommitConformance } from "./groupCommitSuite.js"

const pg = await Postgres.probe()
const schema = Postgres.uniqueSchema("tg_conf")
const batchSchema = Postgres.uniqueSchema("tg_batch")
const groupSchema = Postgres.uniqueSchema("tg_group")

Postgres.describeServer(pg, "PostgreSQL server", () => {
  conformance(
    "IdempotencyStore conformance: PostgreSQL server",
    IdempotencyStore.layerSql({ schema }).pipe(
      Layer.provide(Postgres.dropSchemaOnRelease(schema)),
      Layer.provide(Postgres.client(12))
    ),
    { propertyRuns: 30 }
  )
  claimManyConformance(
    "IdempotencyStore batch claims: PostgreSQL server",
    IdempotencyStore.layerSql({ schema: batchSchema }).pipe(
      Layer.provide(Postgres.dropSchemaOnRelease(batchSchema)),
      Layer.provide(Postgres.client(12))
    ),
    { propertyRuns: 30 }
  )
  groupCommitConformance(
    "IdempotencyStore group commit: PostgreSQL server",
    IdempotencyStore.layerSql({
      schema: groupSchema,
      groupCommit: { inFlight: 1, maxWaitMs: Number.POSITIVE_INFINITY }
    }).pipe(
      Layer.provideMerge(Postgres.dropSchemaOnRelease(groupSchema)),
      Layer.provideMerge(Postgres.client(12))
    ),
    { schema: groupSchema, propertyRuns: 30, server: true }
  )
})
