import { IdempotencyStore, Outbox } from "@toolgate/runtime"
import { Layer } from "effect"
import * as Postgres from "../../../test/support/postgres.js"
import { outboxSuite } from "./outboxSuite.js"

const pg = await Postgres.probe()
const schema = Postgres.uniqueSchema("tg_outbox")

Postgres.describeServer(pg, "PostgreSQL server", () => {
  outboxSuite(
    "outbox: PostgreSQL server",
    Layer.mergeAll(IdempotencyStore.layerSql({ schema }), Outbox.layerSql({ schema })).pipe(
      Layer.provide(Postgres.dropSchemaOnRelease(schema)),
      Layer.provide(Postgres.client(4))
    )
  )
})
