/**
 * The transcript of an agent turn as effect/ai's `Prompt`: after each step, the assistant message
 * (its text, then one `tool-call` part per call) and the tool message (one `tool-result` part per
 * call, in call order). What the model is shown of each outcome is a pure function of the outcome,
 * with nothing that varies between runs (no waited milliseconds, no attempt counts), so a resumed
 * turn whose calls replay rebuilds the transcript of an uninterrupted one:
 *
 * - a result: the executor's stored JSON text, byte for byte the same on every replay,
 *   `isFailure: false`;
 * - a failure: the JSON of `{ error, message, … }` with `isFailure: true`, where `message` says what
 *   the model must know: that the call failed and why, or, when it may have applied, "outcome
 *   unknown — verify, do not retry".
 *
 * The parts are core's history parts (`ModelStream.toolCallPart`, `toolResultPart`), which keep
 * the arguments' and the result's exact texts for the encoders: a resumed turn sends the model the
 * same bytes an uninterrupted one did.
 *
 * Also the fingerprint of a turn's request, which the step journal compares.
 *
 * @internal
 */
import { IdempotencyKey, ModelStream } from "@toolgate/core"
import { Prompt } from "effect/ai"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import type * as ExecutionError from "../../ExecutionError.js"
import type * as StepJournal from "../../StepJournal.js"
import type * as ToolCallPipeline from "../../ToolCallPipeline.js"

// The Exit adapter answers a synchronous encoding without running a fiber (the Sync adapter runs
// one per call: about 4× the time); a prompt that does not encode still throws, through the Sync
// adapter, as before.
const encodePromptExit = Schema.encodeExit(Prompt.Prompt)
const encodePromptSync = Schema.encodeSync(Prompt.Prompt)
const encodePrompt = (prompt: Prompt.Prompt) => {
  const encoded = encodePromptExit(prompt)
  return Exit.isSuccess(encoded) ? encoded.value : encodePromptSync(prompt)
}

/**
 * The fingerprint of a turn's request: SHA-256 of the RFC 8785 canonical JSON of its prompt
 * (effect/ai's encoded form), as `tg1:sha256:<hex>`. The prompt is what names the business event
 * the turn answers; the tools and model parameters may change between deliveries (a deploy)
 * without making it another turn.
 *
 * @internal
 */
export const fingerprint = (prompt: Prompt.Prompt): string => {
  const encoded = encodePrompt(prompt)
  const canonical = IdempotencyKey.canonical(encoded)
  const text = Result.isSuccess(canonical) ? canonical.success : JSON.stringify(encoded)
  return `tg1:sha256:${createHash("sha256").update(text).digest("hex")}`
}

const unknownMessage = "outcome unknown — verify, do not retry"

/**
 * What the model is told of a failed call: the error's tag and a message without values that
 * change between runs, plus the fields it may act on.
 *
 * @internal
 */
export const failureContent = (error: ExecutionError.ExecutionError): Record<string, unknown> => {
  switch (error._tag) {
    case "ToolExecutionFailed":
      return {
        error: error._tag,
        message: `the tool failed (${
          error.classification === "applied" ? "final" : "it changed nothing"
        }): ${error.detail}`,
        ...(isJson(error.failure) ? { failure: error.failure } : {})
      }
    case "OutcomeUnknown":
    case "ExecutionTimeout":
    case "LeaseLost":
      return {
        error: error._tag,
        message: unknownMessage,
        ...("downstreamKey" in error ? { downstreamKey: error.downstreamKey } : {})
      }
    case "ExecutionInProgress":
      return { error: error._tag, message: `another worker is executing this call: ${unknownMessage}` }
    case "StoreUnavailable":
      return { error: error._tag, message: `the call could not be recorded: ${unknownMessage}` }
    case "IdempotencyKeyReused":
      return {
        error: error._tag,
        message: `this call repeats an earlier call (the same business key) with other arguments${
          error.paths.length === 0 ? "" : ` in ${error.paths.join(", ")}`
        }; it was not executed`
      }
    case "AttemptsExhausted":
      return { error: error._tag, message: `the tool failed ${error.attempts} times; it will not be retried` }
    case "ResultTooLarge":
      return { error: error._tag, message: "the tool ran, but its result is too large to return; do not retry" }
    case "UnkeyableArguments":
      return { error: error._tag, message: `the arguments cannot be keyed (${error.reason}); it was not executed` }
    case "MissingKeyField":
      return {
        error: error._tag,
        message: `the call has no ${error.path}, a key field of the tool; it was not executed`
      }
    case "MissingEventTime":
      return { error: error._tag, message: "the turn has no event time to key this tool by; it was not executed" }
  }
}

const isJson = (value: unknown): boolean => {
  if (value === null || value === undefined) return false
  try {
    return JSON.stringify(value) !== undefined
  } catch {
    return false
  }
}

/**
 * The result text of one call's outcome, with whether it is a failure: the executor's stored JSON
 * text (byte for byte the same on every replay), or the JSON of {@link failureContent}.
 *
 * @internal
 */
export const resultOf = (
  outcome: ToolCallPipeline.CallOutcome
): { readonly isFailure: boolean; readonly resultText: string } =>
  outcome._tag === "Failed"
    ? { isFailure: true, resultText: JSON.stringify(failureContent(outcome.error)) }
    : { isFailure: false, resultText: outcome.json }

/**
 * The messages of one step: the assistant's (its text, then its calls, each with the arguments'
 * exact text as the model sent it, `ModelStream.toolCallPart`) and, when it called tools, the tool
 * message with their results (`ModelStream.toolResultPart`), in call order.
 *
 * @internal
 */
export const stepMessages = (
  output: StepJournal.StepOutput,
  calls: ReadonlyArray<ToolCallPipeline.CallResult>
): ReadonlyArray<Prompt.Message> => {
  const assistant: Array<Prompt.AssistantMessagePart> = []
  if (output.text !== "") assistant.push(Prompt.makePart("text", { text: output.text }))
  const texts = new Map(output.calls.map((call) => [call.index, call.argumentsText]))
  for (const call of calls) {
    assistant.push(ModelStream.toolCallPart({
      id: call.id,
      name: call.name,
      argumentsText: texts.get(call.index) ?? JSON.stringify(call.arguments),
      arguments: call.arguments
    }))
  }
  const messages: Array<Prompt.Message> = []
  if (assistant.length > 0) messages.push(Prompt.makeMessage("assistant", { content: assistant }))
  if (calls.length > 0) {
    messages.push(Prompt.makeMessage("tool", {
      content: calls.map((call) =>
        ModelStream.toolResultPart({ id: call.id, name: call.name, ...resultOf(call.outcome) })
      )
    }))
  }
  return messages
}

/** The prompt with one step's messages appended. @internal */
export const append = (
  prompt: Prompt.Prompt,
  output: StepJournal.StepOutput,
  calls: ReadonlyArray<ToolCallPipeline.CallResult>
): Prompt.Prompt => Prompt.fromMessages([...prompt.content, ...stepMessages(output, calls)])
