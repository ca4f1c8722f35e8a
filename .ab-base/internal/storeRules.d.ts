/**
 * The rules both store implementations (SQL and memory) share, so they cannot drift: the closed
 * sets a record's columns hold, the size limit of stored JSON, which requests are valid, how a
 * claim's kind follows from the state it replaced, and when a claim takes an existing record.
 * The SQL claim statement states the same takeover condition in SQL; the conformance suite checks
 * that both agree.
 *
 * @internal
 */
import { Effect, Schema } from "effect";
import { InvalidStoreRequest } from "../ExecutionError.js";
import type * as IdempotencyStore from "../IdempotencyStore.js";
/** @internal */
export declare const Status: Schema.Literals<readonly ["in_progress", "succeeded", "failed", "released", "unknown"]>;
/** @internal */
export declare const Recovery: Schema.Literals<readonly ["reexecute", "reconcile", "manual"]>;
/** @internal */
export declare const ClaimKind: Schema.Literals<readonly ["Fresh", "FreshAfterRetention", "RetryAfterRelease", "Takeover"]>;
/** @internal */
export declare const JournalOutcome: Schema.Literals<readonly ["succeeded", "failed", "released", "lease_lost", "unknown"]>;
/** Largest stored result or error, in UTF-8 bytes of its JSON text (also SQL CHECKs). @internal */
export declare const maxStoredBytes = 262144;
/** Longest `by` of a resolution's audit, in characters (also a SQL CHECK). @internal */
export declare const maxAuditBy = 200;
/** Longest `reason` of a resolution's audit, in characters (also a SQL CHECK). @internal */
export declare const maxAuditReason = 2000;
/** The default and the bounds of a list's `limit`. @internal */
export declare const listLimit: {
    readonly default: 50;
    readonly min: 1;
    readonly max: 1000;
};
/** A list query's limit, clamped into its bounds (a non-number is the default). @internal */
export declare const clampLimit: (limit: number | undefined) => number;
/** Largest stored step output, in UTF-8 bytes of its JSON text (also an SQL CHECK): 8 MiB. @internal */
export declare const maxStepOutputBytes: number;
/** @internal */
export declare const isSettled: (status: IdempotencyStore.Status) => boolean;
/** A refused value as a request error shows it: its JSON (a number as is), at most 40 characters. @internal */
export declare const render: (value: unknown) => string;
/** A finite number > 0 (a lease, a duration). @internal */
export declare const positive: (n: unknown) => boolean;
/**
 * The store clock's reading of an operation, in ms since the epoch: its injected `now`, else
 * effect's `Clock` (the memory implementations' clock; SQL reads the database's).
 *
 * @internal
 */
export declare const clockOf: (options: {
    readonly now?: Date | undefined;
} | undefined) => Effect.Effect<number>;
/**
 * The first rule a claim breaks: a lease of more than 0 ms (a lease of 0 or less is expired when
 * granted), a finite retention ≥ 0 ms, an integer attempt limit from 1 to 2^31 − 1.
 *
 * @internal
 */
export declare const checkClaim: (request: IdempotencyStore.ClaimRequest) => InvalidStoreRequest | undefined;
/**
 * The rule a heartbeat breaks: its new lease must be more than 0 ms.
 *
 * @internal
 */
export declare const checkHeartbeat: (key: string, leaseMs: number) => InvalidStoreRequest | undefined;
/**
 * The claim kind from the replaced status: nothing → `Fresh`; a lease or an `unknown` record →
 * `Takeover` (also a resumed own claim, whose previous status is kept); `released` with attempts
 * before → `RetryAfterRelease`; a settled record past retention → `FreshAfterRetention`.
 *
 * @internal
 */
export declare const kindOf: (previous: IdempotencyStore.Status | null, attempt: number) => IdempotencyStore.ClaimKind;
/** What a claim compares against an existing record (a subset of `StoredRecord`). @internal */
export interface Existing {
    readonly status: IdempotencyStore.Status;
    readonly fingerprint: string;
    readonly owner: string | null;
    readonly attempt: number;
    readonly maxAttempts: number;
    readonly recovery: IdempotencyStore.Recovery;
    /** ms since the epoch, or `null`. */
    readonly leaseExpiresAt: number | null;
    /** ms since the epoch. */
    readonly expiresAt: number;
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
export declare const claimOn: (record: Existing, request: {
    readonly fingerprint: string;
    readonly owner: string;
}, now: number) => "reset" | "resume" | "take" | "refuse";
/**
 * The span of a store method, `Effect.fnUntraced(body, span("IdempotencyStore.claim"))`: the span
 * `Effect.fn` would open, without its call-site stack capture (one `Error` per call costs more than
 * the rest of the span, and a claim and a complete run on every execution).
 *
 * @internal
 */
export declare const span: (name: string) => <A, E, R>(self: Effect.Effect<A, E, R>, ...args: readonly any[]) => Effect.Effect<A, E, Exclude<R, import("effect/Tracer").ParentSpan>>;
//# sourceMappingURL=storeRules.d.ts.map