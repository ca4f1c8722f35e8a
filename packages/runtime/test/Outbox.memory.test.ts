import { IdempotencyStore, Outbox } from "@toolgate/runtime"
import { Layer } from "effect"
import { outboxSuite } from "./outboxSuite.js"

outboxSuite("outbox: memory", Layer.provideMerge(Outbox.layerMemory, IdempotencyStore.layerMemory))
