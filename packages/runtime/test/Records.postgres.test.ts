import { IdempotencyStore } from "@toolgate/runtime"
import { Layer } from "effect"
import * as Postgres from "../../../test/support/postgres.js"
import { recordsSuite } from "./recordsSuite.js"

const pg = await Postgres.probe()
const schema = Postgres.uniqueSchema("tg_records")

Postgres.describeServer(pg, "PostgreSQL server", () => {
  recordsSuite(
    "operator calls: PostgreSQL server",
    IdempotencyStore.layerSql({ schema }).pipe(
      Layer.provide(Postgres.dropSchemaOnRelease(schema)),
      Layer.provide(Postgres.client(4))
    )
  )
})
