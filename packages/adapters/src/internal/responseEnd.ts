/**
 * What a Responses `response` object says at its end, read the same way from a stream's terminal
 * event (`OpenAiResponses`) and from a whole non-streaming body (`NonStreaming`): its `status` as
 * the finish reason (classified by `OpenAiResponses.classifyStatus`), and its `usage`.
 *
 * @internal
 */
import type { FinishReason, StreamEvent } from "@toolgate/core"
import * as Predicate from "effect/Predicate"
import { type Json, usage } from "./payload.js"

/** The finish of a response whose `status` is `status`. */
export const finishOf = (
  response: Json,
  status: string,
  classify: (status: string, incompleteReason: string | undefined) => FinishReason.FinishClass
): StreamEvent.Finish => {
  const details = response.incomplete_details
  const reason = Predicate.isObject(details) && typeof details.reason === "string" ? details.reason : undefined
  return { reason: status, class: classify(status, reason), terminal: true }
}

/** The usage a response reports, `undefined` when it reports none. */
export const usageOf = (response: Json): StreamEvent.Usage | undefined => {
  const reported = response.usage
  if (!Predicate.isObject(reported)) return undefined
  const cached = Predicate.isObject(reported.input_tokens_details)
    ? reported.input_tokens_details.cached_tokens
    : undefined
  return usage({
    inputTokens: reported.input_tokens,
    outputTokens: reported.output_tokens,
    totalTokens: reported.total_tokens,
    cachedInputTokens: cached
  })
}
