import { IdempotencyStore } from "@toolgate/runtime"
import { Layer } from "effect"
import { keyPolicySuite } from "./keyPolicySuite.js"
import * as Pglite from "./support/pglite.js"

keyPolicySuite(
  "key policies through the executor: PGlite",
  IdempotencyStore.layerSql().pipe(Layer.provide(Pglite.layer))
)
