import { IdempotencyStore } from "@toolgate/runtime"
import { recordsSuite } from "./recordsSuite.js"

recordsSuite("operator calls: memory", IdempotencyStore.layerMemory)
