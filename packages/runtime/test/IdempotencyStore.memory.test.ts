import { IdempotencyStore } from "@toolgate/runtime"
import { claimManyConformance } from "./claimManySuite.js"
import { conformance } from "./conformance.js"

conformance("IdempotencyStore conformance: memory", IdempotencyStore.layerMemory, {
  propertyRuns: 100
})

claimManyConformance("IdempotencyStore batch claims: memory", IdempotencyStore.layerMemory, { propertyRuns: 100 })
