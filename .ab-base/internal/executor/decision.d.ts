/**
 * The decision over a stored record: what a call does when its claim did not win and the store
 * answered with the record instead. A pure function of the record, the store clock's reading it
 * was evaluated at (`now`) and the call (`fingerprint`, `owner`), so every record shape is tested
 * as a table without a store (`test/Decision.test.ts`).
 *
 * Lease liveness and retention are judged on the store's clock (the record's `readAt`), never
 * the executor's, so workers whose clocks disagree still agree on who holds a lease. Wherever a
 * claim would now take the record (the state changed between the claim and its read), the
 * decision is to claim again: the same takeover rule as the store's claim (`claimOn`), so the
 * executor never parks or refuses a record a claim would take.
 *
 * @internal
 */
import type { UnknownReason } from "../../ExecutionError.js";
import type * as IdempotencyStore from "../../IdempotencyStore.js";
/**
 * What to do with a record:
 *
 * - `Mismatch`: the key is held by other arguments (`IdempotencyKeyReused`); never runs.
 * - `Replay`: a stored result; answer it without running.
 * - `ReplayFailure`: a stored terminal failure; answer it without running.
 * - `Exhausted`: released, and no attempt is left (`AttemptsExhausted`).
 * - `Unknown`: the outcome is unknown and no takeover may run it (`OutcomeUnknown`).
 * - `Wait`: another worker holds a live lease for `retryAfterMs` more.
 * - `ParkExpired`: the holder's lease expired and no takeover may run it: park it `unknown`.
 * - `ClaimAgain`: a claim now would take the record (released with attempts left, an expired
 *   lease or `unknown` record a takeover may run, retention elapsed, or this owner's own lease).
 *
 * @internal
 */
export type Decision = {
    readonly _tag: "Mismatch";
} | {
    readonly _tag: "Replay";
} | {
    readonly _tag: "ReplayFailure";
} | {
    readonly _tag: "Exhausted";
} | {
    readonly _tag: "Unknown";
    readonly reason: UnknownReason;
} | {
    readonly _tag: "Wait";
    readonly retryAfterMs: number;
} | {
    readonly _tag: "ParkExpired";
    readonly reason: UnknownReason;
} | {
    readonly _tag: "ClaimAgain";
};
/** The part of a record the decision reads. @internal */
export type Seen = Pick<IdempotencyStore.StoredRecord, "status" | "fingerprint" | "owner" | "attempt" | "maxAttempts" | "recovery" | "leaseExpiresAt" | "expiresAt">;
/** What the call brings: its arguments' fingerprint and its owner token. @internal */
export interface Caller {
    readonly fingerprint: string;
    readonly owner: string;
}
/**
 * Decides what a call does with `record`, read at the store clock's `now`.
 *
 * @internal
 */
export declare const decide: (record: Seen, caller: Caller, now: Date) => Decision;
//# sourceMappingURL=decision.d.ts.map