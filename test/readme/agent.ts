/**
 * A code example of `README.md`, verbatim between the markers, so that `tsc -b` type-checks it
 * (`test/readme.test.ts` checks that the README still holds it, and `test/readme-agent.test.ts`
 * runs it against the fake provider, twice).
 */
// begin: README.md
import { HttpModelStream, HttpTransport } from "@toolgate/adapters"
import { Agent, EmbeddedPostgres, IdempotencyStore, StepJournal, ToolExecutor } from "@toolgate/runtime"
import { Effect, Layer, Redacted, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"

const LookupContact = Tool.make("lookup_contact", {
  description: "Find a contact by email",
  parameters: Schema.Struct({ email: Schema.String }),
  success: Schema.Struct({ lead_id: Schema.String, owner: Schema.NullOr(Schema.String) })
})
const CreateTask = Tool.make("create_task", {
  description: "Create a follow-up task for a lead",
  parameters: Schema.Struct({ lead_id: Schema.String, title: Schema.String }),
  success: Schema.Struct({ task_id: Schema.String })
})
const AssignOwner = Tool.make("assign_owner", {
  description: "Route a lead to a sales rep",
  parameters: Schema.Struct({ lead_id: Schema.String, owner_id: Schema.String }),
  success: Schema.Struct({ assigned: Schema.Boolean })
})
const crm = Toolkit.make(LookupContact, CreateTask, AssignOwner)

// The handlers: an in-memory CRM here; a real one is sent ctx.downstreamKey to deduplicate on.
const tasks = new Map<string, string>()
const Executor = ToolExecutor.layer(crm, {
  lookup_contact: { run: ({ email }) => Effect.succeed({ lead_id: `L-${email.split("@")[0]}`, owner: null }) },
  create_task: {
    recovery: "reexecute",
    run: ({ lead_id, title }, ctx) =>
      Effect.sync(() => {
        tasks.set(ctx.downstreamKey, `${lead_id}: ${title}`)
        return { task_id: `T-${tasks.size}` }
      })
  },
  assign_owner: { recovery: "reexecute", run: () => Effect.succeed({ assigned: true }) }
})

const Model = HttpModelStream.layer({
  provider: "openai-chat",
  baseUrl: process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
  apiKey: Redacted.make(process.env.OPENAI_API_KEY ?? ""),
  model: "gpt-4.1-mini"
}).pipe(Layer.provide(HttpTransport.layerNode))

// The idempotency records and the step journal, in one embedded PostgreSQL in .toolgate/
// (IdempotencyStore.layerSql and StepJournal.layerSql over PgClient.layer for a server).
const Stores = Layer.mergeAll(IdempotencyStore.layerSql(), StepJournal.layerSql()).pipe(
  Layer.provide(EmbeddedPostgres.layer({ dataDir: ".toolgate" }))
)

const Live = Agent.layer.pipe(Layer.provide(Layer.merge(Executor, Model)), Layer.provide(Stores))

// One turn of an SDR agent: the request names no tools, so the agent sends the toolkit's. Run it
// again (a redelivered event, a restarted worker): the journaled steps are replayed, not asked.
export const program = Agent.runTurn(
  {
    prompt: Prompt.make([
      { role: "system", content: "Look the lead up, create a follow-up task, route it, then say what you did." },
      { role: "user", content: "New lead: dana@acme.io asked for pricing." }
    ])
  },
  { toolkit: crm, scope: { tenant: "acme", turn: "lead-dana-pricing" }, maxSteps: 8 }
).pipe(Effect.provide(Live))

Effect.runPromise(program).then(
  (turn) => {
    for (const step of turn.steps) {
      const calls = step.calls.map((call) => `${call.name} → ${call.outcome._tag}`)
      console.log(`step ${step.step}${step.replayed ? " (journal)" : ""}: ${step.text}`, calls)
    }
    console.log(turn.stoppedBy, turn.cost)
  },
  (error) => console.error(String(error))
)
// end: README.md
