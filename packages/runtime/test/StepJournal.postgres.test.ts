import { StepJournal } from "@toolgate/runtime"
import { Layer } from "effect"
import * as Postgres from "../../../test/support/postgres.js"
import { conformance } from "./stepJournalConformance.js"

const pg = await Postgres.probe()
const schema = Postgres.uniqueSchema("tg_steps")

Postgres.describeServer(pg, "PostgreSQL server", () => {
  conformance(
    "StepJournal conformance: PostgreSQL server",
    StepJournal.layerSql({ schema }).pipe(
      Layer.provide(Postgres.dropSchemaOnRelease(schema)),
      Layer.provide(Postgres.client(12))
    ),
    { propertyRuns: 30 }
  )
})
