/**
 * The transcript of an agent turn as effect/ai's `Prompt`: after each step, the assistant message
 * (its text, then one `tool-call` part per call) and the tool message (one `tool-result` part per
 * call, in call order). What the model is shown of each outcome is a pure function of the outcome,
 * with nothing that varies between runs (no waited milliseconds, no attempt counts), so a resumed
 * turn whose calls replay rebuilds the transcript of an uninterrupted one:
 *
 * - a result: the value of the executor's stored JSON text (byte for byte the same on every
 *   replay), `isFailure: false`;
 * - a failure: `{ error, message, … }` with `isFailure: true`, where `message` says what the model
 *   must know: that the call failed and why, or, when it may have applied, "outcome unknown —
 *   verify, do not retry".
 *
 * Also the fingerprint of a turn's request, which the step journal compares.
 *
 * @internal
 */
import { IdempotencyKey } from "@toolgate/core"
import { Result, Schema } from "effect"
import { Prompt } from "effect/ai"
import { createHash } from "node:crypto"
import type * as ExecutionError from "../../ExecutionError.js"
import type * as StepJournal from "../../StepJournal.js"
import type * as ToolCallPipeline from "../../ToolCallPipeline.js"

const encodePrompt = Schema.encodeSync(Prompt.Prompt)

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

/** The id a call goes by in the transcript: the provider's, or one made of the step and index. @internal */
export const callId = (step: number, call: { readonly index: number; readonly id: string | null }): string =>
  call.id ?? `toolgate_${step}_${call.index}`

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
        message: "this call repeats an earlier call of the turn with other arguments; it was not executed"
      }
    case "AttemptsExhausted":
      return { error: error._tag, message: `the tool failed ${error.attempts} times; it will not be retried` }
    case "ResultTooLarge":
      return { error: error._tag, message: "the tool ran, but its result is too large to return; do not retry" }
    case "UnkeyableArguments":
      return { error: error._tag, message: `the arguments cannot be keyed (${error.reason}); it was not executed` }
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

/** The `tool-result` content of one call's outcome. @internal */
export const resultContent = (
  outcome: ToolCallPipeline.CallOutcome
): { readonly isFailure: boolean; readonly result: unknown } =>
  outcome._tag === "Failed"
    ? { isFailure: true, result: failureContent(outcome.error) }
    : { isFailure: false, result: JSON.parse(outcome.json) }

/**
 * The messages of one step: the assistant's (its text, then its calls, each with the arguments
 * the model sent) and, when it called tools, the tool message with their results.
 *
 * @internal
 */
export const stepMessages = (
  step: number,
  output: StepJournal.StepOutput,
  calls: ReadonlyArray<ToolCallPipeline.CallResult>
): ReadonlyArray<Prompt.Message> => {
  const assistant: Array<Prompt.AssistantMessagePart> = []
  if (output.text !== "") assistant.push(Prompt.makePart("text", { text: output.text }))
  for (const call of calls) {
    assistant.push(
      Prompt.makePart("tool-call", {
        id: callId(step, call),
        name: call.name,
        params: call.arguments,
        providerExecuted: false
      })
    )
  }
  const messages: Array<Prompt.Message> = []
  if (assistant.length > 0) messages.push(Prompt.makeMessage("assistant", { content: assistant }))
  if (calls.length > 0) {
    messages.push(Prompt.makeMessage("tool", {
      content: calls.map((call) =>
        Prompt.makePart("tool-result", {
          id: callId(step, call),
          name: call.name,
          ...resultContent(call.outcome),
          providerExecuted: false
        })
      )
    }))
  }
  return messages
}

/** The prompt with one step's messages appended. @internal */
export const append = (
  prompt: Prompt.Prompt,
  step: number,
  output: StepJournal.StepOutput,
  calls: ReadonlyArray<ToolCallPipeline.CallResult>
): Prompt.Prompt => Prompt.fromMessages([...prompt.content, ...stepMessages(step, output, calls)])
