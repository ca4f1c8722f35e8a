import { StepJournal } from "@toolgate/runtime"
import { Layer } from "effect"
import { conformance } from "./stepJournalConformance.js"
import * as Pglite from "./support/pglite.js"

conformance(
  "StepJournal conformance: PGlite (embedded, through pglite-socket)",
  StepJournal.layerSql().pipe(Layer.provide(Pglite.layer)),
  { propertyRuns: 15 }
)
