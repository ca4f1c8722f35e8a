import { Prompt } from "effect/ai";
import type * as ExecutionError from "../../ExecutionError.js";
import type * as StepJournal from "../../StepJournal.js";
import type * as ToolCallPipeline from "../../ToolCallPipeline.js";
/**
 * The fingerprint of a turn's request: SHA-256 of the RFC 8785 canonical JSON of its prompt
 * (effect/ai's encoded form), as `tg1:sha256:<hex>`. The prompt is what names the business event
 * the turn answers; the tools and model parameters may change between deliveries (a deploy)
 * without making it another turn.
 *
 * @internal
 */
export declare const fingerprint: (prompt: Prompt.Prompt) => string;
/**
 * What the model is told of a failed call: the error's tag and a message without values that
 * change between runs, plus the fields it may act on.
 *
 * @internal
 */
export declare const failureContent: (error: ExecutionError.ExecutionError) => Record<string, unknown>;
/**
 * The result text of one call's outcome, with whether it is a failure: the executor's stored JSON
 * text (byte for byte the same on every replay), or the JSON of {@link failureContent}.
 *
 * @internal
 */
export declare const resultOf: (outcome: ToolCallPipeline.CallOutcome) => {
    readonly isFailure: boolean;
    readonly resultText: string;
};
/**
 * The messages of one step: the assistant's (its text, then its calls, each with the arguments'
 * exact text as the model sent it, `ModelStream.toolCallPart`) and, when it called tools, the tool
 * message with their results (`ModelStream.toolResultPart`), in call order.
 *
 * @internal
 */
export declare const stepMessages: (output: StepJournal.StepOutput, calls: ReadonlyArray<ToolCallPipeline.CallResult>) => ReadonlyArray<Prompt.Message>;
/** The prompt with one step's messages appended. @internal */
export declare const append: (prompt: Prompt.Prompt, output: StepJournal.StepOutput, calls: ReadonlyArray<ToolCallPipeline.CallResult>) => Prompt.Prompt;
//# sourceMappingURL=transcript.d.ts.map