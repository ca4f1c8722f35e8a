import { IdempotencyStore } from "@toolgate/runtime"
import { keyPolicySuite } from "./keyPolicySuite.js"

keyPolicySuite("key policies through the executor: memory", IdempotencyStore.layerMemory)
