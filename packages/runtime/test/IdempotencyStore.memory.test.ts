import { IdempotencyStore } from "@toolgate/runtime"
import { conformance } from "./conformance.js"

conformance("IdempotencyStore conformance: memory", IdempotencyStore.layerMemory, {
  propertyRuns: 100
})
