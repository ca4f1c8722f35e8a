/**
 * The finish-reason policy: which raw finish reasons a provider sends mean success, a token
 * limit, or something else. The raw reason is always kept next to its class.
 *
 * Rules come from the provider docs and `fixtures/README.md` ("Success finish reasons are …"):
 * - OpenAI Chat Completions: `tool_calls`, `stop` succeed (OpenAI-compatible servers send `stop`
 *   with tool calls, and a forced `tool_choice` ends with `stop`); `length` is the token limit.
 * - OpenAI Responses: status `completed` succeeds; `incomplete` with
 *   `incomplete_details.reason = "max_output_tokens"` is the token limit.
 * - Anthropic Messages: `tool_use`, `end_turn`, `stop_sequence` succeed; `max_tokens` is the
 *   token limit (https://docs.anthropic.com/en/api/handling-stop-reasons).
 * - Gemini: `STOP` succeeds; `MAX_TOKENS` is the token limit
 *   (https://ai.google.dev/api/generate-content#FinishReason).
 *
 * Everything else (`content_filter`, `refusal`, `pause_turn`, `SAFETY`, a prompt block reason, …)
 * is `"unexpected"`.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * The class of a finish reason.
 *
 * @since 0.1.0
 * @category models
 */
export const FinishClass = Schema.Literals(["success", "token_limit", "unexpected"])

/**
 * @since 0.1.0
 * @category models
 */
export type FinishClass = typeof FinishClass.Type

/**
 * A provider's table of raw finish reasons.
 *
 * @since 0.1.0
 * @category models
 */
export interface Policy {
  readonly provider: string
  readonly success: ReadonlySet<string>
  readonly tokenLimit: ReadonlySet<string>
}

/**
 * Builds a policy from the provider's success and token-limit reasons.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makePolicy = (
  provider: string,
  options: { readonly success: Iterable<string>; readonly tokenLimit: Iterable<string> }
): Policy => ({ provider, success: new Set(options.success), tokenLimit: new Set(options.tokenLimit) })

/**
 * OpenAI Chat Completions and OpenAI-compatible servers.
 *
 * @since 0.1.0
 * @category policies
 */
export const openAiChat: Policy = makePolicy("openai-chat", { success: ["tool_calls", "stop"], tokenLimit: ["length"] })

/**
 * Anthropic Messages `stop_reason`.
 *
 * @since 0.1.0
 * @category policies
 */
export const anthropic: Policy = makePolicy("anthropic", {
  success: ["tool_use", "end_turn", "stop_sequence"],
  tokenLimit: ["max_tokens"]
})

/**
 * Gemini `finishReason` (and `promptFeedback.blockReason`, which is never a success).
 *
 * @since 0.1.0
 * @category policies
 */
export const gemini: Policy = makePolicy("gemini", { success: ["STOP"], tokenLimit: ["MAX_TOKENS"] })

/**
 * Classifies a raw reason under a policy. `null` (a finish signal without a reason) is
 * `"unexpected"`.
 *
 * @since 0.1.0
 * @category classification
 */
export const classify = (policy: Policy, raw: string | null): FinishClass =>
  raw === null
    ? "unexpected"
    : policy.success.has(raw)
    ? "success"
    : policy.tokenLimit.has(raw)
    ? "token_limit"
    : "unexpected"

/**
 * Classifies an OpenAI Responses terminal status. The token limit is `incomplete` with
 * `incomplete_details.reason === "max_output_tokens"`; a bare `incomplete` is unexpected.
 *
 * @since 0.1.0
 * @category classification
 */
export const classifyResponses = (status: string, incompleteReason: string | undefined): FinishClass =>
  status === "completed"
    ? "success"
    : status === "incomplete" && incompleteReason === "max_output_tokens"
    ? "token_limit"
    : "unexpected"
