import { StepJournal } from "@toolgate/runtime"
import { conformance } from "./stepJournalConformance.js"

conformance("StepJournal conformance: memory", StepJournal.layerMemory, { propertyRuns: 100 })
