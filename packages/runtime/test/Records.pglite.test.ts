import { IdempotencyStore } from "@toolgate/runtime"
import { Layer } from "effect"
import { recordsSuite } from "./recordsSuite.js"
import * as Pglite from "./support/pglite.js"

recordsSuite("operator calls: PGlite", IdempotencyStore.layerSql().pipe(Layer.provide(Pglite.layer)))
