/**
 * The claim loop: one execution from its call to its outcome. Derive the intent key and
 * fingerprint; claim the key; a won claim runs the handler under lease supervision (after a
 * reconcile probe on a takeover) and settles; a lost claim answers by the decision over the
 * record it returned (replay, mismatch, exhausted, unknown, park), and a live lease elsewhere
 * (or a record that changed under the claim) polls the claim on the wait schedule until it
 * settles or the wait ends (`ExecutionInProgress`). Each execution is counted once, by its exit.
 *
 * Why one long module: the steps of one execution (prepare, claim, answer, run, wait, and the
 * batch claim of `executeAll`) share the run and the executor's closures; split, each part would
 * take the same dozen parameters back.
 *
 * @internal
 */
import { type ToolCall } from "@toolgate/core";
import { Effect, Result } from "effect";
import { type ExecutionError } from "../../ExecutionError.js";
import type * as ToolExecutor from "../../ToolExecutor.js";
import { type Env } from "./config.js";
/** The executions of an executor over `env`. @internal */
export declare const make: (env: Env) => {
    execute: (call: ToolCall.ValidatedToolCall, execution: ToolExecutor.ExecuteOptions) => Effect.Effect<ToolExecutor.Outcome<unknown>, ExecutionError>;
    executeAll: (calls: readonly ToolCall.ValidatedToolCall<import("effect/ai/Tool").Any>[], turn: ToolExecutor.ExecuteAllOptions) => Effect.Effect<Result.Result<ToolExecutor.Outcome<unknown>, ExecutionError>[], never, never>;
};
//# sourceMappingURL=claimLoop.d.ts.map