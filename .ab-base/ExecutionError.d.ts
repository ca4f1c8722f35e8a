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
import type { IdempotencyKey, KeyPolicy } from "@toolgate/core";
import { Schema } from "effect";
declare const ExecutionInProgress_base: Schema.Class<ExecutionInProgress, Schema.TaggedStruct<"ExecutionInProgress", {
    readonly keyHash: Schema.String;
    readonly toolName: Schema.String;
    /** Milliseconds until the holder's lease expires, by the database clock. */
    readonly retryAfterMs: Schema.Number;
    /** Milliseconds this call waited before giving up. */
    readonly waitedMs: Schema.Number;
}>, import("effect/Cause").YieldableError>;
/**
 * Another worker holds a live lease on this key and did not finish within the bounded wait.
 * Safe to retry later (HTTP: 409). `retryAfterMs` is the remaining lease by the database clock.
 *
 * @since 0.1.0
 * @category errors
 */
export declare class ExecutionInProgress extends ExecutionInProgress_base {
    get message(): string;
}
declare const IdempotencyKeyReused_base: Schema.Class<IdempotencyKeyReused, Schema.TaggedStruct<"IdempotencyKeyReused", {
    readonly keyHash: Schema.String;
    readonly toolName: Schema.String;
    /** Fingerprint stored with the key. */
    readonly storedFingerprint: Schema.String;
    /** Fingerprint of this call's arguments. */
    readonly fingerprint: Schema.String;
    /** The argument paths that differ (at most 10). */
    readonly paths: Schema.$Array<Schema.String>;
    /** How many argument paths differ; `null` when the record keeps no arguments to compare. */
    readonly pathCount: Schema.NullOr<Schema.Int>;
}>, import("effect/Cause").YieldableError>;
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
export declare class IdempotencyKeyReused extends IdempotencyKeyReused_base {
    get message(): string;
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
export declare const FailureClass: Schema.Literals<readonly ["not_applied", "applied"]>;
declare const ToolExecutionFailed_base: Schema.Class<ToolExecutionFailed, Schema.TaggedStruct<"ToolExecutionFailed", {
    readonly keyHash: Schema.String;
    readonly toolName: Schema.String;
    readonly classification: Schema.Literals<readonly ["not_applied", "applied"]>;
    readonly retryable: Schema.Boolean;
    readonly replayed: Schema.Boolean;
    readonly failure: Schema.Unknown;
    /** A short description, never argument values. */
    readonly detail: Schema.String;
}>, import("effect/Cause").YieldableError>;
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
export declare class ToolExecutionFailed extends ToolExecutionFailed_base {
    get message(): string;
}
declare const ExecutionTimeout_base: Schema.Class<ExecutionTimeout, Schema.TaggedStruct<"ExecutionTimeout", {
    readonly keyHash: Schema.String;
    readonly toolName: Schema.String;
    /** The timeout that elapsed, in milliseconds. */
    readonly timeoutMs: Schema.Number;
    /** The key the handler was given for the downstream system, to look the effect up there. */
    readonly downstreamKey: Schema.String;
}>, import("effect/Cause").YieldableError>;
/**
 * The handler did not finish within its timeout after it was dispatched. The downstream may have
 * applied the call, so the record is parked as `unknown`, never released. Recovery follows the
 * tool's mode: `reexecute` and `reconcile` take it over on the next call (same downstream key),
 * `manual` waits for an operator to resolve it.
 *
 * @since 0.1.0
 * @category errors
 */
export declare class ExecutionTimeout extends ExecutionTimeout_base {
    get message(): string;
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
export declare const UnknownReason: Schema.Literals<readonly ["ambiguous_failure", "defect", "probe_failed", "abandoned", "manual", "attempts_exhausted"]>;
/** The type of {@link UnknownReason}. @since 0.1.0 @category models */
export type UnknownReason = typeof UnknownReason.Type;
declare const OutcomeUnknown_base: Schema.Class<OutcomeUnknown, Schema.TaggedStruct<"OutcomeUnknown", {
    readonly keyHash: Schema.String;
    readonly toolName: Schema.String;
    readonly downstreamKey: Schema.String;
    /** Why (see {@link UnknownReason}). */
    readonly reason: Schema.Literals<readonly ["ambiguous_failure", "defect", "probe_failed", "abandoned", "manual", "attempts_exhausted"]>;
    readonly attempt: Schema.Int;
}>, import("effect/Cause").YieldableError>;
/**
 * Whether the call's effect happened is unknown: a handler failed ambiguously (read timeout,
 * connection reset after the request was sent, a defect), a holder vanished and the tool's recovery
 * is `manual`, or the record was parked by the reaper. Tell the model "outcome unknown — verify,
 * do not retry"; resolve the record with `IdempotencyStore.resolve` once known.
 *
 * @since 0.1.0
 * @category errors
 */
export declare class OutcomeUnknown extends OutcomeUnknown_base {
    get message(): string;
}
/**
 * The fenced store operations (`LeaseLost.operation`).
 *
 * @since 0.1.0
 * @category models
 */
export declare const FencedOperation: Schema.Literals<readonly ["complete", "fail", "release", "heartbeat", "park", "resolve"]>;
/** The type of {@link FencedOperation}. @since 0.1.0 @category models */
export type FencedOperation = typeof FencedOperation.Type;
declare const LeaseLost_base: Schema.Class<LeaseLost, Schema.TaggedStruct<"LeaseLost", {
    readonly keyHash: Schema.String;
    /** The fence this worker held, as a decimal string. */
    readonly fence: Schema.String;
    /** The fenced operation that changed nothing. */
    readonly operation: Schema.Literals<readonly ["complete", "fail", "release", "heartbeat", "park", "resolve"]>;
}>, import("effect/Cause").YieldableError>;
/**
 * A write was fenced off: the record's fence is no longer the one this worker holds (another
 * worker took the key over after the lease expired, or the reaper parked it). Nothing was
 * changed. If the handler had already run, its effect may exist twice downstream unless the
 * downstream deduplicates on the downstream key; the orphaned result is journalled.
 *
 * @since 0.1.0
 * @category errors
 */
export declare class LeaseLost extends LeaseLost_base {
    get message(): string;
}
declare const AttemptsExhausted_base: Schema.Class<AttemptsExhausted, Schema.TaggedStruct<"AttemptsExhausted", {
    readonly keyHash: Schema.String;
    readonly toolName: Schema.String;
    readonly attempts: Schema.Int;
    readonly maxAttempts: Schema.Int;
    /** The last attempt's stored error (see `StoredError`), or `null` when none was stored. */
    readonly lastError: Schema.NullOr<Schema.toTaggedUnion<"_tag", readonly [Schema.TaggedStruct<"ToolFailure", {
        readonly failure: Schema.Codec<Schema.Json, Schema.Json, never, never>;
        readonly detail: Schema.String;
    }>, Schema.TaggedStruct<"NotApplied", {
        readonly failure: Schema.Codec<Schema.Json, Schema.Json, never, never>;
        readonly detail: Schema.String;
        readonly omittedBytes: Schema.optionalKey<Schema.Int>;
    }>, Schema.TaggedStruct<"ResultInvalid", {
        readonly detail: Schema.String;
    }>, Schema.TaggedStruct<"ResultTooLarge", {
        readonly part: Schema.withDecodingDefaultKey<Schema.Literals<readonly ["result", "failure"]>, never>;
        readonly bytes: Schema.Int;
        readonly maxBytes: Schema.Int;
    }>, Schema.TaggedStruct<"ExecutionTimeout", {
        readonly timeoutMs: Schema.Finite;
    }>, Schema.TaggedStruct<"Interrupted", {
        readonly reason: Schema.withDecodingDefaultKey<Schema.Literals<readonly ["caller", "lease_lost"]>, never>;
    }>, Schema.TaggedStruct<"Ambiguous", {
        readonly reason: Schema.Literals<readonly ["ambiguous_failure", "defect", "probe_failed"]>;
        readonly detail: Schema.String;
    }>, Schema.TaggedStruct<"Unrecognized", {
        readonly stored: Schema.Codec<Schema.Json, Schema.Json, never, never>;
    }>]>>;
}>, import("effect/Cause").YieldableError>;
/**
 * The key's attempts are used up: its last attempt failed `not_applied`, or its lease expired,
 * and `maxAttempts` (stored at the first claim) attempts have run.
 *
 * @since 0.1.0
 * @category errors
 */
export declare class AttemptsExhausted extends AttemptsExhausted_base {
    get message(): string;
}
declare const ResultTooLarge_base: Schema.Class<ResultTooLarge, Schema.TaggedStruct<"ResultTooLarge", {
    readonly keyHash: Schema.String;
    readonly toolName: Schema.String;
    /** What was too large. */
    readonly part: Schema.Literals<readonly ["result", "failure"]>;
    /** Size of what would have been stored, in UTF-8 bytes of its JSON text. */
    readonly bytes: Schema.Int;
    /** The limit, in bytes. */
    readonly maxBytes: Schema.Int;
    readonly replayed: Schema.Boolean;
}>, import("effect/Cause").YieldableError>;
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
export declare class ResultTooLarge extends ResultTooLarge_base {
    get message(): string;
}
/**
 * The store operations (`StoreUnavailable.operation`): the `IdempotencyStore` service's methods,
 * `migrate` (building the SQL layer), and the `StepJournal`'s (`claimStep`, `recordStep`,
 * `releaseStep`, `heartbeatStep`, `readStep`, `readTurn`, `purgeSteps`).
 *
 * @since 0.1.0
 * @category models
 */
export declare const StoreOperation: Schema.Literals<readonly ["claim", "read", "complete", "fail", "release", "heartbeat", "park", "parkExpired", "resolve", "reap", "purge", "journal", "journalOf", "list", "resolutions", "migrate", "claimStep", "recordStep", "releaseStep", "heartbeatStep", "readStep", "readTurn", "purgeSteps", "claimMessages", "settleMessage", "listMessages"]>;
/** The type of {@link StoreOperation}. @since 0.1.0 @category models */
export type StoreOperation = typeof StoreOperation.Type;
declare const StoreUnavailable_base: Schema.Class<StoreUnavailable, Schema.TaggedStruct<"StoreUnavailable", {
    /** The key concerned, or `null` for batch operations (reap, purge, migrate) and the step journal's. */
    readonly keyHash: Schema.NullOr<Schema.String>;
    /** The store operation. */
    readonly operation: Schema.Literals<readonly ["claim", "read", "complete", "fail", "release", "heartbeat", "park", "parkExpired", "resolve", "reap", "purge", "journal", "journalOf", "list", "resolutions", "migrate", "claimStep", "recordStep", "releaseStep", "heartbeatStep", "readStep", "readTurn", "purgeSteps", "claimMessages", "settleMessage", "listMessages"]>;
    /** effect's `SqlError` reason tag, or the store's own (`ClaimContention`, `UnreadableRow`). */
    readonly reason: Schema.String;
    readonly code: Schema.NullOr<Schema.String>;
    readonly retryable: Schema.Boolean;
}>, import("effect/Cause").YieldableError>;
/**
 * The store could not be reached or refused a statement (connection lost, server shut down,
 * timeout). `reason` is effect's `SqlError` reason tag (`ConnectionError`, `UnknownError`, …) and
 * `code` the SQLSTATE when the server sent one. The record is as the last successful write left
 * it; retrying is safe (`retryable` says whether the driver considers the reason transient).
 *
 * @since 0.1.0
 * @category errors
 */
export declare class StoreUnavailable extends StoreUnavailable_base {
    get message(): string;
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
export declare const ExecutorOption: Schema.Literals<readonly ["leaseMs", "heartbeatMs", "timeoutMs", "retentionMs", "maxAttempts", "maxResultBytes", "waitMs", "storeRetries", "concurrency", "handlers", "probe", "keyPolicy"]>;
/**
 * @since 0.1.0
 * @category models
 */
export type ExecutorOption = typeof ExecutorOption.Type;
declare const InvalidExecutorOptions_base: Schema.Class<InvalidExecutorOptions, Schema.TaggedStruct<"InvalidExecutorOptions", {
    readonly option: Schema.Literals<readonly ["leaseMs", "heartbeatMs", "timeoutMs", "retentionMs", "maxAttempts", "maxResultBytes", "waitMs", "storeRetries", "concurrency", "handlers", "probe", "keyPolicy"]>;
    readonly tool: Schema.NullOr<Schema.String>;
    readonly value: Schema.String;
    readonly rule: Schema.String;
}>, import("effect/Cause").YieldableError>;
/**
 * The executor's options (or a handler's overrides) break a rule, found at `ToolExecutor.make`
 * before any call runs. `option` names it (`leaseMs`, `heartbeatMs`, …), `tool` the handler whose
 * override it is (`null`: the executor-wide option), `value` a bounded rendering of what was given,
 * `rule` what it must be. The rules are on `ToolExecutor.Options`.
 *
 * @since 0.1.0
 * @category errors
 */
export declare class InvalidExecutorOptions extends InvalidExecutorOptions_base {
    get message(): string;
}
declare const InvalidStoreRequest_base: Schema.Class<InvalidStoreRequest, Schema.TaggedStruct<"InvalidStoreRequest", {
    readonly keyHash: Schema.String;
    /** The store operation. */
    readonly operation: Schema.Literals<readonly ["claim", "heartbeat"]>;
    /** The request field. */
    readonly field: Schema.Literals<readonly ["leaseMs", "retentionMs", "maxAttempts"]>;
    readonly value: Schema.String;
    readonly rule: Schema.String;
}>, import("effect/Cause").YieldableError>;
/**
 * A store operation was called with a value no record may hold: a lease of 0 ms or less (it
 * would be expired when granted, so the next duplicate takes the call over while it runs), a
 * negative or non-finite retention, an attempt limit below 1. Nothing was read or written.
 *
 * @since 0.1.0
 * @category errors
 */
export declare class InvalidStoreRequest extends InvalidStoreRequest_base {
    get message(): string;
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
export type ExecutionError = ExecutionInProgress | IdempotencyKeyReused | ToolExecutionFailed | ExecutionTimeout | OutcomeUnknown | LeaseLost | AttemptsExhausted | ResultTooLarge | StoreUnavailable | IdempotencyKey.UnkeyableArguments | KeyPolicy.MissingKeyField | KeyPolicy.MissingEventTime;
export {};
//# sourceMappingURL=ExecutionError.d.ts.map