/**
 * A worker process for `test/agent-processes.test.ts`: one delivery of an SDR lead's turn through
 * the built agent loop (`@toolgate/runtime` and `@toolgate/adapters`, dist), against the fake
 * provider (OpenAI Chat) and the fake CRM the parent runs, on the embedded store or the
 * PostgreSQL server. Reads one JSON argument:
 *
 * - `store`: `{ kind: "embedded", dataDir }` or `{ kind: "postgres", url, schema }`.
 * - `provider`, `crm`: the servers' URLs; `scope`: `{ tenant, turn }`; `lead`: the lead's id.
 * - `pauseAfterStep` (optional): once that step's calls have executed, print its event and stop
 *   there (the parent SIGKILLs the process).
 * - `leaseMs` (optional): the step journal's lease.
 *
 * Prints one JSON line per completed step, `{ event: "step", step, replayed, calls }` (each
 * call's outcome tag), and at the end `{ event: "done", transcript, cost, stoppedBy }` with the
 * transcript as effect/ai's encoded `Prompt`; a failed turn prints `{ event: "failed", error }` and
 * exits 1.
 */
import { PgClient } from "@effect/sql-pg"
import { HttpModelStream, HttpTransport } from "@toolgate/adapters"
import { Agent, EmbeddedPostgres, IdempotencyStore, StepJournal, ToolExecutor, WebhookHandler } from "@toolgate/runtime"
import { Effect, Layer, Redacted, Schema, Stream } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import * as FetchHttpClient from "effect/http/FetchHttpClient"

const config = JSON.parse(process.argv[2])

const LookupContact = Tool.make("lookup_contact", {
  parameters: Schema.Struct({ lead_id: Schema.String, email: Schema.String }),
  success: Schema.Struct({ contact_id: Schema.String, segment: Schema.String })
})
const CreateTask = Tool.make("create_task", {
  parameters: Schema.Struct({ lead_id: Schema.String, title: Schema.String }),
  success: Schema.Struct({ id: Schema.String }),
  failure: WebhookHandler.WebhookFailure
})
const AssignOwner = Tool.make("assign_owner", {
  parameters: Schema.Struct({ lead_id: Schema.String, owner_id: Schema.String }),
  success: Schema.Struct({ id: Schema.String }),
  failure: WebhookHandler.WebhookFailure
})
const toolkit = Toolkit.make(LookupContact, CreateTask, AssignOwner)

const webhook = (action) =>
  WebhookHandler.handler({
    url: `${config.crm}/tools/${action}`,
    body: (params) => ({ lead: params.lead_id, action, ...params }),
    parse: (json) => ({ id: String(json.id) })
  })

const Sql = config.store.kind === "embedded"
  ? EmbeddedPostgres.layer({ dataDir: config.store.dataDir })
  : PgClient.layer({ url: Redacted.make(config.store.url), maxConnections: 4 })
const schema = config.store.kind === "embedded" ? {} : { schema: config.store.schema }
const Stores = Layer.mergeAll(IdempotencyStore.layerSql(schema), StepJournal.layerSql(schema)).pipe(Layer.provide(Sql))
const Live = Agent.layer.pipe(
  Layer.provide(
    ToolExecutor.layer(toolkit, {
      lookup_contact: {
        run: (params) => Effect.succeed({ contact_id: `ct_${params.lead_id}`, segment: "mid-market" })
      },
      create_task: webhook("create_task"),
      assign_owner: webhook("assign_owner")
    }).pipe(Layer.provide(FetchHttpClient.layer))
  ),
  Layer.provide(
    HttpModelStream.layer({
      provider: "openai-chat",
      baseUrl: `${config.provider}/v1`,
      model: "gpt-test",
      apiKey: Redacted.make("sk-test")
    }).pipe(Layer.provide(HttpTransport.layerNode))
  ),
  Layer.provide(Stores)
)

const line = (value) => process.stdout.write(`${JSON.stringify(value)}\n`)

const request = {
  prompt: Prompt.make([
    { role: "system", content: "You are an SDR agent: look up the contact, create a task, assign the owner." },
    { role: "user", content: `New inbound lead ${config.lead}.` }
  ])
}

const turn = Agent.run(request, {
  toolkit,
  scope: config.scope,
  retry: { baseDelayMs: 50 },
  ...(config.leaseMs === undefined ? {} : { journal: { leaseMs: config.leaseMs } })
}).pipe(
  Stream.runForEach((output) =>
    Effect.gen(function*() {
      if (output._tag === "StepCompleted") {
        const { calls, replayed, step } = output.result
        line({ event: "step", step, replayed, calls: calls.map((c) => c.outcome._tag) })
        if (step === config.pauseAfterStep) yield* Effect.never
      } else if (output._tag === "TurnCompleted") {
        const { cost, stoppedBy, transcript } = output.result
        line({ event: "done", transcript: Schema.encodeSync(Prompt.Prompt)(transcript), cost, stoppedBy })
      }
    })
  )
)

Effect.runPromise(turn.pipe(Effect.provide(Live))).then(
  () => process.exit(0),
  (error) => {
    line({ event: "failed", error: String(error) })
    process.exit(1)
  }
)
