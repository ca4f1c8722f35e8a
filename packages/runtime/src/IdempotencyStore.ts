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
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type { Migrator, SqlClient } from "effect/sql"
import type { InvalidStoreRequest, LeaseLost, StoreUnavailable } from "./ExecutionError.js"
import type * as FollowUp from "./FollowUp.js"
import * as MemoryStore from "./internal/memoryStore.js"
import * as SqlStatements from "./internal/sqlStatements.js"
import * as SqlStore from "./internal/sqlStore.js"
import * as Rules from "./internal/storeRules.js"

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
export const Status = Rules.Status

/** The type of {@link Status}. @since 0.1.0 @category models */
export type Status = typeof Status.Type

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
export const Recovery = Rules.Recovery

/** The type of {@link Recovery}. @since 0.1.0 @category models */
export type Recovery = typeof Recovery.Type

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
export const ClaimKind = Rules.ClaimKind

/** The type of {@link ClaimKind}. @since 0.1.0 @category models */
export type ClaimKind = typeof ClaimKind.Type

/**
 * A record's identity: `scope` (the tenant) and `key` (`tg1:sha256:…`).
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordRef {
  readonly scope: string
  readonly key: string
}

/**
 * A record reference plus the fence its holder (or observer) saw.
 *
 * @since 0.1.0
 * @category models
 */
export interface FencedRef extends RecordRef {
  readonly fence: bigint
}

/**
 * A claim. Refused with `InvalidStoreRequest` when `leaseMs` is not a finite number > 0,
 * `retentionMs` not a finite number ≥ 0, or `maxAttempts` not an integer ≥ 1.
 *
 * - `tool`: tool name (diagnostics); `fingerprint`: of the arguments the key must match (all of
 *   them, or all but a key policy's free text).
 * - `arguments`: the call's arguments as canonical JSON text, kept on the record (for the
 *   operator, and to say how a later call's arguments differ); at most {@link maxResultBytes}
 *   bytes (larger: pass `null`, nothing is kept). A claim that takes the record over writes its
 *   own.
 * - `owner`: a token unique to this execution (diagnostics, and resuming a claim whose response
 *   was lost).
 * - `leaseMs`: lease length, ms. `retentionMs`: how long the settled record is kept, ms (≥ the
 *   longest client retry window and the downstream's own dedupe window; default 24 h).
 * - `maxAttempts`, `recovery`: stored at the first claim of a generation.
 * - `now`: the store clock's reading to use instead of its own (tests).
 *
 * @since 0.1.0
 * @category models
 */
export interface ClaimRequest extends RecordRef {
  readonly tool: string
  readonly fingerprint: string
  readonly arguments?: string | null | undefined
  readonly owner: string
  readonly leaseMs: number
  readonly retentionMs: number
  readonly maxAttempts: number
  readonly recovery: Recovery
  readonly now?: Date | undefined
}

/**
 * A won claim: the fence to present on every later write.
 *
 * @since 0.1.0
 * @category models
 */
export interface Lease extends FencedRef {
  readonly kind: ClaimKind
  /** The status the claim replaced, `null` when the record was new. */
  readonly previous: Status | null
  readonly attempt: number
  readonly maxAttempts: number
  readonly generation: number
  readonly recovery: Recovery
  readonly leaseExpiresAt: Date
}

/**
 * A record as read, with lease and retention evaluated at the store clock's reading `readAt`.
 *
 * `resultText` is the stored result exactly as written (JSON text of the result encoded with the
 * tool's success Schema), `result` its parsed value; `error` the parsed stored error (the
 * executor's are `StoredError`s); `argumentsText` the arguments of the call that last claimed it
 * (canonical JSON; `null` when none were kept: written before the store kept them, or too large).
 * `retryAfterMs` is the lease time left in ms, rounded up (0 when none or expired).
 *
 * @since 0.1.0
 * @category models
 */
export interface StoredRecord extends FencedRef {
  readonly tool: string
  readonly fingerprint: string
  readonly status: Status
  readonly previous: Status | null
  readonly attempt: number
  readonly maxAttempts: number
  readonly generation: number
  readonly recovery: Recovery
  readonly owner: string | null
  readonly argumentsText: string | null
  readonly resultText: string | null
  readonly result: unknown
  readonly error: unknown
  readonly externalRef: string | null
  readonly leaseExpiresAt: Date | null
  readonly expiresAt: Date
  readonly createdAt: Date
  readonly updatedAt: Date
  readonly completedAt: Date | null
  readonly retryAfterMs: number
  readonly leaseExpired: boolean
  readonly retentionElapsed: boolean
  readonly readAt: Date
}

/**
 * The answer to a claim: the lease, or the record that prevented it (read right after).
 *
 * @since 0.1.0
 * @category models
 */
export type Claim =
  | { readonly _tag: "Claimed"; readonly lease: Lease }
  | { readonly _tag: "Existing"; readonly record: StoredRecord }

/**
 * How an `unknown` record is resolved once the outcome is known.
 *
 * - `Succeeded`: the effect happened; `result` is its JSON text (encoded with the success Schema).
 * - `Failed`: terminal; `error` is JSON text.
 * - `Released`: the effect did not happen; claimable again within `maxAttempts`.
 *
 * @since 0.1.0
 * @category models
 */
export type Resolution =
  | {
    readonly _tag: "Succeeded"
    readonly result: string
    readonly externalRef?: string | null | undefined
    /** The call's follow-ups (`FollowUp.encodeAll`), written to the outbox in the same statement. */
    readonly followUps?: ReadonlyArray<FollowUp.Message> | undefined
  }
  | { readonly _tag: "Failed"; readonly error: string }
  | { readonly _tag: "Released" }

/**
 * Optional store-clock override, for tests.
 *
 * @since 0.1.0
 * @category models
 */
export interface At {
  readonly now?: Date | undefined
}

/**
 * Who resolved a record and why, recorded with the resolution: `by` (a person or a system,
 * at most 200 characters), `reason` (at most 2,000 characters; `null`: none given).
 *
 * @since 0.1.0
 * @category models
 */
export interface Audit {
  readonly by: string
  readonly reason: string | null
}

/**
 * One audited resolution of a record: the fence it was resolved at, the status it was given,
 * the result or error written (JSON text), the stored error the record held while `unknown`
 * (`parkedError`: why it was parked), who, why and when (the store's clock).
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolutionEntry extends FencedRef {
  readonly tool: string
  readonly status: Status
  readonly resultText: string | null
  readonly errorText: string | null
  readonly parkedError: unknown
  readonly by: string
  readonly reason: string | null
  readonly at: Date
}

/**
 * Which records {@link Service.list} returns, newest change first (`updatedAt`, then key), at most
 * `limit` (default 50, from 1 to 1,000; anything else is clamped into that range):
 *
 * - `scope`: one tenant's; `keyPrefix`: keys that start with it (`tg1:sha256:0ec1…`);
 * - `status`: any of these statuses; `tool`: one tool's.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListQuery extends At {
  readonly scope?: string | undefined
  readonly keyPrefix?: string | undefined
  readonly status?: ReadonlyArray<Status> | undefined
  readonly tool?: string | undefined
  readonly limit?: number | undefined
}

/**
 * The service. Every operation fails with `StoreUnavailable` when the store cannot be reached (or
 * refuses a value, e.g. a result over {@link maxResultBytes}: reason `ConstraintError`); fenced
 * writes fail with `LeaseLost` when the record's fence or status is not the one held, and then
 * change nothing.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Claims the key, or returns the record that prevents it (read right after the claim lost). */
  readonly claim: (request: ClaimRequest) => Effect.Effect<Claim, StoreUnavailable | InvalidStoreRequest>
  /**
   * Claims several keys at once (the calls of one model step): one `Claim` per request, in request
   * order, each decided as `claim` decides it, independently of the others (won, or the record
   * that prevented it). On SQL the first request of each record is claimed in one statement (one
   * round trip; one more reads the records of the claims that lost), and a later request of the
   * same record after it, as `claim` would. The batch is decided at one store clock reading (the
   * first request's `now` when given; a later request's own `now` is not used, so a repeat never
   * finds the lease won in its own batch expired). Refused whole with `InvalidStoreRequest` when any request
   * is; a `StoreUnavailable` of the statement fails the batch.
   */
  readonly claimMany: (
    requests: ReadonlyArray<ClaimRequest>
  ) => Effect.Effect<ReadonlyArray<Claim>, StoreUnavailable | InvalidStoreRequest>
  /** The record, evaluated at `now`. */
  readonly read: (ref: RecordRef, options?: At) => Effect.Effect<Option.Option<StoredRecord>, StoreUnavailable>
  /**
   * `in_progress` → `succeeded`: the result (JSON text ≤ 256 KiB, kept byte for byte), for
   * `retentionMs`; with `followUps` (`FollowUp.encodeAll`), the call's messages are written to the
   * outbox in the same statement (fenced with it: a write fenced off writes no message; a delivery
   * key written before is kept as it was).
   */
  readonly complete: (
    lease: FencedRef,
    options: At & {
      readonly result: string
      readonly externalRef?: string | null | undefined
      readonly retentionMs: number
      readonly followUps?: ReadonlyArray<FollowUp.Message> | undefined
    }
  ) => Effect.Effect<void, LeaseLost | StoreUnavailable>
  /** `in_progress` → `failed` (terminal; the error JSON text, ≤ 256 KiB, is cached and replayed). */
  readonly fail: (
    lease: FencedRef,
    options: At & { readonly error: string; readonly retentionMs: number }
  ) => Effect.Effect<void, LeaseLost | StoreUnavailable>
  /** `in_progress` → `released` (known not applied; claimable again); `error` ≤ 256 KiB. */
  readonly release: (
    lease: FencedRef,
    options: At & { readonly error: string | null }
  ) => Effect.Effect<void, LeaseLost | StoreUnavailable>
  /** Extends the lease to `now + leaseMs` (`leaseMs` > 0, else `InvalidStoreRequest`); returns the new expiry. */
  readonly heartbeat: (
    lease: FencedRef,
    options: At & { readonly leaseMs: number }
  ) => Effect.Effect<Date, LeaseLost | StoreUnavailable | InvalidStoreRequest>
  /** The holder parks its own lease as `unknown` (ambiguous outcome); returns the new fence. */
  readonly park: (
    lease: FencedRef,
    options: At & { readonly error: string | null }
  ) => Effect.Effect<bigint, LeaseLost | StoreUnavailable>
  /** Parks an expired lease seen at `fence` as `unknown`; `None` when someone acted first. */
  readonly parkExpired: (ref: FencedRef, options?: At) => Effect.Effect<Option.Option<bigint>, StoreUnavailable>
  /**
   * Resolves an `unknown` record seen at `fence` (`LeaseLost` when it is no longer `unknown` at
   * that fence: changed meanwhile). With `audit`, the resolution is recorded in the same
   * statement (see {@link resolutions}).
   */
  readonly resolve: (
    ref: FencedRef,
    resolution: Resolution,
    options: At & { readonly retentionMs: number; readonly audit?: Audit | undefined }
  ) => Effect.Effect<void, LeaseLost | StoreUnavailable>
  /**
   * The reaper: parks leases expired for more than `graceMs` (default 0) whose recovery is `manual`
   * or attempts used up (every one with `includeReexecutable`), at most `batchSize` (100) per call.
   */
  readonly reap: (
    options?: At & {
      readonly graceMs?: number | undefined
      readonly includeReexecutable?: boolean | undefined
      readonly batchSize?: number | undefined
    }
  ) => Effect.Effect<ReadonlyArray<FencedRef>, StoreUnavailable>
  /**
   * Deletes settled records past retention (or, with `olderThanMs`, settled records last changed
   * more than that many ms ago, whatever their retention; with `scope`, only that tenant's), in
   * batches of `batchSize` (default 500) until none is left; returns how many. Records in progress
   * or `unknown` are never deleted.
   */
  readonly purge: (
    options?: At & {
      readonly batchSize?: number | undefined
      readonly olderThanMs?: number | undefined
      readonly scope?: string | undefined
    }
  ) => Effect.Effect<number, StoreUnavailable>
  /** Records matching a query, newest change first (see {@link ListQuery}). */
  readonly list: (query: ListQuery) => Effect.Effect<ReadonlyArray<StoredRecord>, StoreUnavailable>
  /** The audited resolutions of one record, oldest first. */
  readonly resolutions: (ref: RecordRef) => Effect.Effect<ReadonlyArray<ResolutionEntry>, StoreUnavailable>
  /** Journals an attempt whose outcome the record could not take (a lease lost after the handler ran). */
  readonly journal: (
    lease: FencedRef,
    entry: At & { readonly attempt: number; readonly outcome: JournalOutcome; readonly detail: string | null }
  ) => Effect.Effect<void, StoreUnavailable>
  /** The journal entries of one record, oldest first. */
  readonly journalOf: (ref: RecordRef) => Effect.Effect<ReadonlyArray<JournalEntry>, StoreUnavailable>
}

/**
 * Outcomes an attempt journal entry records.
 *
 * @since 0.1.0
 * @category models
 */
export const JournalOutcome = Rules.JournalOutcome

/** The type of {@link JournalOutcome}. @since 0.1.0 @category models */
export type JournalOutcome = typeof JournalOutcome.Type

/**
 * One journal entry.
 *
 * @since 0.1.0
 * @category models
 */
export interface JournalEntry extends FencedRef {
  readonly attempt: number
  readonly outcome: JournalOutcome
  readonly detail: unknown
  readonly at: Date
}

/**
 * Largest result (and largest error, and journal detail) the store accepts, in UTF-8 bytes of its
 * JSON text: 256 KiB (262,144), also CHECK constraints in SQL, so an oversized value is refused by
 * the database whoever writes it. The executor checks its own (lower or equal) limit first.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxResultBytes: number = Rules.maxStoredBytes

/**
 * Default retention of settled records: 24 h in ms (Stripe's minimum key retention).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultRetentionMs = 24 * 60 * 60 * 1000

/**
 * The idempotency store service (layers: {@link layerSql}, {@link layerMemory}).
 *
 * @since 0.1.0
 * @category services
 */
export class IdempotencyStore extends Context.Service<IdempotencyStore, Service>()(
  "@toolgate/runtime/IdempotencyStore"
) {}

/**
 * The SQL store over effect's `SqlClient` (PostgreSQL ≥ 13 through `@effect/sql-pg`, or PGlite
 * through `EmbeddedPostgres`). Creates the schema if needed and runs {@link migrations} with
 * effect's `Migrator` when built. Fails with `StoreUnavailable` or `MigrationError`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSql = (options?: SqlOptions): Layer.Layer<
  IdempotencyStore,
  StoreUnavailable | Migrator.MigrationError,
  SqlClient.SqlClient
> =>
  Layer.effect(
    IdempotencyStore,
    SqlStore.make(
      options?.schema ?? defaultSchema,
      options?.groupCommit === false ? false : {
        inFlight: options?.groupCommit?.inFlight ?? defaultGroupCommit.inFlight,
        maxBatch: options?.groupCommit?.maxBatch ?? defaultGroupCommit.maxBatch,
        maxWaitMs: options?.groupCommit?.maxWaitMs ?? defaultGroupCommit.maxWaitMs
      }
    )
  )

/**
 * The in-memory store with the same semantics, for unit tests; its clock is effect's `Clock`
 * (so `TestClock` drives it) unless an operation passes `now`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<IdempotencyStore> = Layer.effect(IdempotencyStore, MemoryStore.make)

/**
 * SQL store options. `schema`: the PostgreSQL schema holding the tables (`idem_record`,
 * `idem_attempt`, `idem_resolution`, the `StepJournal`'s `step_journal`, sequence `idem_fence_seq`,
 * function `idem_complete_many`, migrations table `toolgate_migrations`); default `toolgate`. Lowercase letters, digits and `_`,
 * starting with a letter or `_`, ≤ 63 characters.
 *
 * `groupCommit`: how the claims and the completes of one process share statements (default
 * {@link defaultGroupCommit}; `false`: every claim and complete alone). While `inFlight` claim
 * statements are on their way to the database, a claim (of `claim`, reading the database's clock,
 * outside a transaction of the `SqlClient`) waits beside the claims other fibers make, and they go
 * together as one `claimMany` statement of at most `maxBatch` claims when one of those answers (both
 * integers ≥ 1; otherwise building the layer dies). Completes do the same, apart from claims: a
 * `complete` without follow-ups, reading the database's clock, outside a transaction, waits while
 * `inFlight` complete statements are out and goes with the completes beside it as one statement
 * (migration 6's function `idem_complete_many`, which updates each record by its key, in key order).
 * A request waits `maxWaitMs` at most (one timer per kind, running while requests wait): the ones
 * not sent by then go at once, in a statement of their own outside the `inFlight` bound, so requests
 * of free keys do not queue behind statements that wait for a row lock another transaction holds
 * (`Infinity`: no bound; a number ≥ 0). Nothing waits while fewer are out, so a lone call pays no
 * delay; a busy worker sends fewer statements, commits and WAL flushes per call (`bench/RESULTS.md`,
 * execution). Each request gets the answer its own statement would have given (a repeat of one key
 * in a statement is decided after the first; a complete the shared statement did not apply is
 * confirmed as a single complete's is: done when an identical write of ours committed, else
 * `LeaseLost`); a statement that fails fails every request in it with `StoreUnavailable` naming each
 * one's key (one that a deadlock aborted sends its requests alone, in turn, instead; a failure after
 * it fails only the requests it concerns); a request whose caller is interrupted while it waits is
 * never sent. What could fail a shared statement for everyone goes alone: a NUL, text that could pass
 * the 256 KiB bounds or an identity the primary key's index cannot hold, a lease or retention beyond
 * 10^12 ms, a fence beyond `int8`.
 *
 * @since 0.1.0
 * @category models
 */
export interface SqlOptions {
  readonly schema?: string | undefined
  readonly groupCommit?: false | {
    readonly inFlight?: number | undefined
    readonly maxBatch?: number | undefined
    readonly maxWaitMs?: number | undefined
  } | undefined
}

/**
 * Group commit's defaults (see {@link SqlOptions}): 1 statement of each kind (claims, completes) in
 * flight before requests wait and go together, at most 64 requests per statement, a request waiting
 * 100 ms at most (far beyond a statement's usual round trip) before it goes alone. With claims and
 * completes both group-committed, 1 in flight did best at 8 and 32 fibers in `bench/executorCpu.ts`
 * (2 and 4 send more, smaller statements); a lone call goes at once either way.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultGroupCommit = { inFlight: 1, maxBatch: 64, maxWaitMs: 100 } as const

/**
 * Default schema of the SQL store.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultSchema = "toolgate"

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
export const migrations = (schema: string = defaultSchema): Migrator.Loader => SqlStatements.migrations(schema)

/**
 * Creates the schema (if missing) and runs the store's migrations in it, recording them in
 * `<schema>.toolgate_migrations`. Safe to run concurrently (the Migrator locks its table).
 *
 * @since 0.1.0
 * @category migrations
 */
export const migrate = (
  schema: string = defaultSchema
): Effect.Effect<void, StoreUnavailable | Migrator.MigrationError, SqlClient.SqlClient> => SqlStore.migrate(schema)

/**
 * A statement of the SQL store, rendered for one schema: its text and its positional parameters.
 *
 * @since 0.1.0
 * @category models
 */
export interface SqlStatement {
  readonly text: string
  readonly parameters: ReadonlyArray<string>
}

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
export const sqlStatements = (
  schema: string = defaultSchema
): { readonly claim: SqlStatement; readonly complete: SqlStatement } => SqlStatements.rawStatements(schema)
