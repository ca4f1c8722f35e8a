/**
 * The idempotency store: one record per (scope, key) that says whether a tool call's effect is
 * not yet attempted, leased to a worker, done (result cached), failed terminally (failure
 * cached), released (known not applied, claimable again), or `unknown`.
 *
 * Each operation is one statement on the record: a claim is an insert-or-take-over that wins a
 * lease or returns the record that prevents it (`claimMany`: the claims of one step in one
 * statement); every later write is fenced. Beyond a lease table:
 *
 * - an `unknown` record is claimable by a tool whose recovery is `reexecute` or `reconcile`
 *   (the downstream deduplicates on our key, or the taker probes it first), within `maxAttempts`;
 * - a claim whose response was lost (connection cut after commit) can be resumed by the same
 *   `owner` token, so retrying a claim never strands the record until its lease expires;
 * - completions are confirmed after a lost response: a `complete`/`fail`/`release` that matched no
 *   row checks whether the record already holds exactly this write under the same fence.
 *
 * Invariants every implementation keeps (the conformance suite in
 * `packages/runtime/test/conformance.ts` runs them against memory, PGlite and PostgreSQL):
 *
 * 1. Claims are atomic: of any number of concurrent claims of one key, one wins.
 * 2. Every write after a claim is fenced: it names the fence it holds and changes nothing when
 *    the record's fence differs (`LeaseLost`). Fences come from one monotonic sequence, are never
 *    reused (not even after a purge), and change on every claim, takeover and park.
 * 3. Time decisions use the store's clock (the database's `now()`; the memory store's `Clock`);
 *    every operation takes an optional `now` so tests can inject time.
 * 4. Records in progress or `unknown` are never deleted; settled records only after retention.
 * 5. Claims run in autocommit, never in a transaction spanning the tool call: a lease is visible
 *    at once, and a crash cannot hold a lock.
 * 6. A stored result is returned byte for byte as it was written (`resultText`); results, errors
 *    and journal details are at most {@link maxResultBytes} bytes of JSON text.
 * 7. Impossible requests are refused before anything is read or written (`InvalidStoreRequest`):
 *    a lease of 0 ms or less, a negative retention, an attempt limit below 1.
 * 8. An operator's resolution of an `unknown` record is fenced like any write and, given an
 *    `audit`, recorded in the same statement (who, when, why, what the record held), kept when
 *    the record is purged.
 * 9. A call's follow-ups (`FollowUp`) are written to the outbox only by the statement that
 *    completes it, or resolves it as succeeded, and only when that write matched the fence: never
 *    for a failed, released or `unknown` record, never by a stale worker (the `Outbox` reads them).
 *
 * The operator's view: {@link Service.list} (records by scope, key prefix, status and tool, newest
 * first), {@link Service.resolutions} (the audit of a record), `purge` (by retention, or by age).
 * `Records` is the same as documented operator calls.
 *
 * Layers: {@link layerSql} (PostgreSQL or PGlite, one implementation), {@link layerMemory}.
 *
 * (Why one long module: the store's contract, the rules above with each operation's request and
 * result types, is one concept; its implementations are `internal/sqlStore` and
 * `internal/memoryStore`.)
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect";
import * as MemoryStore from "./internal/memoryStore.js";
import * as SqlStatements from "./internal/sqlStatements.js";
import * as SqlStore from "./internal/sqlStore.js";
import * as Rules from "./internal/storeRules.js";
/**
 * Record states.
 *
 * - `in_progress`: leased to a worker until `leaseExpiresAt`.
 * - `succeeded`: done; the result is cached and replayed.
 * - `failed`: terminal failure; cached and replayed.
 * - `released`: the last attempt failed and is known not to have applied; claimable again.
 * - `unknown`: an attempt may have applied; needs a takeover (per recovery mode) or a resolve.
 *
 * `succeeded`, `failed` and `released` are settled: kept for the retention, then purged.
 *
 * @since 0.1.0
 * @category models
 */
export const Status = Rules.Status;
/**
 * What may happen when a previous attempt may have applied (an expired lease or an `unknown`
 * record), stored on the record at its first claim so that every later claim and the reaper
 * apply the same policy, whichever worker or version runs them:
 *
 * - `reexecute`: run again with the same downstream key; the downstream deduplicates on it.
 * - `reconcile`: take over, probe the downstream by key, run only if the effect is not there.
 * - `manual`: never re-run automatically; park as `unknown` for an operator or reconciler.
 *
 * @since 0.1.0
 * @category models
 */
export const Recovery = Rules.Recovery;
/**
 * How a claim was won, from the state it replaced:
 *
 * - `Fresh`: no record existed.
 * - `FreshAfterRetention`: a settled record past retention was replaced; `generation` bumped.
 * - `RetryAfterRelease`: the previous attempt was released (known not applied).
 * - `Takeover`: the previous attempt may have applied (expired lease, `unknown`, or this owner's
 *   own claim whose response was lost): use the same downstream key, or reconcile first.
 *
 * @since 0.1.0
 * @category models
 */
export const ClaimKind = Rules.ClaimKind;
/**
 * Outcomes an attempt journal entry records.
 *
 * @since 0.1.0
 * @category models
 */
export const JournalOutcome = Rules.JournalOutcome;
/**
 * Largest result (and largest error, and journal detail) the store accepts, in UTF-8 bytes of its
 * JSON text: 256 KiB (262,144), also CHECK constraints in SQL, so an oversized value is refused by
 * the database whoever writes it. The executor checks its own (lower or equal) limit first.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxResultBytes = Rules.maxStoredBytes;
/**
 * Default retention of settled records: 24 h in ms (Stripe's minimum key retention).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultRetentionMs = 24 * 60 * 60 * 1000;
/**
 * The idempotency store service (layers: {@link layerSql}, {@link layerMemory}).
 *
 * @since 0.1.0
 * @category services
 */
export class IdempotencyStore extends Context.Service()("@toolgate/runtime/IdempotencyStore") {
}
/**
 * The SQL store over effect's `SqlClient` (PostgreSQL ≥ 13 through `@effect/sql-pg`, or PGlite
 * through `EmbeddedPostgres`). Creates the schema if needed and runs {@link migrations} with
 * effect's `Migrator` when built. Fails with `StoreUnavailable` or `MigrationError`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSql = (options) => Layer.effect(IdempotencyStore, SqlStore.make(options?.schema ?? defaultSchema, options?.groupCommit === false ? false : {
    inFlight: options?.groupCommit?.inFlight ?? defaultGroupCommit.inFlight,
    maxBatch: options?.groupCommit?.maxBatch ?? defaultGroupCommit.maxBatch
}));
/**
 * The in-memory store with the same semantics, for unit tests; its clock is effect's `Clock`
 * (so `TestClock` drives it) unless an operation passes `now`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = Layer.effect(IdempotencyStore, MemoryStore.make);
/**
 * Group commit's defaults (see {@link SqlOptions}): 2 claim statements in flight before claims wait
 * and go together, at most 64 claims per statement (the setting that did best at 8 and 32 fibers
 * in `bench/executorCpu.ts`).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultGroupCommit = { inFlight: 2, maxBatch: 64 };
/**
 * Default schema of the SQL store.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultSchema = "toolgate";
/**
 * The store's migrations for `schema`, as a `Migrator` loader: `1_idempotency_records` (the
 * tables), `2_stored_text` (results, errors and journal details kept as the exact JSON text
 * written, and errors bounded like results; rows written before keep their values),
 * `3_resolution_audit` (the `idem_resolution` audit of operators' resolutions, and the records'
 * `arguments`, so an operator sees what a call was and a replay can say how its arguments
 * differed; rows written before have none), `4_step_journal` (the `StepJournal`'s table,
 * `step_journal`), `5_outbox` (the outbox's `outbox_message`: the follow-ups of completed
calls and their delivery state). `layerSql` (and `StepJournal.layerSql`) runs them; exported so an application can run them with its own
 * migrations.
 *
 * @since 0.1.0
 * @category migrations
 */
export const migrations = (schema = defaultSchema) => SqlStatements.migrations(schema);
/**
 * Creates the schema (if missing) and runs the store's migrations in it, recording them in
 * `<schema>.toolgate_migrations`. Safe to run concurrently (the Migrator locks its table).
 *
 * @since 0.1.0
 * @category migrations
 */
export const migrate = (schema = defaultSchema) => SqlStore.migrate(schema);
/**
 * The SQL of the two statements every execution runs, rendered for `schema`: the claim (an
 * insert-or-take-over returning the lease) and the completion (a fenced update). For a DBA's
 * review, or a benchmark's floor: the same statements through the same client, without the
 * service. `parameters` names `$1`, `$2`, … in order (`now`: `null` for the database clock;
 * `arguments`: the canonical JSON text of the call's arguments, or `null`).
 *
 * @since 0.1.0
 * @category migrations
 */
export const sqlStatements = (schema = defaultSchema) => SqlStatements.rawStatements(schema);
//# sourceMappingURL=IdempotencyStore.js.map