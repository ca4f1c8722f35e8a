/**
 * The lead entity: one `effect/cluster` entity per lead (entity id `tenant/leadId`), whose one
 * message, `Handle`, is a {@link LeadEvent.LeadEvent} and whose handler runs the agent turn that
 * answers it. The cluster routes every event of a lead to the runner that owns the lead's shard, one
 * at a time (an entity handles its messages in order), and different leads spread over the runners.
 *
 * Where each guarantee comes from:
 *
 * - the cluster (`Sharding`, `SqlMessageStorage`, `SqlRunnerStorage`): the message is persisted
 *   (`ClusterSchema.Persisted`) before the sender is acknowledged; a shard is owned by one runner
 *   at a time (shard locks); a message whose runner died is delivered again by the shard's next
 *   owner (at least once); a second send with the same primary key (the event id) is the same
 *   message and gets the first one's reply;
 * - toolgate: a delivery that runs again replays the turn's journaled steps (`StepJournal`, no
 *   model request) and the recorded calls (`ToolExecutor` over the `IdempotencyStore`): each
 *   effect happens once whatever the number of deliveries.
 *
 * A turn that fails for a reason that may pass (another worker still holds a step's lease, the
 * store did not answer) runs again after a back-off (`retry`); any other failure, or one that
 * outlasts the retries, is the event's answer: {@link TurnFailed}, recorded as its reply.
 *
 * @since 0.1.0
 */
import { ModelStream } from "@toolgate/core"
import { Agent } from "@toolgate/runtime"
import { Prompt, type Tool, type Toolkit } from "effect/ai"
import { ClusterSchema, Entity } from "effect/cluster"
import * as Effect from "effect/Effect"
import { Rpc } from "effect/rpc"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as LeadEvent from "./LeadEvent.js"

/**
 * One call of the turn and its outcome's tag (`Executed`, `Replayed`, `Failed`), with the error's
 * tag for a failed one.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CallSummary = Schema.Struct({
  step: Schema.Int,
  name: Schema.String,
  outcome: Schema.String,
  error: Schema.optionalKey(Schema.String)
})

/**
 * The answer to a lead event: the turn's final text and how it ended, its steps (and how many the
 * journal replayed), its model requests in the run that answered, its calls, and `runner`, the
 * label of the runner that answered (`host:port`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Answer = Schema.Struct({
  eventId: Schema.String,
  text: Schema.String,
  stoppedBy: Schema.String,
  steps: Schema.Int,
  stepsReplayed: Schema.Int,
  modelRequests: Schema.Int,
  calls: Schema.Array(CallSummary),
  runner: Schema.String
})

/**
 * The type of {@link Answer}.
 *
 * @since 0.1.0
 * @category models
 */
export type Answer = typeof Answer.Type

/**
 * The turn of a lead event failed: `step` (0 when no step ran) and the typed error's tag and
 * message (`StepFailed` naming a token limit, a concatenated call, a stream that never completed
 * …). Recorded as the event's reply: the event is answered, not delivered again.
 *
 * @since 0.1.0
 * @category errors
 */
export class TurnFailed extends Schema.TaggedError<TurnFailed>()("TurnFailed", {
  eventId: Schema.String,
  step: Schema.Int,
  error: Schema.String,
  reason: Schema.String,
  runner: Schema.String
}) {
  override get message(): string {
    return `event ${this.eventId}: step ${this.step}: ${this.error}: ${this.reason}`
  }
}

/**
 * The entity's message: a lead event, persisted, its primary key the event id.
 *
 * @since 0.1.0
 * @category protocol
 */
export const Handle = Rpc.make("Handle", {
  payload: LeadEvent.LeadEvent,
  success: Answer,
  error: TurnFailed
}).annotate(ClusterSchema.Persisted, true)

/**
 * The lead entity (type `Lead`).
 *
 * @since 0.1.0
 * @category entities
 */
export const Lead = Entity.make("Lead", [Handle])

/**
 * The instructions the default request starts with.
 *
 * @since 0.1.0
 * @category requests
 */
export const instructions = "You are an SDR agent. For each inbound lead event: look up the contact, " +
  "create a follow-up task, assign the lead to its owner, then say what you did."

/**
 * What the event says, as the user message of the turn (one line per field).
 *
 * @since 0.1.0
 * @category requests
 */
export const describe = (event: LeadEvent.LeadEvent): string => {
  const head = `Lead ${event.leadId} of tenant ${event.tenant}, event ${event.eventId} at ${event.eventTime}`
  const p = event.payload
  switch (p._tag) {
    case "form_submission":
      return `${head}: form ${p.form} submitted\n${Object.entries(p.fields).map(([k, v]) => `${k}: ${v}`).join("\n")}`
    case "chat_message":
      return `${head}: chat message\n${p.text}`
    case "inbound_email":
      return `${head}: inbound email from ${p.from}\nSubject: ${p.subject}\n\n${p.body}`
  }
}

/**
 * The default model request of an event: {@link instructions}, then {@link describe}; the
 * toolkit's tools; `providerOptions.user` names the lead (`tenant/leadId`), as OpenAI's `user`
 * field.
 *
 * @since 0.1.0
 * @category requests
 */
export const requestOf = (
  event: LeadEvent.LeadEvent,
  toolkit: Toolkit.Toolkit<Record<string, Tool.Any>>
): ModelStream.ModelRequest => ({
  prompt: Prompt.make([
    { role: "system", content: instructions },
    { role: "user", content: describe(event) }
  ]),
  tools: ModelStream.toolsOf(toolkit),
  toolChoice: "auto",
  providerOptions: { user: LeadEvent.entityId(event) }
})

/**
 * Options of the entity's handler.
 *
 * - `toolkit`: the tools the agent may call (their handlers are the `ToolExecutor`'s).
 * - `runner`: this runner's label, reported in each answer (`host:port`).
 * - `request`: the model request of an event (default {@link requestOf}).
 * - `turn`: the agent's options (`maxSteps`, `journal`, `deadlineMs`, `retry`, …) but the
 *   toolkit and scope, which come from the event.
 * - `retry`: how often a turn failing with a passing reason runs again (default: 5 times,
 *   exponential from 500 ms).
 * - `maxIdleTime`: how long an idle lead stays resident on its runner (default 1 minute).
 * - `onTurn`: called with each answer or failure (a worker's log).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly toolkit: Toolkit.Toolkit<Record<string, Tool.Any>>
  readonly runner: string
  readonly request?: ((event: LeadEvent.LeadEvent) => ModelStream.ModelRequest) | undefined
  readonly turn?:
    | Omit<Agent.RunOptions<Record<string, Tool.Any>>, "toolkit" | "scope">
    | undefined
  readonly retry?: Schedule.Schedule<unknown, unknown> | undefined
  readonly maxIdleTime?: number | undefined
  readonly onTurn?:
    | ((event: LeadEvent.LeadEvent, outcome: Answer | TurnFailed) => Effect.Effect<void>)
    | undefined
}

/** Reasons a turn fails that pass with time: run it again (it replays what was done). */
const passing = new Set(["StepInProgress", "StepLeaseLost", "StoreUnavailable"])

const isPassing = (error: Agent.AgentError) => error._tag === "StepFailed" && passing.has(error.error._tag)

const summarize = (event: LeadEvent.LeadEvent, runner: string, result: Agent.TurnResult): Answer => ({
  eventId: event.eventId,
  text: result.text,
  stoppedBy: result.stoppedBy,
  steps: result.steps.length,
  stepsReplayed: result.cost.stepsReplayed,
  modelRequests: result.cost.modelRequests,
  calls: result.steps.flatMap((s) =>
    s.calls.map((c) => ({
      step: s.step,
      name: c.name,
      outcome: c.outcome._tag,
      ...(c.outcome._tag === "Failed" ? { error: c.outcome.error._tag } : {})
    }))
  ),
  runner
})

/**
 * Runs the turn answering one event through the `Agent` in context (see the module docs for the
 * retries). Fails with {@link TurnFailed}.
 *
 * @since 0.1.0
 * @category running
 */
export const answer =
  (options: Options) => (event: LeadEvent.LeadEvent): Effect.Effect<Answer, TurnFailed, Agent.Agent> =>
    Agent.runTurn(options.request?.(event) ?? requestOf(event, options.toolkit), {
      ...options.turn,
      toolkit: options.toolkit,
      scope: LeadEvent.scopeOf(event)
    }).pipe(
      Effect.retry({
        schedule: options.retry ?? Schedule.exponential("500 millis").pipe(Schedule.upTo({ times: 5 })),
        while: isPassing
      }),
      Effect.map((result) => summarize(event, options.runner, result)),
      Effect.mapError((error) =>
        new TurnFailed({
          eventId: event.eventId,
          step: error._tag === "StepFailed" ? error.step : 0,
          error: error._tag === "StepFailed" ? error.error._tag : error._tag,
          reason: error._tag === "StepFailed" ? error.error.message : error.message,
          runner: options.runner
        })
      ),
      Effect.tapError((failure) => options.onTurn?.(event, failure) ?? Effect.void),
      Effect.tap((reply) => options.onTurn?.(event, reply) ?? Effect.void)
    )

/**
 * Registers the lead entity with the `Sharding` in context: each `Handle` runs
 * {@link answer} on the `Agent` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options) =>
  Lead.toLayer(
    Effect.gen(function*() {
      const agent = yield* Agent.Agent
      const run = answer(options)
      return Lead.of({
        Handle: (request) => run(request.payload).pipe(Effect.provideService(Agent.Agent, agent))
      })
    }),
    { maxIdleTime: options.maxIdleTime ?? 60_000 }
  )
