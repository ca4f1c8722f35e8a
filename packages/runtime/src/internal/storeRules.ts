/**
 * The rules both store implementations (SQL and memory) share, so they cannot drift: the closed
 * sets a record's columns hold, the size limit of stored JSON, which requests are valid, how a
 * claim's kind follows from the state it replaced, and when a claim takes an existing record.
 * The SQL claim statement states the same takeover condition in SQL; the conformance suite checks
 * that both agree.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidStoreRequest } from "../ExecutionError.js"
import type * as IdempotencyStore from "../IdempotencyStore.js"

/** @internal */
export const Status = Schema.Literals(["in_progress", "succeeded", "failed", "released", "unknown"])

/** @internal */
export const Recovery = Schema.Literals(["reexecute", "reconcile", "manual"])

/** @internal */
export const ClaimKind = Schema.Literals(["Fresh", "FreshAfterRetention", "RetryAfterRelease", "Takeover"])

/** @internal */
export const JournalOutcome = Schema.Literals(["succeeded", "failed", "released", "lease_lost", "unknown"])

/** Largest stored result or error, in UTF-8 bytes of its JSON text (also SQL CHECKs). @internal */
export const maxStoredBytes = 262_144

/** Longest `by` of a resolution's audit, in characters (also a SQL CHECK). @internal */
export const maxAuditBy = 200

/** Longest `reason` of a resolution's audit, in characters (also a SQL CHECK). @internal */
export const maxAuditReason = 2_000

/** The default and the bounds of a list's `limit`. @internal */
export const listLimit = { default: 50, min: 1, max: 1_000 } as const

/** A list query's limit, clamped into its bounds (a non-number is the default). @internal */
export const clampLimit = (limit: number | undefined): number =>
  limit === undefined || !Number.isFinite(limit)
    ? listLimit.default
    : Math.min(listLimit.max, Math.max(listLimit.min, Math.floor(limit)))

/** Largest stored step output, in UTF-8 bytes of its JSON text (also an SQL CHECK): 8 MiB. @internal */
export const maxStepOutputBytes = 8 * 1024 * 1024

/** @internal */
export const isSettled = (status: IdempotencyStore.Status): boolean =>
  status === "succeeded" || status === "failed" || status === "released"

/** A refused value as a request error shows it: its JSON (a number as is), at most 40 characters. @internal */
export const render = (value: unknown): string => {
  const text = typeof value === "number" ? String(value) : JSON.stringify(value) ?? String(value)
  return text.length <= 40 ? text : `${text.slice(0, 39)}…`
}

const invalid = (
  keyHash: string,
  operation: InvalidStoreRequest["operation"],
  field: InvalidStoreRequest["field"],
  value: unknown,
  rule: string
) => new InvalidStoreRequest({ keyHash, operation, field, value: render(value), rule })

/** A finite number > 0 (a lease, a duration). @internal */
export const positive = (n: unknown): boolean => typeof n === "number" && Number.isFinite(n) && n > 0

/**
 * The store clock's reading of an operation, in ms since the epoch: its injected `now`, else
 * effect's `Clock` (the memory implementations' clock; SQL reads the database's).
 *
 * @internal
 */
export const clockOf = (options: { readonly now?: Date | undefined } | undefined): Effect.Effect<number> =>
  options?.now !== undefined ? Effect.succeed(options.now.getTime()) : Clock.currentTimeMillis

/**
 * The first rule a claim breaks: a lease of more than 0 ms (a lease of 0 or less is expired when
 * granted), a finite retention ≥ 0 ms, an integer attempt limit from 1 to 2^31 − 1.
 *
 * @internal
 */
export const checkClaim = (request: IdempotencyStore.ClaimRequest): InvalidStoreRequest | undefined =>
  !positive(request.leaseMs)
    ? invalid(request.key, "claim", "leaseMs", request.leaseMs, "a finite number of ms > 0")
    : !(typeof request.retentionMs === "number" && Number.isFinite(request.retentionMs) && request.retentionMs >= 0)
    ? invalid(request.key, "claim", "retentionMs", request.retentionMs, "a finite number of ms ≥ 0")
    : !(Number.isInteger(request.maxAttempts) && request.maxAttempts >= 1 && request.maxAttempts <= 2_147_483_647)
    ? invalid(request.key, "claim", "maxAttempts", request.maxAttempts, "an integer from 1 to 2147483647")
    : undefined

/**
 * The rule a heartbeat breaks: its new lease must be more than 0 ms.
 *
 * @internal
 */
export const checkHeartbeat = (key: string, leaseMs: number): InvalidStoreRequest | undefined =>
  positive(leaseMs) ? undefined : invalid(key, "heartbeat", "leaseMs", leaseMs, "a finite number of ms > 0")

/**
 * The claim kind from the replaced status: nothing → `Fresh`; a lease or an `unknown` record →
 * `Takeover` (also a resumed own claim, whose previous status is kept); `released` with attempts
 * before → `RetryAfterRelease`; a settled record past retention → `FreshAfterRetention`.
 *
 * @internal
 */
export const kindOf = (previous: IdempotencyStore.Status | null, attempt: number): IdempotencyStore.ClaimKind =>
  previous === null
    ? "Fresh"
    : previous === "in_progress" || previous === "unknown"
    ? "Takeover"
    : previous === "released" && attempt > 1
    ? "RetryAfterRelease"
    : "FreshAfterRetention"

/** What a claim compares against an existing record (a subset of `StoredRecord`). @internal */
export interface Existing {
  readonly status: IdempotencyStore.Status
  readonly fingerprint: string
  readonly owner: string | null
  readonly attempt: number
  readonly maxAttempts: number
  readonly recovery: IdempotencyStore.Recovery
  /** ms since the epoch, or `null`. */
  readonly leaseExpiresAt: number | null
  /** ms since the epoch. */
  readonly expiresAt: number
}

/**
 * How a claim at `now` (ms) by (`fingerprint`, `owner`) treats an existing record:
 *
 * - `reset`: a settled record past retention; the key is free again (any fingerprint).
 * - `resume`: this owner's own live claim, whose response was lost.
 * - `take`: the same fingerprint, attempts left, and the record `released`, or an expired lease or
 *   an `unknown` record whose recovery is not `manual`.
 * - `refuse`: anything else; the claim answers the record.
 *
 * @internal
 */
export const claimOn = (
  record: Existing,
  request: { readonly fingerprint: string; readonly owner: string },
  now: number
): "reset" | "resume" | "take" | "refuse" => {
  if (isSettled(record.status) && record.expiresAt <= now) return "reset"
  if (record.fingerprint !== request.fingerprint) return "refuse"
  if (record.status === "in_progress" && record.owner === request.owner) return "resume"
  if (record.attempt >= record.maxAttempts) return "refuse"
  switch (record.status) {
    case "released":
      return "take"
    case "in_progress":
      return record.recovery !== "manual" && record.leaseExpiresAt !== null && record.leaseExpiresAt <= now
        ? "take"
        : "refuse"
    case "unknown":
      return record.recovery !== "manual" ? "take" : "refuse"
    default:
      return "refuse"
  }
}
