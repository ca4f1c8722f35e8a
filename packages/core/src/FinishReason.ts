/**
 * The finish-reason mechanism: what a raw finish reason means to the assembler, as a class, and
 * the policy tables that map raw reasons to classes. The raw reason is always kept next to its
 * class.
 *
 * The classes:
 * - `success`: the turn completed; its tool calls are released.
 * - `success_no_calls`: the turn completed as a text turn. Without tool calls it succeeds; with
 *   any it is `UnexpectedFinishReason` (the reason does not release calls). This is how a
 *   stricter reading of a provider marks reasons such as OpenAI Chat's `stop`, which the
 *   first-party API never sends with tool calls but a gateway writes when it makes a finish up.
 * - `token_limit`: the output token limit was hit (`TokenLimitExceeded`).
 * - `unexpected`: anything else (`UnexpectedFinishReason`).
 *
 * Which provider reason has which class is provider knowledge: the tables live with the
 * adapters (`@toolgate/adapters`), built with {@link makePolicy}. Core knows only the classes.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The class of a finish reason.
 *
 * @since 0.1.0
 * @category models
 */
export const FinishClass = Schema.Literals(["success", "success_no_calls", "token_limit", "unexpected"])

/**
 * @since 0.1.0
 * @category models
 */
export type FinishClass = typeof FinishClass.Type

/**
 * A provider's table of raw finish reasons: those that succeed and release tool calls, those that
 * succeed only without tool calls, and those that mean the token limit. Every other reason is
 * `"unexpected"`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Policy {
  readonly provider: string
  readonly success: ReadonlySet<string>
  readonly successWithoutCalls: ReadonlySet<string>
  readonly tokenLimit: ReadonlySet<string>
}

/**
 * Builds a policy from the provider's reasons. `successWithoutCalls` defaults to none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makePolicy = (
  provider: string,
  options: {
    readonly success: Iterable<string>
    readonly successWithoutCalls?: Iterable<string> | undefined
    readonly tokenLimit: Iterable<string>
  }
): Policy => ({
  provider,
  success: new Set(options.success),
  successWithoutCalls: new Set(options.successWithoutCalls ?? []),
  tokenLimit: new Set(options.tokenLimit)
})

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
    : policy.successWithoutCalls.has(raw)
    ? "success_no_calls"
    : policy.tokenLimit.has(raw)
    ? "token_limit"
    : "unexpected"
