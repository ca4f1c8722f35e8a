/**
 * One model response under the pipeline's retry policy: the request streamed through the
 * `ModelStream`, assembled, and retried (a fresh request) while the failure is retryable, the
 * back-off schedule has room and the deadline is not reached. Text is emitted as it arrives,
 * tagged with its attempt; a retried attempt is announced; the last element is the assembled
 * response with what its attempts cost. `ToolCallPipeline` (one response) and `Agent` (one per
 * step) share it, so a step of the loop is retried exactly as a turn of the pipeline is.
 *
 * Cost of an attempt that does not complete: the usage it reported before failing (Anthropic
 * reports the input tokens at `message_start`), else, for the input, the completed attempt's
 * input tokens (the same request, so the same prompt: an estimate); for the output, the larger of
 * the reported output tokens and the deltas received (about one token each on OpenAI-style
 * streams).
 *
 * @internal
 */
import { Assembler, type AssemblyError, type ModelStream, ModelStreamError } from "@toolgate/core";
import { Metric, Stream } from "effect";
import type * as ToolCallPipeline from "../ToolCallPipeline.js";
/** The failures of one response (the pipeline's `PipelineError` without validation). @internal */
export type StepStreamError = AssemblyError.AssemblyError | ModelStreamError.ModelStreamError;
/** What one response is granted. @internal */
export interface Budget {
    /** The absolute deadline, ms on effect's `Clock`. */
    readonly deadline: number;
    /** The whole budget it came from (the `budgetMs` of a deadline `StreamTimeout`). */
    readonly deadlineMs: number;
    readonly signal?: AbortSignal | undefined;
    /** Its schedule (`isRetryable` is read from `isRetryable` below). */
    readonly retry?: ToolCallPipeline.RetryPolicy | undefined;
    readonly assembly?: Assembler.Options | undefined;
    readonly isRetryable: (error: StepStreamError) => boolean;
}
/** What the attempts that did not complete cost, in tokens. @internal */
export interface FailedCost {
    readonly attempts: number;
    readonly inputTokens: number;
    readonly outputTokens: number;
}
/** @internal */
export type Emitted = {
    readonly _tag: "TextDelta";
    readonly text: string;
    readonly attempt: number;
} | {
    readonly _tag: "AttemptFailed";
    readonly attempt: number;
    readonly error: StepStreamError;
    readonly retryInMs: number;
} | {
    readonly _tag: "Assembled";
    readonly turn: Assembler.AssembledTurn;
    readonly attempts: number;
    readonly failed: FailedCost;
};
/** The pipeline's metrics (documented on `ToolCallPipeline.metrics`). @internal */
export declare const metrics: {
    readonly streamsStarted: Metric.Counter<number>;
    readonly streams: Metric.Counter<number>;
    readonly retries: Metric.Counter<number>;
    readonly deltasReceived: Metric.Counter<number>;
    readonly usageOutputTokens: Metric.Counter<number>;
    readonly failedAttemptTokens: Metric.Counter<number>;
    readonly toolCallsAssembled: Metric.Counter<number>;
};
/** One response of `model` to `request` within `budget`. @internal */
export declare const make: (model: ModelStream.ModelStream["Service"]) => (request: ModelStream.ModelRequest, budget: Budget) => Stream.Stream<Emitted, StepStreamError>;
//# sourceMappingURL=stepStream.d.ts.map