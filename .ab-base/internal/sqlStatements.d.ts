/**
 * The SQL of the store: the tables and their migrations, and one statement per operation,
 * rendered once per schema (every value a bound parameter). The claim is an insert-or-take-over
 * whose `WHERE` is the takeover rule of `storeRules.claimOn`; every write after it is fenced
 * (`… AND fence = $3 AND status = 'in_progress'`); time is `coalesce($now, now())`, the database
 * clock unless a test injects one.
 *
 * (Why one long module: every statement of the store side by side, so each write's fence can be
 * read against the others and against `memoryStore`, which mirrors them decision for decision.)
 *
 * @internal
 */
import { Effect } from "effect";
import { Migrator } from "effect/sql";
import type * as IdempotencyStore from "../IdempotencyStore.js";
/** Qualified names of the store's objects in one schema. @internal */
export interface Names {
    readonly record: string;
    readonly attempt: string;
    readonly resolution: string;
    readonly sequence: string;
    readonly migrations: string;
    readonly stepJournal: string;
    readonly outbox: string;
    /** The `LISTEN`/`NOTIFY` channel a write of follow-ups notifies (an identifier, unquoted). */
    readonly channel: string;
}
/** @internal */
export declare const names: (schema: string) => Names;
/** The statements for one schema, with their parameters in order. @internal */
export declare const statements: (n: Names) => {
    /** Claim — `$1 scope, $2 key, $3 tool, $4 fingerprint, $5 owner, $6 lease_ms, $7 retention_ms, $8 max_attempts, $9 recovery, $10 now, $11 arguments` */
    claim: string;
    /**
     * The claims of several keys in one statement (each row decided as {@link claim} decides it) —
     * `$1 claims` (a JSON array of objects with the fields of `claimRequestColumns`, no two of one
     * record), `$2 now`. Rows are inserted in (scope, key) order, so concurrent batches of overlapping
     * keys take their row locks in one order. Returns a row (with its scope and key) per won claim.
     */
    claimMany: string;
    /** Read several records — `$1 refs` (a JSON array of `{ scope, key }`), `$2 now` */
    readMany: string;
    /** Read — `$1 scope, $2 key, $3 now` */
    read: string;
    /** List, newest change first — `$1 scope, $2 key prefix, $3 statuses (comma-separated), $4 tool, $5 limit, $6 now` */
    list: string;
    /** Confirmation after a fenced write matched nothing — `$1 scope, $2 key` */
    peek: string;
    /** Complete — `$1, $2, $3 fence, $4 result text, $5 result_bytes, $6 external_ref, $7 retention_ms, $8 now` */
    complete: string;
    /** Fail — `$1, $2, $3 fence, $4 error text, $5 retention_ms, $6 now` */
    fail: string;
    /** Release — `$1, $2, $3 fence, $4 error text, $5 now` */
    release: string;
    /** Heartbeat — `$1, $2, $3 fence, $4 lease_ms, $5 now` */
    heartbeat: string;
    /** The holder parks its own lease — `$1, $2, $3 fence, $4 error text, $5 now` */
    park: string;
    /** Park an expired lease — `$1, $2, $3 fence seen, $4 now` */
    parkExpired: string;
    /** Reap — `$1 grace_ms, $2 include_reexecutable, $3 batch, $4 now` */
    reap: string;
    /** Resolve — `$1, $2, $3 fence seen, $4 status, $5 result text, $6 result_bytes, $7 error text, $8 external_ref, $9 retention_ms, $10 now` */
    resolve: string;
    /**
     * Resolve and audit, one statement — the parameters of `resolve`, then `$11 by, $12 reason`.
     * The row is locked first, so the audit keeps the error it held while `unknown`.
     */
    resolveAudited: string;
    /** `$1 scope, $2 key` */
    resolutions: string;
    /** Purge — `$1 batch, $2 now, $3 older_than_ms (null: past retention), $4 scope (null: every one)` */
    purge: string;
    /** Journal — `$1 fence, $2 scope, $3 key, $4 attempt, $5 outcome, $6 detail text, $7 now` */
    journal: string;
    /** `$1 scope, $2 key` */
    journalOf: string;
    /** Complete and write the call's follow-ups, one statement — the parameters of `complete`, then `$9 messages (JSON)` */
    completeWithFollowUps: string;
    /** Resolve and write follow-ups (written only when `$4` is `succeeded`) — the parameters of `resolve`, then `$11 messages` */
    resolveWithFollowUps: string;
    /** Resolve, audit and write follow-ups — the parameters of `resolveAudited`, then `$13 messages` */
    resolveAuditedWithFollowUps: string;
    /**
     * Lease due messages — `$1 owner, $2 lease_ms, $3 limit, $4 now`. Due: `pending` and available,
     * or `delivering` with its lease expired (a dispatcher died mid-delivery); and, with an ordering
     * key, no earlier message of that key is still `pending` or `delivering`. Rows another dispatcher
     * is leasing now are skipped (`SKIP LOCKED`); the update re-checks the state it leases from.
     */
    claimMessages: string;
    /**
     * Settle a leased message, fenced by its lease — `$1 id, $2 lease_fence, $3 status (delivered, pending, dead),
     * $4 last error, $5 retry delay ms, $6 now`. Returns the ms from its writing to now (delivery latency).
     */
    settleMessage: string;
    /** Messages by state: `status, count` */
    countMessages: string;
    /** The messages of the outbox, oldest first — `$1 scope, $2 key, $3 statuses (comma-separated), $4 limit` */
    listMessages: string;
};
/** Dies on a schema name that is not a plain identifier (it is interpolated into SQL). @internal */
export declare const checkSchema: (schema: string) => Effect.Effect<void>;
/** @internal */
export declare const migrations: (schema: string) => Migrator.Loader;
/**
 * The claim and complete statements for `schema`, with their parameters in order (see
 * `IdempotencyStore.sqlStatements`).
 *
 * @internal
 */
export declare const rawStatements: (schema: string) => {
    readonly claim: IdempotencyStore.SqlStatement;
    readonly complete: IdempotencyStore.SqlStatement;
};
//# sourceMappingURL=sqlStatements.d.ts.map