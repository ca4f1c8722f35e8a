/**
 * A code example of `README.md`, verbatim between the markers, so that `tsc -b` type-checks it
 * (`test/readme.test.ts` checks that the README still holds it).
 */
// begin: README.md
import { ToolExecutor, WebhookHandler } from "@toolgate/runtime"
import { Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { FetchHttpClient } from "effect/http"

const AssignOwner = Tool.make("assign_owner", {
  parameters: Schema.Struct({ lead_id: Schema.String, owner_id: Schema.String }),
  success: Schema.Struct({ id: Schema.String }),
  failure: WebhookHandler.WebhookFailure
})

const Executor = ToolExecutor.layer(Toolkit.make(AssignOwner), {
  assign_owner: WebhookHandler.handler({
    url: "https://crm.example/hooks/assign_owner",
    parse: (json) => ({ id: String((json as { id: unknown }).id) })
  })
}).pipe(Layer.provide(FetchHttpClient.layer))
// end: README.md

export { Executor }
