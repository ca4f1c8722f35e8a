/**
 * The typed errors of exactly-once execution. Every failure of `ToolExecutor.execute` and of the
 * `IdempotencyStore` is one of these tagged errors in Effect's error channel; none is thrown.
 * Each carries the key hash (`tg1:sha256:…`) of the record it concerns and the fields a caller
 * acts on; none carries the call's raw arguments (they may hold personal data; the key is enough
 * to find the record).
 *
 * The states behind them are described in `research/idempotency.md` (b.1 decisions, b.4 decision
 * table); the names are fixed by `DESIGN.md` ("Error vocabulary").
 *
 * @since 0.1.0
 */
import type { IdempotencyKey } from "@toolgate/core"
import { Schema } from "effect"

/**
 * Another worker holds a live lease on this key and did not finish within the bounded wait.
 * Safe to retry later (HTTP: 409). `retryAfterMs` is the remaining lease by the database clock.
 *
 * @since 0.1.0
 * @category errors
 */
export class ExecutionInProgress extends Schema.TaggedError<ExecutionInProgress>()("ExecutionInProgress", {
  keyHash: Schema.String,
  toolName: Schema.String,
  /** Milliseconds until the holder's lease expires, by the database clock. */
  retryAfterMs: Schema.Number,
  /** Milliseconds this call waited before giving up. */
  waitedMs: Schema.Number
}) {
  override get message(): string {
    return `tool ${JSON.stringify(this.toolName)} is being executed elsewhere for key ${this.keyHash}; waited ${
      Math.round(this.waitedMs)
    } ms, lease ends in ${Math.round(this.retryAfterMs)} ms`
  }
}

/**
 * The key was used before with different arguments (another fingerprint). Never executes, never
 * takes over (Stripe `idempotency_error`, IETF draft 422). Usually a tool whose declared key fields
 * leave out something that matters, or a model that changed its mind within one turn.
 *
 * @since 0.1.0
 * @category errors
 */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {
  keyHash: Schema.String,
  toolName: Schema.String,
  /** Fingerprint stored with the key. */
  storedFingerprint: Schema.String,
  /** Fingerprint of this call's arguments. */
  fingerprint: Schema.String
}) {
  override get message(): string {
    return `key ${this.keyHash} of tool ${
      JSON.stringify(this.toolName)
    } was already used with other arguments (${this.storedFingerprint} ≠ ${this.fingerprint})`
  }
}

/**
 * How a handler failure relates to the outside world.
 *
 * - `not_applied`: known to have changed nothing (connection refused, 429/503 answered before any
 *   effect, validation by the downstream). The record is released; a later call may run again.
 * - `applied`: terminal. The failure is the outcome (the CRM said "deal not found", or the effect
 *   happened and its result cannot be stored). It is cached and replayed; never re-executed.
 *
 * (Ambiguous failures are not `ToolExecutionFailed`: they park the record as `unknown` and fail
 * with `OutcomeUnknown`.)
 *
 * @since 0.1.0
 * @category models
 */
export const FailureClass = Schema.Literals(["not_applied", "applied"])

/**
 * The tool's handler failed. `failure` is the tool's own failure value (decoded with its failure
 * Schema; on a replay, decoded from the stored record), or `null` when the failure carried none.
 *
 * - `retryable`: `not_applied` and attempts remain, so calling again runs the handler again.
 * - `replayed`: this is the cached outcome of an earlier execution; the handler did not run now.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolExecutionFailed extends Schema.TaggedError<ToolExecutionFailed>()("ToolExecutionFailed", {
  keyHash: Schema.String,
  toolName: Schema.String,
  classification: FailureClass,
  retryable: Schema.Boolean,
  replayed: Schema.Boolean,
  failure: Schema.Unknown,
  /** A short description, never argument values. */
  detail: Schema.String
}) {
  override get message(): string {
    return `tool ${JSON.stringify(this.toolName)} failed (${this.classification}${
      this.replayed ? ", replayed" : ""
    }) for key ${this.keyHash}: ${this.detail}`
  }
}

/**
 * The handler did not finish within its timeout after it was dispatched. The downstream may have
 * applied the call, so the record is parked as `unknown`, never released. Recovery follows the
 * tool's mode: `reexecute` and `reconcile` take it over on the next call (same downstream key),
 * `manual` waits for an operator to resolve it.
 *
 * @since 0.1.0
 * @category errors
 */
export class ExecutionTimeout extends Schema.TaggedError<ExecutionTimeout>()("ExecutionTimeout", {
  keyHash: Schema.String,
  toolName: Schema.String,
  /** The timeout that elapsed, in milliseconds. */
  timeoutMs: Schema.Number,
  /** The key the handler was given for the downstream system, to look the effect up there. */
  downstreamKey: Schema.String
}) {
  override get message(): string {
    return `tool ${JSON.stringify(this.toolName)} timed out after ${this.timeoutMs} ms for key ${this.keyHash}; ` +
      `the outcome is unknown: verify with downstream key ${this.downstreamKey} before retrying`
  }
}

/**
 * Whether the call's effect happened is unknown: a handler failed ambiguously (read timeout,
 * connection reset after the request was sent, a defect), a holder vanished and the tool's recovery
 * is `manual`, or the record was parked by the reaper. Tell the model "outcome unknown — verify,
 * do not retry"; resolve the record with `IdempotencyStore.resolve` once known.
 *
 * @since 0.1.0
 * @category errors
 */
export class OutcomeUnknown extends Schema.TaggedError<OutcomeUnknown>()("OutcomeUnknown", {
  keyHash: Schema.String,
  toolName: Schema.String,
  downstreamKey: Schema.String,
  /**
   * Why: `ambiguous_failure` (the handler said so), `defect` (it died), `probe_failed` (a reconcile
   * probe failed), `abandoned` (its holder vanished and recovery is `manual`), `manual` (an
   * unknown record waiting for a resolve), `attempts_exhausted`, `parked` (parked by the reaper).
   */
  reason: Schema.String,
  attempt: Schema.Int
}) {
  override get message(): string {
    return `the outcome of tool ${JSON.stringify(this.toolName)} for key ${this.keyHash} is unknown (${this.reason}, ` +
      `attempt ${this.attempt}); verify with downstream key ${this.downstreamKey}, do not retry blindly`
  }
}

/**
 * A write was fenced off: the record's fence is no longer the one this worker holds (another
 * worker took the key over after the lease expired, or the reaper parked it). Nothing was
 * changed. If the handler had already run, its effect may exist twice downstream unless the
 * downstream deduplicates on the downstream key; the orphaned result is journalled.
 *
 * @since 0.1.0
 * @category errors
 */
export class LeaseLost extends Schema.TaggedError<LeaseLost>()("LeaseLost", {
  keyHash: Schema.String,
  /** The fence this worker held, as a decimal string. */
  fence: Schema.String,
  /** The fenced operation: `complete`, `fail`, `release`, `heartbeat`, `park`, `resolve`. */
  operation: Schema.String
}) {
  override get message(): string {
    return `lease lost on ${this.operation} for key ${this.keyHash} (held fence ${this.fence}); nothing was written`
  }
}

/**
 * The key's attempts are used up: its last attempt failed `not_applied`, or its lease expired,
 * and `maxAttempts` (stored at the first claim) attempts have run.
 *
 * @since 0.1.0
 * @category errors
 */
export class AttemptsExhausted extends Schema.TaggedError<AttemptsExhausted>()("AttemptsExhausted", {
  keyHash: Schema.String,
  toolName: Schema.String,
  attempts: Schema.Int,
  maxAttempts: Schema.Int,
  /** The last stored error, as stored (JSON), or `null`. */
  lastError: Schema.Unknown
}) {
  override get message(): string {
    return `tool ${
      JSON.stringify(this.toolName)
    } used ${this.attempts} of ${this.maxAttempts} attempts for key ${this.keyHash}`
  }
}

/**
 * The handler's result, encoded with the tool's success Schema, is larger than the limit. Checked
 * before the record is completed; the effect happened, so the record is settled as a terminal
 * failure and every replay answers this error: the call is never re-executed because its result
 * could not be stored (cf. pydantic-ai #7110).
 *
 * @since 0.1.0
 * @category errors
 */
export class ResultTooLarge extends Schema.TaggedError<ResultTooLarge>()("ResultTooLarge", {
  keyHash: Schema.String,
  toolName: Schema.String,
  /** Encoded size, in UTF-8 bytes of its JSON text. */
  bytes: Schema.Int,
  /** The limit, in bytes. */
  maxBytes: Schema.Int,
  replayed: Schema.Boolean
}) {
  override get message(): string {
    return `the result of tool ${JSON.stringify(this.toolName)} for key ${this.keyHash} is ${this.bytes} bytes, ` +
      `over the ${this.maxBytes}-byte limit; the call ran and will not run again`
  }
}

/**
 * The store could not be reached or refused a statement (connection lost, server shut down,
 * timeout). `reason` is effect's `SqlError` reason tag (`ConnectionError`, `UnknownError`, …) and
 * `code` the SQLSTATE when the server sent one. The record is as the last successful write left
 * it; retrying is safe (`retryable` says whether the driver considers the reason transient).
 *
 * @since 0.1.0
 * @category errors
 */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  /** The key concerned, or `null` for batch operations (reap, purge, migrate). */
  keyHash: Schema.NullOr(Schema.String),
  /** The store operation: `claim`, `read`, `complete`, … */
  operation: Schema.String,
  reason: Schema.String,
  code: Schema.NullOr(Schema.String),
  retryable: Schema.Boolean
}) {
  override get message(): string {
    return `idempotency store unavailable during ${this.operation}${
      this.keyHash === null ? "" : ` of ${this.keyHash}`
    }: ${this.reason}${this.code === null ? "" : ` (SQLSTATE ${this.code})`}`
  }
}

/**
 * Every error `ToolExecutor.execute` can fail with: the execution errors above plus
 * `UnkeyableArguments` from `@toolgate/core` (the arguments cannot be hashed deterministically;
 * nothing was claimed).
 *
 * @since 0.1.0
 * @category models
 */
export type ExecutionError =
  | ExecutionInProgress
  | IdempotencyKeyReused
  | ToolExecutionFailed
  | ExecutionTimeout
  | OutcomeUnknown
  | LeaseLost
  | AttemptsExhausted
  | ResultTooLarge
  | StoreUnavailable
  | IdempotencyKey.UnkeyableArguments
