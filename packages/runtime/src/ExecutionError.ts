/**
 * The typed errors of exactly-once execution. Every failure of `ToolExecutor.execute` and of the
 * `IdempotencyStore` is one of these tagged errors in Effect's error channel; none is thrown.
 * Each carries the key hash (`tg1:sha256:…`) of the record it concerns and the fields a caller
 * acts on; none carries the call's raw arguments (they may hold personal data; the key is enough
 * to find the record).
 *
 * The record states behind them are described in `IdempotencyStore` (`Status`); which state answers
 * a call with which error is the executor's decision over a stored record (the `ToolExecutor`
 * module docs). Two more errors reject bad configuration before anything runs:
 * `InvalidExecutorOptions` (at `ToolExecutor.make`) and `InvalidStoreRequest` (a store operation
 * called with an impossible lease, retention or attempt count).
 *
 * (Why one long module: the errors are one vocabulary, each with its fields documented; splitting
 * them would scatter the union callers match on.)
 *
 * @since 0.1.0
 */
import type { IdempotencyKey, KeyPolicy } from "@toolgate/core"
import * as Schema from "effect/Schema"
import * as StoredError from "./StoredError.js"

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
 * The key was used before with arguments that differ where they must match (another
 * fingerprint): under a key policy, anywhere outside the declared free text (a different
 * `amount` for the same lead and window); without one, anywhere outside the declared key fields.
 * Never executes, never takes over, never replays (Stripe `idempotency_error`, IETF draft 422).
 * Usually a model that changed its mind about a value that matters, or a key policy whose key
 * fields leave out part of the business identity.
 *
 * `paths` names where the arguments differ (at most 10, in path order; never the values, which
 * may be personal data), `pathCount` how many paths differ (`null` when the record keeps no
 * arguments to compare: written before the store kept them, or over 256 KiB).
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
  fingerprint: Schema.String,
  /** The argument paths that differ (at most 10). */
  paths: Schema.Array(Schema.String),
  /** How many argument paths differ; `null` when the record keeps no arguments to compare. */
  pathCount: Schema.NullOr(Schema.Int)
}) {
  override get message(): string {
    const where = this.pathCount === null
      ? "arguments that differ (the record keeps none to compare)"
      : `arguments that differ at ${this.paths.join(", ")}${
        this.pathCount > this.paths.length ? ` and ${this.pathCount - this.paths.length} more` : ""
      }`
    return `key ${this.keyHash} of tool ${
      JSON.stringify(this.toolName)
    } was already used with ${where}; this call was not executed and nothing was replayed`
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
 * The message never says "applied" (a classification that means "terminal: the failure is the
 * outcome"), so that a downstream's refusal cannot be read as a change it made: it says the
 * failure was recorded as terminal and will not be retried, or that nothing was applied.
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
    const after = this.classification === "applied"
      ? this.replayed
        ? "recorded earlier as a terminal failure; replayed, not retried"
        : "recorded as a terminal failure, will not be retried"
      : this.retryable
      ? "not applied; a later call may retry it"
      : "not applied; no attempt is left"
    return `tool ${JSON.stringify(this.toolName)} failed for key ${this.keyHash}: ${this.detail}; ${after}`
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
 * Why an outcome is unknown (`OutcomeUnknown.reason`):
 *
 * - `ambiguous_failure`: the handler failed with `Ambiguous` (or its tool's classifier said so, or
 *   threw).
 * - `defect`: the handler died (a thrown exception, a defect).
 * - `probe_failed`: a reconcile probe failed on a takeover.
 * - `abandoned`: a holder's lease expired and the tool's recovery is `manual`.
 * - `manual`: an `unknown` record of a `manual` tool, waiting for a resolve.
 * - `attempts_exhausted`: the record is `unknown` (or its lease expired) and its attempts are used
 *   up, so no takeover may run it again.
 *
 * @since 0.1.0
 * @category models
 */
export const UnknownReason = Schema.Literals([
  "ambiguous_failure",
  "defect",
  "probe_failed",
  "abandoned",
  "manual",
  "attempts_exhausted"
])

/** The type of {@link UnknownReason}. @since 0.1.0 @category models */
export type UnknownReason = typeof UnknownReason.Type

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
  /** Why (see {@link UnknownReason}). */
  reason: UnknownReason,
  attempt: Schema.Int
}) {
  override get message(): string {
    return `the outcome of tool ${JSON.stringify(this.toolName)} for key ${this.keyHash} is unknown (${this.reason}, ` +
      `attempt ${this.attempt}); verify with downstream key ${this.downstreamKey}, do not retry blindly`
  }
}

/**
 * The fenced store operations (`LeaseLost.operation`).
 *
 * @since 0.1.0
 * @category models
 */
export const FencedOperation = Schema.Literals(["complete", "fail", "release", "heartbeat", "park", "resolve"])

/** The type of {@link FencedOperation}. @since 0.1.0 @category models */
export type FencedOperation = typeof FencedOperation.Type

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
  /** The fenced operation that changed nothing. */
  operation: FencedOperation
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
  /** The last attempt's stored error (see `StoredError`), or `null` when none was stored. */
  lastError: Schema.NullOr(StoredError.StoredError)
}) {
  override get message(): string {
    return `tool ${
      JSON.stringify(this.toolName)
    } used ${this.attempts} of ${this.maxAttempts} attempts for key ${this.keyHash}`
  }
}

/**
 * The outcome of a call that ran is larger than the executor's limit (`maxResultBytes`, at most
 * 256 KiB), so it cannot be stored:
 *
 * - `part: "result"`: the handler's result, encoded with the tool's success Schema;
 * - `part: "failure"`: the stored form of a terminal (`applied`) failure, i.e. the tool's failure
 *   value encoded with its failure Schema plus its detail.
 *
 * Checked before the record is settled; the effect happened, so the record is settled as a terminal
 * failure and this execution and every replay answer this error: the call is never re-executed
 * because its outcome could not be stored (cf. pydantic-ai #7110).
 *
 * @since 0.1.0
 * @category errors
 */
export class ResultTooLarge extends Schema.TaggedError<ResultTooLarge>()("ResultTooLarge", {
  keyHash: Schema.String,
  toolName: Schema.String,
  /** What was too large. */
  part: Schema.Literals(["result", "failure"]),
  /** Size of what would have been stored, in UTF-8 bytes of its JSON text. */
  bytes: Schema.Int,
  /** The limit, in bytes. */
  maxBytes: Schema.Int,
  replayed: Schema.Boolean
}) {
  override get message(): string {
    return `the ${this.part} of tool ${
      JSON.stringify(this.toolName)
    } for key ${this.keyHash} is ${this.bytes} bytes, ` +
      `over the ${this.maxBytes}-byte limit; the call ran and will not run again`
  }
}

/**
 * The store operations (`StoreUnavailable.operation`): the `IdempotencyStore` service's methods,
 * `migrate` (building the SQL layer), and the `StepJournal`'s (`claimStep`, `recordStep`,
 * `releaseStep`, `heartbeatStep`, `readStep`, `readTurn`, `purgeSteps`).
 *
 * @since 0.1.0
 * @category models
 */
export const StoreOperation = Schema.Literals([
  "claim",
  "read",
  "complete",
  "fail",
  "release",
  "heartbeat",
  "park",
  "parkExpired",
  "resolve",
  "reap",
  "purge",
  "journal",
  "journalOf",
  "list",
  "resolutions",
  "migrate",
  "claimStep",
  "recordStep",
  "releaseStep",
  "heartbeatStep",
  "readStep",
  "readTurn",
  "purgeSteps",
  "claimMessages",
  "settleMessage",
  "listMessages"
])

/** The type of {@link StoreOperation}. @since 0.1.0 @category models */
export type StoreOperation = typeof StoreOperation.Type

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
  /** The key concerned, or `null` for batch operations (reap, purge, migrate) and the step journal's. */
  keyHash: Schema.NullOr(Schema.String),
  /** The store operation. */
  operation: StoreOperation,
  /** effect's `SqlError` reason tag, or the store's own (`ClaimContention`, `UnreadableRow`). */
  reason: Schema.String,
  code: Schema.NullOr(Schema.String),
  retryable: Schema.Boolean
}) {
  override get message(): string {
    return `store unavailable during ${this.operation}${
      this.keyHash === null ? "" : ` of ${this.keyHash}`
    }: ${this.reason}${this.code === null ? "" : ` (SQLSTATE ${this.code})`}`
  }
}

/**
 * What an `InvalidExecutorOptions` is about: one of `ToolExecutor.Options`, a handler's override
 * of one (`leaseMs`, `timeoutMs`, `maxAttempts`), `handlers` (a tool of the toolkit has no handler),
 * `probe` (a `reconcile` handler without one) or `keyPolicy` (a handler's key policy that
 * `KeyPolicy.make` refuses).
 *
 * @since 0.1.0
 * @category models
 */
export const ExecutorOption = Schema.Literals([
  "leaseMs",
  "heartbeatMs",
  "timeoutMs",
  "retentionMs",
  "maxAttempts",
  "maxResultBytes",
  "waitMs",
  "storeRetries",
  "concurrency",
  "handlers",
  "probe",
  "keyPolicy"
])

/**
 * @since 0.1.0
 * @category models
 */
export type ExecutorOption = typeof ExecutorOption.Type

/**
 * The executor's options (or a handler's overrides) break a rule, found at `ToolExecutor.make`
 * before any call runs. `option` names it (`leaseMs`, `heartbeatMs`, …), `tool` the handler whose
 * override it is (`null`: the executor-wide option), `value` a bounded rendering of what was given,
 * `rule` what it must be. The rules are on `ToolExecutor.Options`.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidExecutorOptions extends Schema.TaggedError<InvalidExecutorOptions>()("InvalidExecutorOptions", {
  option: ExecutorOption,
  tool: Schema.NullOr(Schema.String),
  value: Schema.String,
  rule: Schema.String
}) {
  override get message(): string {
    return `invalid ToolExecutor option ${this.option}${
      this.tool === null ? "" : ` of tool ${JSON.stringify(this.tool)}`
    } = ${this.value}: must be ${this.rule}`
  }
}

/**
 * A store operation was called with a value no record may hold: a lease of 0 ms or less (it
 * would be expired when granted, so the next duplicate takes the call over while it runs), a
 * negative or non-finite retention, an attempt limit below 1. Nothing was read or written.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidStoreRequest extends Schema.TaggedError<InvalidStoreRequest>()("InvalidStoreRequest", {
  keyHash: Schema.String,
  /** The store operation. */
  operation: Schema.Literals(["claim", "heartbeat"]),
  /** The request field. */
  field: Schema.Literals(["leaseMs", "retentionMs", "maxAttempts"]),
  value: Schema.String,
  rule: Schema.String
}) {
  override get message(): string {
    return `invalid ${this.operation} of ${this.keyHash}: ${this.field} = ${this.value}, must be ${this.rule}`
  }
}

/**
 * Every error `ToolExecutor.execute` can fail with: the execution errors above plus the key
 * errors of `@toolgate/core`, raised before anything is claimed: `UnkeyableArguments` (the
 * arguments cannot be hashed deterministically), `MissingKeyField` (the call lacks a key field its
 * tool's key policy declares) and `MissingEventTime` (a window-scoped tool called without an
 * event time).
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
  | KeyPolicy.MissingKeyField
  | KeyPolicy.MissingEventTime
