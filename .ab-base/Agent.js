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
import { AssemblyError, ModelStreamError, ToolCall } from "@toolgate/core";
import { Context, Effect, Layer, Metric, Schema, Stream } from "effect";
import { StoreUnavailable } from "./ExecutionError.js";
import * as Loop from "./internal/agent/loop.js";
import { InvalidStepRequest, JournalMismatch, StepInProgress, StepLeaseLost, StepOutputTooLarge } from "./StepJournal.js";
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
]);
/**
 * A step of the turn failed: `step` names it (1 for the first model response), `error` is the
 * typed reason. The steps before it are journaled and their calls executed: running the turn
 * again with the same scope replays them and asks again from this step (unless the error says it
 * must not be asked: `JournalMismatch`).
 *
 * @since 0.1.0
 * @category errors
 */
export class StepFailed extends Schema.TaggedError()("StepFailed", {
    step: Schema.Int,
    error: StepError
}) {
    get message() {
        return `step ${this.step}: ${this.error._tag}: ${this.error.message}`;
    }
}
/**
 * An option of the turn breaks its rule (see {@link RunOptions} and {@link JournalOptions});
 * nothing ran.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidAgentOptions extends Schema.TaggedError()("InvalidAgentOptions", {
    option: Schema.Literals(["maxSteps", "deadlineMs", "leaseMs", "heartbeatMs", "waitMs", "retentionMs"]),
    value: Schema.String,
    rule: Schema.String
}) {
    get message() {
        return `invalid agent option ${this.option} = ${this.value}: must be ${this.rule}`;
    }
}
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
};
/**
 * The agent service tag.
 *
 * @since 0.1.0
 * @category services
 */
export class Agent extends Context.Service()("@toolgate/runtime/Agent") {
}
/**
 * Builds the agent over the `ModelStream`, `ToolExecutor` and `StepJournal` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.map(Loop.make, (run) => Agent.of({ run }));
/**
 * The agent layer: needs a `ModelStream` (e.g. `HttpModelStream.layer` of `@toolgate/adapters`), a
 * `ToolExecutor` (over an `IdempotencyStore`) and a `StepJournal` (`StepJournal.layerSql` on the
 * same `SqlClient`, or `layerMemory`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Agent, make);
/**
 * Runs one turn through the agent in context, streaming its outputs.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (request, options) => Stream.unwrap(Agent.use((agent) => Effect.succeed(agent.run(request, options))));
/**
 * Runs one turn through the agent in context and returns its result (the text deltas dropped).
 *
 * @since 0.1.0
 * @category running
 */
export const runTurn = (request, options) => Agent.use((agent) => agent.run(request, options).pipe(Stream.runFold(() => undefined, (acc, o) => o._tag === "TurnCompleted" ? o.result : acc), Effect.map((result) => result)));
//# sourceMappingURL=Agent.js.map