/**
 * Settling outcomes: how the end of a won claim is written to its record — a result completes it,
 * a failure fails or releases it, an ambiguous end, timeout or interruption parks it `unknown`, a
 * lost lease is journalled — each write fenced and retried when the store was briefly
 * unreachable, each stored error a `StoredError` bounded by the executor's size limit. Also the
 * one metric tap: every execution is counted once, by its final exit, in `outcomeOf`.
 *
 * @internal
 */
import { Cause, Effect, Exit } from "effect";
import { type ExecutionError } from "../../ExecutionError.js";
import * as ExecutionMetrics from "../../ExecutionMetrics.js";
import type * as IdempotencyStore from "../../IdempotencyStore.js";
import * as StoredError from "../../StoredError.js";
import type * as ToolExecutor from "../../ToolExecutor.js";
import type { Env, LiveContext, Run } from "./config.js";
/** The reasons an attempt parks its own record `unknown` with. */
type AmbiguousReason = typeof StoredError.Ambiguous.Type["reason"];
/** The first typed failure of a cause. @internal */
export declare const lastFailure: (cause: Cause.Cause<unknown>) => unknown;
/**
 * The metric outcome of an execution's final exit (`undefined`: not counted — an interruption
 * before anything was written, or a defect of the executor itself).
 *
 * @internal
 */
export declare const outcomeOf: (run: Run | undefined, exit: Exit.Exit<ToolExecutor.Outcome<unknown>, ExecutionError>) => ExecutionMetrics.Outcome | undefined;
/**
 * Counts an execution by its final exit and records its handler's duration (when a handler ran),
 * in one step: the one place execution outcomes and handler durations reach the metrics.
 *
 * @internal
 */
export declare const tap: (run: Run | undefined, exit: Exit.Exit<ToolExecutor.Outcome<unknown>, ExecutionError>) => Effect.Effect<void>;
/** The settling steps of an executor over `env`. @internal */
export declare const make: (env: Env) => {
    retryStore: <A, E extends {
        readonly _tag: string;
    }>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>;
    finish: (run: Run, lease: IdempotencyStore.Lease, context: LiveContext, value: unknown, reconciled: boolean) => Effect.Effect<ToolExecutor.Outcome<unknown>, ExecutionError, never>;
    failed: (run: Run, lease: IdempotencyStore.Lease, context: LiveContext, cause: Cause.Cause<unknown>) => Effect.Effect<never, ExecutionError, never>;
    parkOwn: (run: Run, lease: IdempotencyStore.Lease, context: LiveContext, reason: AmbiguousReason, detail: string) => Effect.Effect<never, ExecutionError>;
};
export {};
//# sourceMappingURL=settle.d.ts.map