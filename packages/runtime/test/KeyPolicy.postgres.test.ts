import { IdempotencyStore } from "@toolgate/runtime"
import { Layer } from "effect"
import * as Postgres from "../../../test/support/postgres.js"
import { keyPolicySuite } from "./keyPolicySuite.js"

const pg = await Postgres.probe()
const schema = Postgres.uniqueSchema("tg_policy")

Postgres.describeServer(pg, "PostgreSQL server", () => {
  keyPolicySuite(
    "key policies through the executor: PostgreSQL server",
    IdempotencyStore.layerSql({ schema }).pipe(
      Layer.provide(Postgres.dropSchemaOnRelease(schema)),
      Layer.provide(Postgres.client(4))
    )
  )
})
