/**
 * The SQL store's codecs: one `Schema` per statement's parameters and per returned row. The
 * statements alias their columns to the model's field names, so a decoded row is the model
 * (`StoredRecord`, `Lease`, `JournalEntry`) without hand mapping; columns the driver may return in
 * another representation (`int8` as a string, `timestamptz` as text) decode either way.
 *
 * @internal
 */
import { Schema } from "effect";
import type * as FollowUp from "../FollowUp.js";
import type * as IdempotencyStore from "../IdempotencyStore.js";
declare const RecordRow: Schema.Struct<{
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly tool: Schema.String;
    readonly fingerprint: Schema.String;
    readonly status: Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>;
    readonly previous: Schema.NullOr<Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>>;
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
    readonly attempt: Schema.Number;
    readonly maxAttempts: Schema.Number;
    readonly generation: Schema.Number;
    readonly recovery: Schema.Literals<readonly ["reexecute", "reconcile", "manual"]>;
    readonly owner: Schema.NullOr<Schema.String>;
    readonly argumentsText: Schema.NullOr<Schema.String>;
    readonly resultText: Schema.NullOr<Schema.String>;
    readonly error: Schema.NullOr<Schema.fromJsonString<Schema.Unknown>>;
    readonly externalRef: Schema.NullOr<Schema.String>;
    readonly leaseExpiresAt: Schema.NullOr<Schema.Union<readonly [Schema.Date, Schema.DateFromString]>>;
    readonly expiresAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly createdAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly updatedAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly completedAt: Schema.NullOr<Schema.Union<readonly [Schema.Date, Schema.DateFromString]>>;
    readonly retryAfterMs: Schema.Number;
    readonly leaseExpired: Schema.Boolean;
    readonly retentionElapsed: Schema.Boolean;
    readonly readAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
}>;
/** A statement's codecs: its parameters (`params` puts them in placeholder order) and its rows. @internal */
export interface Codec<Req extends Schema.Constraint, Row extends Schema.Constraint> {
    readonly Request: Req;
    readonly Row: Row;
    readonly params: (request: Req["Encoded"]) => ReadonlyArray<unknown>;
}
/** @internal */
export declare const claim: Codec<Schema.Struct<{
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly tool: Schema.String;
    readonly fingerprint: Schema.String;
    readonly arguments: Schema.NullOr<Schema.String>;
    readonly owner: Schema.String;
    readonly leaseMs: Schema.Number;
    readonly retentionMs: Schema.Number;
    readonly maxAttempts: Schema.Number;
    readonly recovery: Schema.Literals<readonly ["reexecute", "reconcile", "manual"]>;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
    readonly attempt: Schema.Number;
    readonly maxAttempts: Schema.Number;
    readonly generation: Schema.Number;
    readonly previous: Schema.NullOr<Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>>;
    readonly recovery: Schema.Literals<readonly ["reexecute", "reconcile", "manual"]>;
    readonly leaseExpiresAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
}>>;
/**
 * A batch of claims: `claims` is the JSON array `claimManyJson` makes; each row a won claim with
 * its record's identity. @internal
 */
export declare const claimMany: Codec<Schema.Struct<{
    readonly claims: Schema.String;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
    readonly attempt: Schema.Number;
    readonly maxAttempts: Schema.Number;
    readonly generation: Schema.Number;
    readonly previous: Schema.NullOr<Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>>;
    readonly recovery: Schema.Literals<readonly ["reexecute", "reconcile", "manual"]>;
    readonly leaseExpiresAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly scope: Schema.String;
    readonly key: Schema.String;
}>>;
/** @internal */
export declare const readMany: Codec<Schema.Struct<{
    readonly refs: Schema.String;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly tool: Schema.String;
    readonly fingerprint: Schema.String;
    readonly status: Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>;
    readonly previous: Schema.NullOr<Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>>;
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
    readonly attempt: Schema.Number;
    readonly maxAttempts: Schema.Number;
    readonly generation: Schema.Number;
    readonly recovery: Schema.Literals<readonly ["reexecute", "reconcile", "manual"]>;
    readonly owner: Schema.NullOr<Schema.String>;
    readonly argumentsText: Schema.NullOr<Schema.String>;
    readonly resultText: Schema.NullOr<Schema.String>;
    readonly error: Schema.NullOr<Schema.fromJsonString<Schema.Unknown>>;
    readonly externalRef: Schema.NullOr<Schema.String>;
    readonly leaseExpiresAt: Schema.NullOr<Schema.Union<readonly [Schema.Date, Schema.DateFromString]>>;
    readonly expiresAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly createdAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly updatedAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly completedAt: Schema.NullOr<Schema.Union<readonly [Schema.Date, Schema.DateFromString]>>;
    readonly retryAfterMs: Schema.Number;
    readonly leaseExpired: Schema.Boolean;
    readonly retentionElapsed: Schema.Boolean;
    readonly readAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
}>>;
/**
 * A claim request as a text parameter stores it: the driver sends strings as UTF-8, which turns a
 * lone surrogate into U+FFFD, where `jsonb` refuses its `\uD800` escape (SQLSTATE 22P02) and would
 * fail the whole batch. The request itself when its text is well formed (the usual case: no copy).
 * @internal
 */
export declare const asStored: (r: IdempotencyStore.ClaimRequest) => IdempotencyStore.ClaimRequest;
/** The JSON array of a batch of claims, in the shape of `claimMany`'s `jsonb_to_recordset`. @internal */
export declare const claimManyJson: (requests: ReadonlyArray<IdempotencyStore.ClaimRequest>) => string;
/** @internal */
export declare const read: Codec<Schema.Struct<{
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly tool: Schema.String;
    readonly fingerprint: Schema.String;
    readonly status: Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>;
    readonly previous: Schema.NullOr<Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>>;
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
    readonly attempt: Schema.Number;
    readonly maxAttempts: Schema.Number;
    readonly generation: Schema.Number;
    readonly recovery: Schema.Literals<readonly ["reexecute", "reconcile", "manual"]>;
    readonly owner: Schema.NullOr<Schema.String>;
    readonly argumentsText: Schema.NullOr<Schema.String>;
    readonly resultText: Schema.NullOr<Schema.String>;
    readonly error: Schema.NullOr<Schema.fromJsonString<Schema.Unknown>>;
    readonly externalRef: Schema.NullOr<Schema.String>;
    readonly leaseExpiresAt: Schema.NullOr<Schema.Union<readonly [Schema.Date, Schema.DateFromString]>>;
    readonly expiresAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly createdAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly updatedAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly completedAt: Schema.NullOr<Schema.Union<readonly [Schema.Date, Schema.DateFromString]>>;
    readonly retryAfterMs: Schema.Number;
    readonly leaseExpired: Schema.Boolean;
    readonly retentionElapsed: Schema.Boolean;
    readonly readAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
}>>;
/** @internal */
export declare const peek: Codec<Schema.Struct<{
    readonly scope: Schema.String;
    readonly key: Schema.String;
}>, Schema.Struct<{
    readonly status: Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>;
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
}>>;
/** @internal */
export declare const complete: Codec<Schema.Struct<{
    readonly result: Schema.String;
    readonly externalRef: Schema.NullOr<Schema.String>;
    readonly retentionMs: Schema.Number;
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.BigInt;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
}>>;
/** @internal */
export declare const completeWithFollowUps: Codec<Schema.Struct<{
    readonly messages: Schema.String;
    readonly result: Schema.String;
    readonly externalRef: Schema.NullOr<Schema.String>;
    readonly retentionMs: Schema.Number;
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.BigInt;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
}>>;
/** @internal */
export declare const fail: Codec<Schema.Struct<{
    readonly error: Schema.String;
    readonly retentionMs: Schema.Number;
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.BigInt;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
}>>;
/** @internal */
export declare const release: Codec<Schema.Struct<{
    readonly error: Schema.NullOr<Schema.String>;
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.BigInt;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
}>>;
/** @internal */
export declare const heartbeat: Codec<Schema.Struct<{
    readonly leaseMs: Schema.Number;
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.BigInt;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly leaseExpiresAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
}>>;
/** @internal */
export declare const park: Codec<Schema.Struct<{
    readonly error: Schema.NullOr<Schema.String>;
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.BigInt;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
}>>;
/** @internal */
export declare const parkExpired: Codec<Schema.Struct<{
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.BigInt;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
}>>;
/** @internal */
export declare const resolve: Codec<Schema.Struct<{
    readonly status: Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>;
    readonly result: Schema.NullOr<Schema.String>;
    readonly error: Schema.NullOr<Schema.String>;
    readonly externalRef: Schema.NullOr<Schema.String>;
    readonly retentionMs: Schema.Number;
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.BigInt;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
}>>;
/** @internal */
export declare const resolveAudited: Codec<Schema.Struct<{
    readonly by: Schema.String;
    readonly reason: Schema.NullOr<Schema.String>;
    readonly status: Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>;
    readonly result: Schema.NullOr<Schema.String>;
    readonly error: Schema.NullOr<Schema.String>;
    readonly externalRef: Schema.NullOr<Schema.String>;
    readonly retentionMs: Schema.Number;
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.BigInt;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
}>>;
/** @internal */
export declare const resolveWithFollowUps: Codec<Schema.Struct<{
    readonly messages: Schema.String;
    readonly status: Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>;
    readonly result: Schema.NullOr<Schema.String>;
    readonly error: Schema.NullOr<Schema.String>;
    readonly externalRef: Schema.NullOr<Schema.String>;
    readonly retentionMs: Schema.Number;
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.BigInt;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
}>>;
/** @internal */
export declare const resolveAuditedWithFollowUps: Codec<Schema.Struct<{
    readonly messages: Schema.String;
    readonly by: Schema.String;
    readonly reason: Schema.NullOr<Schema.String>;
    readonly status: Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>;
    readonly result: Schema.NullOr<Schema.String>;
    readonly error: Schema.NullOr<Schema.String>;
    readonly externalRef: Schema.NullOr<Schema.String>;
    readonly retentionMs: Schema.Number;
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.BigInt;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
}>>;
/** The stored follow-ups as the statements take them: one JSON array of snake_case objects. @internal */
export declare const messagesJson: (messages: ReadonlyArray<FollowUp.Message>) => string;
/** @internal */
export declare const claimMessages: Codec<Schema.Struct<{
    readonly owner: Schema.String;
    readonly leaseMs: Schema.Number;
    readonly limit: Schema.Number;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly id: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
    readonly deliveryKey: Schema.String;
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
    readonly ordinal: Schema.Number;
    readonly kind: Schema.Literals<readonly ["webhook", "named"]>;
    readonly destination: Schema.String;
    readonly payload: Schema.String;
    readonly orderingKey: Schema.NullOr<Schema.String>;
    readonly status: Schema.Literals<readonly ["pending", "delivering", "delivered", "dead"]>;
    readonly attempts: Schema.Number;
    readonly leaseFence: Schema.NullOr<Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>>;
    readonly leaseOwner: Schema.NullOr<Schema.String>;
    readonly leaseExpiresAt: Schema.NullOr<Schema.Union<readonly [Schema.Date, Schema.DateFromString]>>;
    readonly availableAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly lastError: Schema.NullOr<Schema.String>;
    readonly createdAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly updatedAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly deliveredAt: Schema.NullOr<Schema.Union<readonly [Schema.Date, Schema.DateFromString]>>;
}>>;
/** @internal */
export declare const settleMessage: Codec<Schema.Struct<{
    readonly id: Schema.BigInt;
    readonly leaseFence: Schema.BigInt;
    readonly status: Schema.Literals<readonly ["delivered", "pending", "dead"]>;
    readonly error: Schema.NullOr<Schema.String>;
    readonly delayMs: Schema.Number;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly latencyMs: Schema.Number;
}>>;
/** @internal */
export declare const countMessages: Codec<Schema.Struct<{}>, Schema.Struct<{
    readonly status: Schema.Literals<readonly ["pending", "delivering", "delivered", "dead"]>;
    readonly count: Schema.Number;
}>>;
/** @internal */
export declare const listMessages: Codec<Schema.Struct<{
    readonly scope: Schema.NullOr<Schema.String>;
    readonly key: Schema.NullOr<Schema.String>;
    readonly status: Schema.NullOr<Schema.String>;
    readonly limit: Schema.Number;
}>, Schema.Struct<{
    readonly id: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
    readonly deliveryKey: Schema.String;
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
    readonly ordinal: Schema.Number;
    readonly kind: Schema.Literals<readonly ["webhook", "named"]>;
    readonly destination: Schema.String;
    readonly payload: Schema.String;
    readonly orderingKey: Schema.NullOr<Schema.String>;
    readonly status: Schema.Literals<readonly ["pending", "delivering", "delivered", "dead"]>;
    readonly attempts: Schema.Number;
    readonly leaseFence: Schema.NullOr<Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>>;
    readonly leaseOwner: Schema.NullOr<Schema.String>;
    readonly leaseExpiresAt: Schema.NullOr<Schema.Union<readonly [Schema.Date, Schema.DateFromString]>>;
    readonly availableAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly lastError: Schema.NullOr<Schema.String>;
    readonly createdAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly updatedAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly deliveredAt: Schema.NullOr<Schema.Union<readonly [Schema.Date, Schema.DateFromString]>>;
}>>;
/** @internal */
export declare const list: Codec<Schema.Struct<{
    readonly scope: Schema.NullOr<Schema.String>;
    readonly keyPrefix: Schema.NullOr<Schema.String>;
    readonly status: Schema.NullOr<Schema.String>;
    readonly tool: Schema.NullOr<Schema.String>;
    readonly limit: Schema.Number;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly tool: Schema.String;
    readonly fingerprint: Schema.String;
    readonly status: Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>;
    readonly previous: Schema.NullOr<Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>>;
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
    readonly attempt: Schema.Number;
    readonly maxAttempts: Schema.Number;
    readonly generation: Schema.Number;
    readonly recovery: Schema.Literals<readonly ["reexecute", "reconcile", "manual"]>;
    readonly owner: Schema.NullOr<Schema.String>;
    readonly argumentsText: Schema.NullOr<Schema.String>;
    readonly resultText: Schema.NullOr<Schema.String>;
    readonly error: Schema.NullOr<Schema.fromJsonString<Schema.Unknown>>;
    readonly externalRef: Schema.NullOr<Schema.String>;
    readonly leaseExpiresAt: Schema.NullOr<Schema.Union<readonly [Schema.Date, Schema.DateFromString]>>;
    readonly expiresAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly createdAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly updatedAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
    readonly completedAt: Schema.NullOr<Schema.Union<readonly [Schema.Date, Schema.DateFromString]>>;
    readonly retryAfterMs: Schema.Number;
    readonly leaseExpired: Schema.Boolean;
    readonly retentionElapsed: Schema.Boolean;
    readonly readAt: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
}>>;
/** @internal */
export declare const resolutions: Codec<Schema.Struct<{
    readonly scope: Schema.String;
    readonly key: Schema.String;
}>, Schema.Struct<{
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
    readonly tool: Schema.String;
    readonly status: Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>;
    readonly resultText: Schema.NullOr<Schema.String>;
    readonly errorText: Schema.NullOr<Schema.String>;
    readonly parkedError: Schema.NullOr<Schema.fromJsonString<Schema.Unknown>>;
    readonly by: Schema.String;
    readonly reason: Schema.NullOr<Schema.String>;
    readonly at: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
}>>;
/** @internal */
export declare const reap: Codec<Schema.Struct<{
    readonly graceMs: Schema.Number;
    readonly includeReexecutable: Schema.Boolean;
    readonly batchSize: Schema.Number;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Struct<{
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
}>>;
/** @internal */
export declare const purge: Codec<Schema.Struct<{
    readonly batchSize: Schema.Number;
    readonly now: Schema.NullOr<Schema.Date>;
    readonly olderThanMs: Schema.NullOr<Schema.Number>;
    readonly scope: Schema.NullOr<Schema.String>;
}>, Schema.Struct<{
    readonly key: Schema.String;
}>>;
/** @internal */
export declare const journal: Codec<Schema.Struct<{
    readonly attempt: Schema.Number;
    readonly outcome: Schema.Literals<readonly ["succeeded", "failed", "released", "lease_lost", "unknown"]>;
    readonly detail: Schema.NullOr<Schema.String>;
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly fence: Schema.BigInt;
    readonly now: Schema.NullOr<Schema.Date>;
}>, Schema.Unknown>;
/** @internal */
export declare const journalOf: Codec<Schema.Struct<{
    readonly scope: Schema.String;
    readonly key: Schema.String;
}>, Schema.Struct<{
    readonly fence: Schema.Union<readonly [Schema.BigInt, Schema.BigIntFromString]>;
    readonly scope: Schema.String;
    readonly key: Schema.String;
    readonly attempt: Schema.Number;
    readonly outcome: Schema.Literals<readonly ["succeeded", "failed", "released", "lease_lost", "unknown"]>;
    readonly detail: Schema.NullOr<Schema.fromJsonString<Schema.Unknown>>;
    readonly at: Schema.Union<readonly [Schema.Date, Schema.DateFromString]>;
}>>;
/** The record of a decoded row; `undefined` when its result is not JSON. */
export declare const toRecord: (row: typeof RecordRow.Type) => IdempotencyStore.StoredRecord | undefined;
export {};
//# sourceMappingURL=sqlCodecs.d.ts.map