/**
 * The agent loop, step by step. A step is acquired from the journal (a won claim: ask the model;
 * a recorded step: replay it; a lease elsewhere: wait and claim again), then decided (its calls
 * validated — and, for a step asked now, its output recorded under the lease) and executed; the
 * next step's prompt is the transcript so far. The outputs are one pull-based stream: nothing of
 * step n + 1 happens before the consumer pulls past step n's `StepCompleted`, so a consumer that
 * stops there (a worker shutting down) leaves no step claimed.
 *
 * (Why one long module: acquiring, deciding and executing a step share the turn's state, the
 * transcript, the occurrences and the cost, and read in the order a step runs.)
 *
 * @internal
 */
import { ModelStream } from "@toolgate/core";
import { Effect } from "effect";
import * as Agent from "../../Agent.js";
import * as StepJournal from "../../StepJournal.js";
import * as ToolExecutor from "../../ToolExecutor.js";
/** What the agent needs in context. @internal */
export type Requirements = ModelStream.ModelStream | ToolExecutor.ToolExecutor | StepJournal.StepJournal;
/** The agent's `run`, over the services in context. @internal */
export declare const make: Effect.Effect<Agent.Service["run"], never, Requirements>;
//# sourceMappingURL=loop.d.ts.map