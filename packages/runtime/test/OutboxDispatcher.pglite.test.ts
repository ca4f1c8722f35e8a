import { IdempotencyStore, Outbox } from "@toolgate/runtime"
import { Layer } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { dispatcherSuite } from "./outboxDispatcherSuite.js"
import * as Pglite from "./support/pglite.js"

dispatcherSuite(
  "outbox dispatcher: PGlite",
  Layer.mergeAll(
    Layer.mergeAll(IdempotencyStore.layerSql(), Outbox.layerSql()).pipe(Layer.provide(Pglite.layer)),
    FetchHttpClient.layer
  )
)
