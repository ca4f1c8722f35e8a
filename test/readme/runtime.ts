/**
 * A code example of `packages/runtime/README.md`, verbatim between the markers, so that `tsc -b` type-checks it
 * (`test/readme.test.ts` checks that the README still holds it).
 */
// begin: packages/runtime/README.md
import type { ToolCall } from "@toolgate/core"
import { EmbeddedPostgres, IdempotencyStore, ToolExecutor } from "@toolgate/runtime"
import { type Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

declare const crm: {
  createTask(
    params: { dealId: string; title: string },
    options: { idempotencyKey: string; signal: AbortSignal }
  ): Effect.Effect<{ id: string }>
}
declare const call: ToolCall.ValidatedToolCall // a validated call of a turn (ToolCall.validate)

const CreateTask = Tool.make("CreateTask", {
  parameters: Schema.Struct({ dealId: Schema.String, title: Schema.String }),
  success: Schema.Struct({ id: Schema.String })
})
const Crm = Toolkit.make(CreateTask)

const Executor = ToolExecutor.layer(Crm, {
  CreateTask: {
    recovery: "reexecute",
    run: (params, ctx) => crm.createTask(params, { idempotencyKey: ctx.downstreamKey, signal: ctx.signal })
  }
}).pipe(
  Layer.provide(IdempotencyStore.layerSql()),
  // any number of processes may open the same dataDir (one machine); Node >= 22.13
  Layer.provide(EmbeddedPostgres.layer({ dataDir: ".toolgate/pg" })) // or PgClient.layer({ url })
)

const outcome = ToolExecutor.execute(call, { scope: { tenant: "acme", turn: "conv-42/msg-7" } })
// end: packages/runtime/README.md

export { Executor, outcome }
