/**
 * A code example of `README.md`, verbatim between the markers, so that `tsc -b` type-checks it
 * (`test/readme.test.ts` checks that the README still holds it).
 */
// begin: README.md
import { IdempotencyKey, KeyPolicy } from "@toolgate/core"
import { ToolExecutor } from "@toolgate/runtime"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

const CreateTask = Tool.make("create_task", {
  parameters: Schema.Struct({ email: Schema.String, title: Schema.String }),
  success: Schema.Struct({ id: Schema.String })
}).annotate(
  IdempotencyKey.Policy,
  KeyPolicy.makeUnsafe({
    keyFields: ["email"],
    freeText: ["title"],
    window: { size: "hour", timeZone: "Europe/Berlin" }
  })
)
const AddNote = Tool.make("add_note", {
  parameters: Schema.Struct({ deal_id: Schema.String, note: Schema.String }),
  success: Schema.Struct({ id: Schema.String })
})

const Executor = ToolExecutor.layer(Toolkit.make(CreateTask, AddNote), {
  create_task: { run: ({ email }) => Effect.succeed({ id: `task-${email}` }) },
  add_note: {
    keyPolicy: { keyFields: ["deal_id"], freeText: ["note"] }, // checked at construction
    run: ({ deal_id }) => Effect.succeed({ id: `note-${deal_id}` })
  }
})
// The window comes from the event, not from the clock at execution:
const scope = { tenant: "acme", turn: "form-7", eventTime: new Date("2024-05-01T08:59:59.900Z") }
// end: README.md

export { Executor, scope }
