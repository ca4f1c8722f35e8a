/**
 * The agent loop: one turn of an agent that calls tools, reads their results and goes on until it
 * answers. Each step streams the model's response (text forwarded at once), assembles and
 * validates it, records it in the `StepJournal`, executes each of its calls exactly once through
 * the `ToolExecutor`, and appends the assistant's calls and the tool results to the prompt of the
 * next step; the turn ends when a step finishes without tool calls, after `maxSteps` steps, or
 * when `stopWhen` says so.
 *
 * ```ts
 * const result = Agent.runTurn(
 *   { prompt: Prompt.make("New inbound lead lead-0042 from Acme.") }, // tools: the toolkit's
 *   { toolkit: Crm, scope: { tenant: "acme", turn: "lead-0042-inbound" }, maxSteps: 8 }
 * ).pipe(Effect.provide(Agent.layer), Effect.provide(Live))
 * ```
 *
 * Durability. A step's completed output (text, validated calls with their arguments' exact JSON
 * text, finish reason, usage) is journaled before any of its calls runs. A turn run again with the
 * same scope (a redelivered event, a worker that crashed and was restarted) replays the journaled
 * steps without asking the model (no request, no tokens; their calls go through the executor,
 * which replays the recorded results byte for byte) and asks the model from the first step that
 * has no record. A step is claimed like a call (a lease with a fencing token on the store's clock,
 * extended by a heartbeat while the model streams): two workers on one turn never both ask the
 * model for the same step; the second waits (a bounded wait, then `StepInProgress`) and replays
 * what the first recorded. A stale worker's output is never recorded (`StepLeaseLost`; it claims
 * again and replays). A step whose model request failed releases its claim (nothing was decided),
 * so the next delivery asks again. A turn run with the same scope and another prompt is
 * `JournalMismatch`: another request's decisions are never replayed.
 *
 * What the model is shown of each call: its result (the stored JSON), or its failure as data
 * (`isFailure`, the error's tag and why), and a call whose outcome is unknown as "outcome unknown
 * — verify, do not retry". Intent keys count identical calls across all steps of the turn
 * (`IdempotencyKey.Occurrences`), so a call repeated in step 3 is a second call, not a replay of
 * the step-1 call.
 *
 * Retries and time. Only a step's model stream is retried, with the pipeline's policy
 * (`ToolCallPipeline.RetryPolicy`); one deadline (`deadlineMs`) spans the turn: each step's stream
 * gets what is left of it. Executions are bounded by the executor's handler timeouts instead (an
 * interrupted mutation is not undone). Every failure of the turn is `StepFailed`, naming the step
 * and carrying the typed error; calls' execution errors are data in the step's result.
 *
 * Cost. The turn result and the metrics ({@link metrics}, beside `ToolCallPipeline.metrics`) give
 * the tokens of each step, the tokens spent on attempts that did not complete, and the steps
 * replayed from the journal with the requests and tokens they saved.
 *
 * @since 0.1.0
 */
import { AssemblyError, type ModelStream, ModelStreamError, type StreamEvent, ToolCall } from "@toolgate/core"
import type { Prompt, Tool } from "effect/ai"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import type * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { StoreUnavailable } from "./ExecutionError.js"
import * as Loop from "./internal/agent/loop.js"
import {
  InvalidStepRequest,
  JournalMismatch,
  StepInProgress,
  StepLeaseLost,
  StepOutputTooLarge
} from "./StepJournal.js"
import type * as StepJournal from "./StepJournal.js"
import type * as ToolCallPipeline from "./ToolCallPipeline.js"

/**
 * The step journal's options of a turn. Durations in ms.
 *
 * - `leaseMs` (30,000; ≥ 100): a step's lease, extended every `heartbeatMs` while the model
 *   streams; a worker that vanishes holds the step at most this long.
 * - `heartbeatMs` (a third of the lease; ≥ 10 and ≤ half the lease).
 * - `waitMs` (60,000; ≥ 0): how long to wait for another worker's step (it is asking the model)
 *   before `StepInProgress`; `wait` is the polling schedule (default: exponential from 10 ms
 *   ×1.5, at most 250 ms apart, jittered). The wait also ends at the turn's deadline.
 * - `retentionMs` (24 h; > 0): how long recorded steps are kept. Use the executor's
 *   `retentionMs`: a turn whose steps are purged is asked again.
 *
 * @since 0.1.0
 * @category models
 */
export interface JournalOptions {
  readonly leaseMs?: number | undefined
  readonly heartbeatMs?: number | undefined
  readonly waitMs?: number | undefined
  readonly wait?: Schedule.Schedule<unknown, unknown> | undefined
  readonly retentionMs?: number | undefined
}

/**
 * Options of one turn: the pipeline's (`toolkit`, `scope`, `deadlineMs` — here the whole turn's,
 * default 10 min —, `retry`, `signal`, `assembly`, `concurrency`, `strategy`), plus:
 *
 * - `maxSteps` (8; an integer from 1 to 1,000): the most model steps; the turn stops after the
 *   step that reaches it, its calls executed (`stoppedBy: "max_steps"`).
 * - `stopWhen`: called after each step, its calls executed, with the step and every step so far;
 *   `true` ends the turn (`stoppedBy: "stop_predicate"`). It sees the same steps on a replay.
 * - `journal`: see {@link JournalOptions}.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions<Tools extends Record<string, Tool.Any>> extends ToolCallPipeline.RunOptions<Tools> {
  readonly maxSteps?: number | undefined
  readonly stopWhen?: ((step: StepResult, steps: ReadonlyArray<StepResult>) => boolean) | undefined
  readonly journal?: JournalOptions | undefined
}

/**
 * What the attempts of a step that did not complete cost, in tokens: the usage they reported, else
 * (input) the input tokens of the step's completed attempt, (output) the deltas they received.
 *
 * @since 0.1.0
 * @category models
 */
export interface FailedAttempts {
  readonly attempts: number
  readonly inputTokens: number
  readonly outputTokens: number
}

/**
 * One step of a turn.
 *
 * - `replayed`: its output came from the journal (no request was made now).
 * - `text`, `finishReason`, `usage`: the model's output (as recorded, for a replayed step).
 * - `attempts`: the stream requests that produced the output (retries included): made now, or,
 *   when `replayed`, made by the run that recorded it (and saved now).
 * - `failed`: what its attempts that did not complete cost in this run.
 * - `calls`: its calls and their outcomes (executed now, or replayed by the executor).
 *
 * @since 0.1.0
 * @category models
 */
export interface StepResult {
  readonly step: number
  readonly replayed: boolean
  readonly text: string
  readonly finishReason: string | null
  readonly usage: StreamEvent.Usage | undefined
  readonly attempts: number
  readonly failed: FailedAttempts
  readonly calls: ReadonlyArray<ToolCallPipeline.CallResult>
}

/**
 * Why a turn ended: the model answered (a step without tool calls), `maxSteps` was reached, or
 * `stopWhen` said so.
 *
 * @since 0.1.0
 * @category models
 */
export type StoppedBy = "answer" | "max_steps" | "stop_predicate"

/**
 * What a turn cost in this run, and what the journal saved it. Tokens as the provider reported
 * them.
 *
 * - `modelRequests`: stream requests sent (every attempt of every step asked now).
 * - `inputTokens`, `outputTokens`: reported by the completed attempts of the steps asked now.
 * - `failedAttempts`, `failedInputTokens`, `failedOutputTokens`: attempts that did not complete
 *   and what they cost (see {@link FailedAttempts}).
 * - `stepsReplayed`: steps replayed from the journal; `requestsSaved`: the requests those steps
 *   took when they were asked (their recorded attempts); `savedInputTokens`, `savedOutputTokens`:
 *   their recorded usage.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cost {
  readonly modelRequests: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly failedAttempts: number
  readonly failedInputTokens: number
  readonly failedOutputTokens: number
  readonly stepsReplayed: number
  readonly requestsSaved: number
  readonly savedInputTokens: number
  readonly savedOutputTokens: number
}

/**
 * A completed turn.
 *
 * - `text`, `finishReason`: the last step's (its answer, when `stoppedBy` is `answer`).
 * - `steps`: every step, replayed ones included.
 * - `transcript`: the request's prompt followed by each step's assistant message (text and tool
 *   calls) and tool message (the results): the conversation to continue from.
 * - `usage`: the turn's usage, summed over its steps as recorded (whichever run asked them);
 *   fields no step reported are absent.
 * - `cost`: what this run spent and saved.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnResult {
  readonly text: string
  readonly finishReason: string | null
  readonly stoppedBy: StoppedBy
  readonly steps: ReadonlyArray<StepResult>
  readonly transcript: Prompt.Prompt
  readonly usage: StreamEvent.Usage
  readonly cost: Cost
}

/**
 * What can fail a step: getting or assembling its stream, validating its calls, or the journal.
 *
 * @since 0.1.0
 * @category models
 */
export type StepError =
  | ToolCallPipeline.PipelineError
  | StepJournal.StepLeaseLost
  | StepJournal.StepInProgress
  | StepJournal.JournalMismatch
  | StepJournal.StepOutputTooLarge
  | StepJournal.InvalidStepRequest
  | StoreUnavailable

/**
 * Schema of {@link StepError}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StepError = Schema.Union([
  AssemblyError.AssemblyError,
  ModelStreamError.ModelStreamError,
  ToolCall.UnknownTool,
  ToolCall.ToolArgumentsInvalid,
  StepLeaseLost,
  StepInProgress,
  JournalMismatch,
  StepOutputTooLarge,
  InvalidStepRequest,
  StoreUnavailable
])

/**
 * A step of the turn failed: `step` names it (1 for the first model response), `error` is the
 * typed reason. The steps before it are journaled and their calls executed: running the turn
 * again with the same scope replays them and asks again from this step (unless the error says it
 * must not be asked: `JournalMismatch`).
 *
 * @since 0.1.0
 * @category errors
 */
export class StepFailed extends Schema.TaggedError<StepFailed>()("StepFailed", {
  step: Schema.Int,
  error: StepError
}) {
  override get message(): string {
    return `step ${this.step}: ${this.error._tag}: ${this.error.message}`
  }
}

/**
 * An option of the turn breaks its rule (see {@link RunOptions} and {@link JournalOptions});
 * nothing ran.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidAgentOptions extends Schema.TaggedError<InvalidAgentOptions>()("InvalidAgentOptions", {
  option: Schema.Literals(["maxSteps", "deadlineMs", "leaseMs", "heartbeatMs", "waitMs", "retentionMs"]),
  value: Schema.String,
  rule: Schema.String
}) {
  override get message(): string {
    return `invalid agent option ${this.option} = ${this.value}: must be ${this.rule}`
  }
}

/**
 * What a turn can fail with.
 *
 * @since 0.1.0
 * @category models
 */
export type AgentError = StepFailed | InvalidAgentOptions

/**
 * What a turn emits, in order:
 *
 * - `StepStarted`: a step begins; `replayed` when its output comes from the journal.
 * - `TextDelta`: the step's text as it arrives, tagged with its attempt (a replayed step's text
 *   comes whole, tagged with the attempt that produced it).
 * - `AttemptFailed`: an attempt of the step failed and is retried (a UI drops that attempt's
 *   text); also a step whose lease was lost (`StepLeaseLost`) and is claimed again.
 * - `CallCompleted`: one call of the step and its outcome, in call order, once they all ran.
 * - `StepCompleted`: the step, its calls executed.
 * - `TurnCompleted`: the turn's result, last.
 *
 * @since 0.1.0
 * @category models
 */
export type Output =
  | { readonly _tag: "StepStarted"; readonly step: number; readonly replayed: boolean }
  | { readonly _tag: "TextDelta"; readonly step: number; readonly text: string; readonly attempt: number }
  | {
    readonly _tag: "AttemptFailed"
    readonly step: number
    readonly attempt: number
    readonly error: StepError
    /** The back-off before the next attempt, in ms. */
    readonly retryInMs: number
  }
  | { readonly _tag: "CallCompleted"; readonly step: number; readonly call: ToolCallPipeline.CallResult }
  | { readonly _tag: "StepCompleted"; readonly result: StepResult }
  | { readonly _tag: "TurnCompleted"; readonly result: TurnResult }

/**
 * The agent's metrics (effect `Metric`s), beside the pipeline's (`ToolCallPipeline.metrics`,
 * which count every step's stream attempts, retries and failed-attempt tokens). Attributes:
 * `provider` (the model stream's), `source` (`model`: asked now, `journal`: replayed), `kind`
 * (`input` or `output`), `outcome` (`answer`, `max_steps`, `stop_predicate`, or the error tag of a
 * failed turn).
 *
 * - `toolgate_agent_steps_total`: steps by `source`;
 * - `toolgate_agent_step_tokens`: a histogram of the tokens of each step asked now, by `kind`
 *   (from the finish's usage);
 * - `toolgate_agent_requests_saved_total`: model requests replayed steps saved (their recorded
 *   attempts);
 * - `toolgate_agent_tokens_saved_total`: tokens replayed steps saved (their recorded usage), by
 *   `kind`;
 * - `toolgate_agent_turns_total`: turns by `outcome`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const metrics = {
  steps: Metric.counter("toolgate_agent_steps_total", {
    description: "agent steps, by source: asked of the model now, or replayed from the journal"
  }),
  stepTokens: Metric.histogram("toolgate_agent_step_tokens", {
    description: "tokens of each step asked of the model, by kind (input or output)",
    boundaries: Metric.exponentialBoundaries({ start: 16, factor: 2, count: 17 })
  }),
  requestsSaved: Metric.counter("toolgate_agent_requests_saved_total", {
    description: "model requests not made because the step was replayed from the journal"
  }),
  tokensSaved: Metric.counter("toolgate_agent_tokens_saved_total", {
    description: "tokens not spent because the step was replayed from the journal, by kind"
  }),
  turns: Metric.counter("toolgate_agent_turns_total", { description: "agent turns, by outcome" })
} as const

/**
 * The agent service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Runs one turn (see the module docs). A request without `tools` is sent the toolkit's
   * (`ModelStream.toolsOf`). Fails with `StepFailed` (naming the step) or `InvalidAgentOptions`.
   */
  readonly run: <Tools extends Record<string, Tool.Any>>(
    request: ModelStream.ModelRequest,
    options: RunOptions<Tools>
  ) => Stream.Stream<Output, AgentError>
}

/**
 * The agent service tag.
 *
 * @since 0.1.0
 * @category services
 */
export class Agent extends Context.Service<Agent, Service>()("@toolgate/runtime/Agent") {}

/**
 * Builds the agent over the `ModelStream`, `ToolExecutor` and `StepJournal` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, Loop.Requirements> = Effect.map(Loop.make, (run) => Agent.of({ run }))

/**
 * The agent layer: needs a `ModelStream` (e.g. `HttpModelStream.layer` of `@toolgate/adapters`), a
 * `ToolExecutor` (over an `IdempotencyStore`) and a `StepJournal` (`StepJournal.layerSql` on the
 * same `SqlClient`, or `layerMemory`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Agent, never, Loop.Requirements> = Layer.effect(Agent, make)

/**
 * Runs one turn through the agent in context, streaming its outputs.
 *
 * @since 0.1.0
 * @category running
 */
export const run = <Tools extends Record<string, Tool.Any>>(
  request: ModelStream.ModelRequest,
  options: RunOptions<Tools>
): Stream.Stream<Output, AgentError, Agent> =>
  Stream.unwrap(Agent.use((agent) => Effect.succeed(agent.run(request, options))))

/**
 * Runs one turn through the agent in context and returns its result (the text deltas dropped).
 *
 * @since 0.1.0
 * @category running
 */
export const runTurn = <Tools extends Record<string, Tool.Any>>(
  request: ModelStream.ModelRequest,
  options: RunOptions<Tools>
): Effect.Effect<TurnResult, AgentError, Agent> =>
  Agent.use((agent) =>
    agent.run(request, options).pipe(
      Stream.runFold(
        () => undefined as TurnResult | undefined,
        (acc, o) => o._tag === "TurnCompleted" ? o.result : acc
      ),
      Effect.map((result) => result!)
    )
  )
