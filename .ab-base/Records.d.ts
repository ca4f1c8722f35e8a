import { Effect, Schema } from "effect";
import type { StoreUnavailable } from "./ExecutionError.js";
import * as FollowUp from "./FollowUp.js";
import * as IdempotencyStore from "./IdempotencyStore.js";
declare const RecordNotFound_base: Schema.Class<RecordNotFound, Schema.TaggedStruct<"RecordNotFound", {
    readonly key: Schema.String;
    readonly scope: Schema.NullOr<Schema.String>;
}>, import("effect/Cause").YieldableError>;
/**
 * No record has this key (or key prefix) in the store (in `scope`, when one was named).
 *
 * @since 0.1.0
 * @category errors
 */
export declare class RecordNotFound extends RecordNotFound_base {
    get message(): string;
}
declare const AmbiguousKey_base: Schema.Class<AmbiguousKey, Schema.TaggedStruct<"AmbiguousKey", {
    readonly prefix: Schema.String;
    /** Up to 5 of the matching keys. */
    readonly matches: Schema.$Array<Schema.String>;
}>, import("effect/Cause").YieldableError>;
/**
 * A key prefix matches more than one record: give more of the key (or its scope).
 *
 * @since 0.1.0
 * @category errors
 */
export declare class AmbiguousKey extends AmbiguousKey_base {
    get message(): string;
}
declare const RecordNotUnknown_base: Schema.Class<RecordNotUnknown, Schema.TaggedStruct<"RecordNotUnknown", {
    readonly keyHash: Schema.String;
    readonly status: Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>;
}>, import("effect/Cause").YieldableError>;
/**
 * Only an `unknown` record can be resolved: this one is in another state (`succeeded`, `failed`,
 * `released`: already settled; `in_progress`: a worker holds it now).
 *
 * @since 0.1.0
 * @category errors
 */
export declare class RecordNotUnknown extends RecordNotUnknown_base {
    get message(): string;
}
declare const RecordChanged_base: Schema.Class<RecordChanged, Schema.TaggedStruct<"RecordChanged", {
    readonly keyHash: Schema.String;
    /** The fence the resolution was made at, as a decimal string. */
    readonly fence: Schema.String;
    /** What the record is now (`null`: purged). */
    readonly status: Schema.NullOr<Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>>;
    /** Its fence now, as a decimal string (`null`: purged). */
    readonly currentFence: Schema.NullOr<Schema.String>;
}>, import("effect/Cause").YieldableError>;
/**
 * The record changed between the fence the operator saw and the resolution: it was taken over,
 * settled, resolved or parked again. Nothing was written; look at it again.
 *
 * @since 0.1.0
 * @category errors
 */
export declare class RecordChanged extends RecordChanged_base {
    get message(): string;
}
declare const InvalidRecordRequest_base: Schema.Class<InvalidRecordRequest, Schema.TaggedStruct<"InvalidRecordRequest", {
    readonly field: Schema.String;
    readonly reason: Schema.String;
}>, import("effect/Cause").YieldableError>;
/**
 * An operator request toolgate cannot carry out as given: `field` names the input (`key`,
 * `result`, `by`, `reason`, `olderThanMs`, `fence`), `reason` what is wrong with it.
 *
 * @since 0.1.0
 * @category errors
 */
export declare class InvalidRecordRequest extends InvalidRecordRequest_base {
    get message(): string;
}
/**
 * What an operator call can fail with: its own errors and the store's.
 *
 * @since 0.1.0
 * @category models
 */
export type RecordsError = RecordNotFound | AmbiguousKey | RecordNotUnknown | RecordChanged | InvalidRecordRequest | StoreUnavailable;
/**
 * The full key, or the key prefix, a reference names: `tg1:sha256:<hex>` or the hex alone, at
 * least 8 hex digits (case-insensitive). Fails with `InvalidRecordRequest` (`key`).
 *
 * @since 0.1.0
 * @category references
 */
export declare const keyOf: (reference: string) => Effect.Effect<{
    readonly key: string;
    readonly complete: boolean;
}, InvalidRecordRequest>;
/**
 * A record reference: its key (or a unique prefix of at least 8 hex digits), optionally its scope
 * (the tenant), which narrows a prefix and must match a full key.
 *
 * @since 0.1.0
 * @category models
 */
export interface Reference {
    readonly key: string;
    readonly scope?: string | undefined;
}
/**
 * The record a reference names. Fails with `RecordNotFound`, `AmbiguousKey` (a prefix of
 * several), `InvalidRecordRequest` (not a key) or `StoreUnavailable`.
 *
 * @since 0.1.0
 * @category reading
 */
export declare const find: (reference: Reference) => Effect.Effect<IdempotencyStore.StoredRecord, StoreUnavailable | RecordNotFound | AmbiguousKey | InvalidRecordRequest, IdempotencyStore.IdempotencyStore>;
/**
 * Records matching a query, newest change first (see `IdempotencyStore.ListQuery`).
 *
 * @since 0.1.0
 * @category reading
 */
export declare const list: (query: IdempotencyStore.ListQuery) => Effect.Effect<ReadonlyArray<IdempotencyStore.StoredRecord>, StoreUnavailable, IdempotencyStore.IdempotencyStore>;
/**
 * One record with its history.
 *
 * @since 0.1.0
 * @category models
 */
export interface Detail {
    readonly record: IdempotencyStore.StoredRecord;
    readonly journal: ReadonlyArray<IdempotencyStore.JournalEntry>;
    readonly resolutions: ReadonlyArray<IdempotencyStore.ResolutionEntry>;
}
/**
 * The record a reference names, with its attempt journal and its audited resolutions. Fails as
 * {@link find}.
 *
 * @since 0.1.0
 * @category reading
 */
export declare const show: (reference: Reference) => Effect.Effect<{
    record: IdempotencyStore.StoredRecord;
    journal: readonly IdempotencyStore.JournalEntry[];
    resolutions: readonly IdempotencyStore.ResolutionEntry[];
}, StoreUnavailable | RecordNotFound | AmbiguousKey | InvalidRecordRequest, IdempotencyStore.IdempotencyStore>;
/**
 * The outcome an operator found downstream:
 *
 * - `Applied`: the effect happened; `result` is what the tool would have answered, as JSON text
 *   (replayed to every later call; default `null`), `externalRef` a downstream reference.
 * - `NotApplied`: it did not happen; the record is released, so the next call of the intent runs
 *   it again (if it has attempts left).
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome = {
    readonly _tag: "Applied";
    readonly result?: string | undefined;
    readonly externalRef?: string | undefined;
    /**
     * The call's follow-ups (what its handler's `followUps` declares for this result), written to
     * the outbox in the resolution's statement, keyed by the record's downstream key.
     */
    readonly followUps?: ReadonlyArray<FollowUp.FollowUp> | undefined;
} | {
    readonly _tag: "NotApplied";
};
/**
 * A resolution's request: the outcome; `by` who decides (a person or a system, 1 to 200
 * characters); `reason` why (at most 2,000 characters; required for `NotApplied`, which makes the
 * call run again); `fence` the fence the operator saw (default: the record's fence now);
 * `retentionMs` how long the settled record is kept (default 24 h).
 *
 * @since 0.1.0
 * @category models
 */
export interface Resolution {
    readonly outcome: Outcome;
    readonly by: string;
    readonly reason?: string | undefined;
    readonly fence?: bigint | undefined;
    readonly retentionMs?: number | undefined;
}
/**
 * What a resolution did: the record as it is now, and its audit entry.
 *
 * @since 0.1.0
 * @category models
 */
export interface Resolved {
    readonly record: IdempotencyStore.StoredRecord;
    readonly audit: IdempotencyStore.ResolutionEntry;
}
/**
 * Resolves the `unknown` record a reference names (see the module docs). Fails with
 * `RecordNotUnknown` (another state), `RecordChanged` (it changed since `fence`, or during the
 * resolution), `InvalidRecordRequest` (a result that is not JSON, a missing reason for
 * `NotApplied`, …) and as {@link find}.
 *
 * @since 0.1.0
 * @category resolving
 */
export declare const resolve: (reference: Reference, resolution: Resolution) => Effect.Effect<{
    record: IdempotencyStore.StoredRecord;
    audit: IdempotencyStore.ResolutionEntry;
}, StoreUnavailable | RecordNotFound | AmbiguousKey | RecordNotUnknown | RecordChanged | InvalidRecordRequest, IdempotencyStore.IdempotencyStore>;
/**
 * Deletes settled records (`succeeded`, `failed`, `released`) past their retention, or, with
 * `olderThanMs`, those settled more than that many ms ago whatever their retention (with `scope`,
 * only that tenant's); returns how many. Records in progress and `unknown` ones are never deleted;
 * resolution audits are kept. Fails with `InvalidRecordRequest` for an `olderThanMs` that is not a
 * finite number ≥ 0.
 *
 * @since 0.1.0
 * @category purging
 */
export declare const purge: (options?: {
    readonly olderThanMs?: number | undefined;
    readonly scope?: string | undefined;
} | undefined) => Effect.Effect<number, StoreUnavailable | InvalidRecordRequest, IdempotencyStore.IdempotencyStore>;
export {};
//# sourceMappingURL=Records.d.ts.map