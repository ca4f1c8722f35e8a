/**
 * The SQL implementation of `IdempotencyStore`: one statement per operation (claim, the claims of
 * a step, read, complete, the completes of several calls, fail, release, heartbeat, park, park-expired, resolve (audited or not),
 * reap, purge, journal, list, resolutions), with
 * the semantics listed in `IdempotencyStore.ts`, in the portable subset that runs on PostgreSQL
 * ≥ 13 and PGlite (no `RETURNING old.*`, no `ON CONFLICT DO SELECT`). Statements are rendered once
 * per schema and run with `sql.unsafe`, so the driver's prepared-statement cache serves them;
 * every value is a bound parameter. Parameters and rows go through synchronous `Schema` codecs
 * (`sqlCodecs`): the statements alias their columns to the model's field names, so a decoded row
 * is the model.
 *
 * Results, errors and journal details are `text` columns holding the JSON text exactly as
 * written (migration 2; `jsonb` would reorder members and drop duplicates, so a replay would not
 * return the bytes the execution produced), each bounded by a CHECK to 256 KiB.
 *
 * (Why one long module: each operation of the store's contract with its answer — won or lost
 * claims, confirmed or fenced-off writes — side by side, as `memoryStore` mirrors them; the SQL
 * text is in `sqlStatements`, the codecs in `sqlCodecs`.)
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { Migrator, SqlClient, type SqlError } from "effect/sql"
import {
  type FencedOperation,
  type InvalidStoreRequest,
  LeaseLost,
  type StoreOperation,
  StoreUnavailable
} from "../ExecutionError.js"
import * as ExecutionMetrics from "../ExecutionMetrics.js"
import type * as FollowUp from "../FollowUp.js"
import type * as IdempotencyStore from "../IdempotencyStore.js"
import * as GroupCommit from "./groupCommit.js"
import { traced } from "./spans.js"
import * as Codecs from "./sqlCodecs.js"
import type { Codec } from "./sqlCodecs.js"
import { checkSchema, migrations, names, statements } from "./sqlStatements.js"
import * as Rules from "./storeRules.js"

const sqlState = (error: SqlError.SqlError): string | null => {
  const cause = error.reason.cause
  return Predicate.hasProperty(cause, "code") && typeof cause.code === "string" ? cause.code : null
}

/** Whether a claim's text field may go in a shared statement: a string of at most `max` units, no NUL. */
const sharedText = (value: unknown, max: number): value is string =>
  typeof value === "string" && value.length <= max && !value.includes("\u0000")

/** The UTF-16 units of scope and key together that a shared claim may have (≤ 2400 UTF-8 bytes). */
const maxSharedIdentity = 800

const isRecovery = Schema.is(Rules.Recovery)

/** A record's identity as one string (scope and key joined by a NUL, which neither contains). */
const recordId = (ref: IdempotencyStore.RecordRef): string => `${ref.scope}\u0000${ref.key}`

/** A lease's identity as one string: its record's and its fence. */
const fencedId = (ref: IdempotencyStore.FencedRef): string => `${recordId(ref)}\u0000${ref.fence}`

/** A statement's failure as one of its claims answers it: naming that claim's key. */
const naming = (key: string) => (error: StoreUnavailable): StoreUnavailable =>
  error.keyHash === key ? error : new StoreUnavailable({ ...error, keyHash: key })

const unreadableRow = (operation: StoreOperation, keyHash: string | null): StoreUnavailable =>
  new StoreUnavailable({ keyHash, operation, reason: "UnreadableRow", code: null, retryable: false })

/**
 * Maps a driver failure to `StoreUnavailable`, keeping the reason tag and SQLSTATE, never values;
 * a row (or request) the codecs refuse is `UnreadableRow`, not retryable. (The step journal's SQL
 * maps its failures with it too.)
 *
 * @internal
 */
export const unavailable = (operation: StoreOperation, keyHash: string | null) =>
(
  error: SqlError.SqlError | Schema.SchemaError
): StoreUnavailable => {
  if (Schema.isSchemaError(error)) return unreadableRow(operation, keyHash)
  const code = sqlState(error)
  return new StoreUnavailable({
    keyHash,
    operation,
    reason: error.reason._tag,
    code,
    // class 08 = connection exception, 57P = operator intervention (terminated, shutting down)
    retryable: error.isRetryable || error.reason._tag === "ConnectionError" ||
      (code !== null && (code.startsWith("08") || code.startsWith("57P") || code === "40001" || code === "40P01"))
  })
}

/** @internal */
export const migrate = (
  schema: string
): Effect.Effect<void, StoreUnavailable | Migrator.MigrationError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    yield* checkSchema(schema)
    const sql = yield* SqlClient.SqlClient
    // Two processes may race here; the loser of CREATE SCHEMA sees a unique violation.
    yield* sql.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`).pipe(
      Effect.catchReason("SqlError", "UniqueViolation", () => Effect.void),
      Effect.mapError(unavailable("migrate", null))
    )
    yield* Migrator.make({})({ loader: migrations(schema), table: names(schema).migrations }).pipe(
      Effect.mapError((e) => e._tag === "SqlError" ? unavailable("migrate", null)(e) : e)
    )
  })

/**
 * A statement with its codecs, run on `sql`: `Request` encodes the parameters (`params` puts them
 * in placeholder order), `Row` decodes each returned row; failures become `StoreUnavailable` naming
 * the operation and the record's key hash (null when the statement has none). Shared by the store,
 * the outbox and the step journal.
 *
 * @internal
 */
export const queryOn = (sql: SqlClient.SqlClient) =>
<Req extends Schema.Constraint, Row extends Schema.Constraint>(
  operation: StoreOperation,
  statement: string,
  { Request, Row, fast, params }: Codec<Req, Row>
) => {
  // synchronous codecs (no Effect per field): the statements' schemas have no effectful transformations
  const encode = Schema.encodeUnknownExit(Request as unknown as Schema.Codec<Req["Type"], Req["Encoded"]>)
  const decode = Schema.decodeUnknownExit(
    Schema.mutable(Schema.Array(Row as unknown as Schema.Codec<Row["Type"], unknown>))
  )
  /** The rows read without `Schema` when every one is in the usual shape (`undefined`: the schema decides). */
  const fastRows = (rows: ReadonlyArray<unknown>): Array<Row["Type"]> | undefined => {
    if (fast === undefined) return undefined
    const out: Array<Row["Type"]> = []
    for (let i = 0; i < rows.length; i++) {
      const row = fast.row(rows[i])
      if (row === undefined) return undefined
      out.push(row)
    }
    return out
  }
  return (request: Req["Type"], keyHash: string | null = null): Effect.Effect<Array<Row["Type"]>, StoreUnavailable> => {
    let values = fast?.params(request)
    if (values === undefined) {
      const encoded = encode(request)
      if (Exit.isFailure(encoded)) return Effect.fail(unreadableRow(operation, keyHash))
      values = params(encoded.value)
    }
    return sql.unsafe(statement, values).pipe(
      Effect.mapError(unavailable(operation, keyHash)),
      Effect.flatMap((rows) => {
        const read = fastRows(rows)
        if (read !== undefined) return Effect.succeed(read)
        const decoded = decode(rows)
        return Exit.isSuccess(decoded) ? Effect.succeed(decoded.value) : Effect.fail(unreadableRow(operation, keyHash))
      })
    )
  }
}

/** What `complete` is given. */
type CompleteOptions = IdempotencyStore.At & {
  readonly result: string
  readonly externalRef?: string | null | undefined
  readonly retentionMs: number
  readonly followUps?: ReadonlyArray<FollowUp.Message> | undefined
}

/** A complete without follow-ups (what a shared `completeMany` statement takes, at the database's clock: `now` null). */
interface Completing extends Codecs.CompleteEntry {
  readonly now: Date | null
}

/**
 * The answers of a shared statement (`batch`: an answer per request) or, when the statement itself
 * fails, that failure as each request's, naming its own key. A deadlock is the shared statement's
 * own (it locks several rows; alone, a request locks one): its victim wrote nothing, so each
 * request goes alone (`one`), in turn, and gets that answer.
 */
const sharedOrInTurn = <Req extends { readonly key: string } | { readonly lease: { readonly key: string } }, A, E>(
  requests: ReadonlyArray<Req>,
  batch: Effect.Effect<ReadonlyArray<Exit.Exit<A, E>>, StoreUnavailable>,
  one: (request: Req) => Effect.Effect<A, E>
): Effect.Effect<ReadonlyArray<Exit.Exit<A, E | StoreUnavailable>>> =>
  Effect.flatMap(Effect.exit(batch), (exit): Effect.Effect<ReadonlyArray<Exit.Exit<A, E | StoreUnavailable>>> => {
    if (Exit.isSuccess(exit)) return Effect.succeed(exit.value)
    const failure = Cause.findErrorOption(exit.cause)
    if (Option.isSome(failure) && failure.value.code === "40P01") {
      return Effect.forEach(requests, (req) => Effect.exit(one(req)))
    }
    return Effect.succeed(
      requests.map((req) =>
        Exit.mapError(exit as Exit.Exit<never, StoreUnavailable>, naming("key" in req ? req.key : req.lease.key))
      )
    )
  })

const isCount = (n: number): boolean => Number.isInteger(n) && n >= 1

/** How the store group-commits claims and completes (`false`: each alone in its statement). @internal */
export type GroupCommitOptions =
  | { readonly inFlight: number; readonly maxBatch: number; readonly maxWaitMs: number }
  | false

/** @internal */
export const make = (schema: string, groupCommit: GroupCommitOptions) =>
  Effect.gen(function*() {
    // inFlight < 1 never sends what waits (every claim would hang), maxBatch < 1 sends empty batches
    if (
      groupCommit !== false &&
      !(isCount(groupCommit.inFlight) && isCount(groupCommit.maxBatch) && groupCommit.maxWaitMs >= 0)
    ) {
      return yield* Effect.die(
        new Error(
          `invalid groupCommit ${
            JSON.stringify(groupCommit)
          }: inFlight and maxBatch are integers ≥ 1, maxWaitMs a number ≥ 0`
        )
      )
    }
    yield* migrate(schema)
    const sql = yield* SqlClient.SqlClient
    const s = statements(names(schema))

    const query = queryOn(sql)

    const claimQuery = query("claim", s.claim, Codecs.claim)
    type ClaimParams = Parameters<typeof claimQuery>[0]
    type ClaimRow = Effect.Success<ReturnType<typeof claimQuery>>[number]
    const claimManyQuery = query("claim", s.claimMany, Codecs.claimMany)
    const readManyQuery = query("claim", s.readMany, Codecs.readMany)
    const readQuery = query("read", s.read, Codecs.read)
    const peekQuery = query("read", s.peek, Codecs.peek)
    const completeQuery = query("complete", s.complete, Codecs.complete)
    const completeManyQuery = query("complete", s.completeMany, Codecs.completeMany)
    const failQuery = query("fail", s.fail, Codecs.fail)
    const releaseQuery = query("release", s.release, Codecs.release)
    const heartbeatQuery = query("heartbeat", s.heartbeat, Codecs.heartbeat)
    const parkQuery = query("park", s.park, Codecs.park)
    const parkExpiredQuery = query("parkExpired", s.parkExpired, Codecs.parkExpired)
    const resolveQuery = query("resolve", s.resolve, Codecs.resolve)
    const resolveAuditedQuery = query("resolve", s.resolveAudited, Codecs.resolveAudited)
    const completeWithFollowUpsQuery = query("complete", s.completeWithFollowUps, Codecs.completeWithFollowUps)
    const resolveWithFollowUpsQuery = query("resolve", s.resolveWithFollowUps, Codecs.resolveWithFollowUps)
    const resolveAuditedWithFollowUpsQuery = query(
      "resolve",
      s.resolveAuditedWithFollowUps,
      Codecs.resolveAuditedWithFollowUps
    )
    const listQuery = query("list", s.list, Codecs.list)
    const resolutionsQuery = query("resolutions", s.resolutions, Codecs.resolutions)
    const reapQuery = query("reap", s.reap, Codecs.reap)
    const purgeQuery = query("purge", s.purge, Codecs.purge)
    const journalQuery = query("journal", s.journal, Codecs.journal)
    const journalOfQuery = query("journalOf", s.journalOf, Codecs.journalOf)

    const readRow = (ref: IdempotencyStore.RecordRef, now: Date | undefined, operation: StoreOperation) =>
      readQuery({ scope: ref.scope, key: ref.key, now: now ?? null }, ref.key).pipe(
        Effect.flatMap((rows) => {
          if (rows.length === 0) return Effect.succeed(undefined)
          const record = Codecs.toRecord(rows[0])
          return record === undefined ? Effect.fail(unreadableRow(operation, ref.key)) : Effect.succeed(record)
        })
      )

    const lost = (lease: IdempotencyStore.FencedRef, operation: FencedOperation) =>
      new LeaseLost({ keyHash: lease.key, fence: lease.fence.toString(), operation })

    /**
     * A fenced write that matched no row: did an earlier, identical write of ours commit and
     * lose its response? Then the record holds `status` under our fence, and the write is done.
     */
    const confirm = (lease: IdempotencyStore.FencedRef, operation: FencedOperation, status: IdempotencyStore.Status) =>
      peekQuery({ scope: lease.scope, key: lease.key }, lease.key).pipe(
        Effect.flatMap((rows) =>
          rows.length > 0 && rows[0].status === status && rows[0].fence === lease.fence
            ? Effect.void
            : Effect.fail(lost(lease, operation))
        )
      )

    /** The answer to a fenced write: done, confirmed, or `LeaseLost`. */
    const fenced = (
      lease: IdempotencyStore.FencedRef,
      operation: FencedOperation,
      confirmStatus: IdempotencyStore.Status | undefined
    ) =>
    (rows: ReadonlyArray<unknown>) =>
      rows.length > 0
        ? Effect.void
        : confirmStatus === undefined
        ? Effect.fail(lost(lease, operation))
        : confirm(lease, operation, confirmStatus)

    /** The lease of a claim won with `row`. */
    const claimedBy = (req: IdempotencyStore.ClaimRequest, row: ClaimRow): IdempotencyStore.Claim => ({
      _tag: "Claimed",
      lease: { scope: req.scope, key: req.key, kind: Rules.kindOf(row.previous, row.attempt), ...row }
    })

    /**
     * One claim, alone in its statement (`req` is valid). The usual answer (a row: won) takes no
     * generator; a claim that lost reads the record and, if it raced a purge, claims again.
     */
    const claimOne = (req: IdempotencyStore.ClaimRequest): Effect.Effect<IdempotencyStore.Claim, StoreUnavailable> => {
      const request = { ...req, arguments: req.arguments ?? null, now: req.now ?? null }
      return Effect.flatMap(
        claimQuery(request, req.key),
        (rows) => rows.length > 0 ? Effect.succeed(claimedBy(req, rows[0])) : claimLost(req, request)
      )
    }

    /** A claim that found the key taken: the record, or (a purge raced it) up to two more claims. */
    const claimLost = Effect.fnUntraced(function*(req: IdempotencyStore.ClaimRequest, request: ClaimParams) {
      for (let round = 0; round < 3; round++) {
        if (round > 0) {
          const rows = yield* claimQuery(request, req.key)
          if (rows.length > 0) return claimedBy(req, rows[0])
        }
        const record = yield* readRow(req, req.now, "claim")
        if (record !== undefined) return { _tag: "Existing", record } as const
      }
      return yield* new StoreUnavailable({
        keyHash: req.key,
        operation: "claim",
        reason: "ClaimContention",
        code: null,
        retryable: true
      })
    })

    /**
     * The claims of `requests` (each valid) in one statement, as `claimMany` answers them. Once the
     * first statement has answered, a failure after it (reading the claims lost, an unreadable
     * record, claiming again after a purge) is the answer of the claims it concerns only: a claim
     * won in that statement is committed, and its caller gets its lease.
     */
    const claimBatch = Effect.fnUntraced(function*(
      requests: ReadonlyArray<IdempotencyStore.ClaimRequest>
    ) {
      const now = requests[0]?.now ?? null
      const claims: Array<IdempotencyStore.Claim | undefined> = Array.from({ length: requests.length }, () => undefined)
      const failures: Array<StoreUnavailable | undefined> = Array.from({ length: requests.length }, () => undefined)
      /** A failure of a statement for the claims still pending, each naming its own key. */
      const failPending = (error: StoreUnavailable) => {
        for (const i of pending) {
          failures[i] = naming(requests[i].key)(error)
        }
        pending = []
      }
      // the requests as the database stores their text (a lone surrogate becomes U+FFFD, as in `claim`)
      const stored = requests.map(Codecs.asStored)
      // ON CONFLICT DO UPDATE takes each record once per statement: repeats are claimed after it
      const index = new Map<string, number>()
      const repeats: Array<number> = []
      stored.forEach((req, i) => {
        const id = recordId(req)
        if (index.has(id)) repeats.push(i)
        else index.set(id, i)
      })
      let pending = Array.from(index.values())
      // A claim that loses and then finds no row raced a purge; claiming again settles it.
      for (let round = 0; round < 3 && pending.length > 0; round++) {
        const claimed = claimManyQuery({ claims: Codecs.claimManyJson(pending.map((i) => stored[i])), now })
        // the first statement failing fails the batch (nothing was won); a later one, the claims it held
        const won = round === 0 ? Result.succeed(yield* claimed) : yield* Effect.result(claimed)
        if (Result.isFailure(won)) {
          failPending(won.failure)
          break
        }
        for (const row of won.success) {
          const i = index.get(recordId(row))
          if (i === undefined) continue
          // the request's own scope and key, as `claim` answers
          const lease: IdempotencyStore.Lease = {
            kind: Rules.kindOf(row.previous, row.attempt),
            ...row,
            scope: requests[i].scope,
            key: requests[i].key
          }
          claims[i] = { _tag: "Claimed", lease }
        }
        pending = pending.filter((i) => claims[i] === undefined)
        if (pending.length === 0) break
        const refs = JSON.stringify(pending.map((i) => ({ scope: stored[i].scope, key: stored[i].key })))
        const read = yield* Effect.result(readManyQuery({ refs, now }))
        if (Result.isFailure(read)) {
          failPending(read.failure)
          break
        }
        for (const row of read.success) {
          const i = index.get(recordId(row))
          if (i === undefined) continue
          const record = Codecs.toRecord(row)
          if (record === undefined) failures[i] = unreadableRow("claim", requests[i].key)
          else claims[i] = { _tag: "Existing", record }
        }
        pending = pending.filter((i) => claims[i] === undefined && failures[i] === undefined)
      }
      const answers: Array<Exit.Exit<IdempotencyStore.Claim, StoreUnavailable>> = claims.map((claim, i) =>
        claim !== undefined
          ? Exit.succeed(claim)
          : Exit.fail(
            failures[i] ?? new StoreUnavailable({
              keyHash: requests[i].key,
              operation: "claim",
              reason: "ClaimContention",
              code: null,
              retryable: true
            })
          )
      )
      // at the batch's clock, not a repeat's own `now`: a later one could find the lease won above
      // expired and win the key a second time in one batch
      for (const i of repeats) answers[i] = yield* Effect.exit(claimOne({ ...requests[i], now: now ?? undefined }))
      return answers
    })

    /**
     * Whether a valid claim may share a statement: it reads the database's clock (no `now`), and
     * nothing in it can fail a statement that a single claim would fail alone — a field of another
     * type or a recovery the table refuses (an untyped caller's; alone, the codec refuses it), a NUL
     * (text cannot hold it), a scope and key the primary key's btree may not hold (an entry is at
     * most 2704 bytes; 800 UTF-16 units are at most 2400 UTF-8 bytes), a tool, fingerprint, owner
     * or arguments that may pass the 256 KiB bound (or swell the batch's JSON), a lease or retention
     * beyond 10^12 ms (~31 years; far beyond, the instant leaves `timestamptz`'s range).
     */
    const sharesStatement = (req: IdempotencyStore.ClaimRequest): boolean =>
      req.now === undefined && req.leaseMs <= 1e12 && req.retentionMs <= 1e12 && isRecovery(req.recovery) &&
      (req.arguments == null || sharedText(req.arguments, Rules.maxStoredBytes / 3)) &&
      sharedText(req.scope, maxSharedIdentity) && sharedText(req.key, maxSharedIdentity) &&
      req.scope.length + req.key.length <= maxSharedIdentity &&
      sharedText(req.tool, Rules.maxStoredBytes / 3) && sharedText(req.fingerprint, Rules.maxStoredBytes / 3) &&
      sharedText(req.owner, Rules.maxStoredBytes / 3)

    /**
     * Group commit of claims (`GroupCommit`): a claim that may share its statement (`sharesStatement`)
     * and runs outside a transaction of this client waits, while `inFlight` claim statements are out,
     * beside the claims other fibers of this process make, and goes with them as one `claimMany`
     * statement; alone, it takes its single statement. Each caller gets the answer its single
     * statement would have given; a statement that fails fails every claim in it, each naming its
     * own key. A claim inside a transaction runs alone on the transaction's connection.
     */
    const claims = groupCommit === false ? undefined : GroupCommit.make({
      ...groupCommit,
      one: claimOne,
      many: (requests: ReadonlyArray<IdempotencyStore.ClaimRequest>) =>
        sharedOrInTurn(requests, claimBatch(requests), claimOne)
    })

    const claimSpan = traced("IdempotencyStore.claim")
    /**
     * A claim (no generator on this path: it runs once per execution). Suspended, as every store
     * operation is: nothing of the request is read before the effect runs.
     */
    const claim = (req: IdempotencyStore.ClaimRequest) =>
      claimSpan(Effect.suspend((): Effect.Effect<IdempotencyStore.Claim, StoreUnavailable | InvalidStoreRequest> => {
        const invalid = Rules.checkClaim(req)
        if (invalid !== undefined) return Effect.fail(invalid)
        if (claims === undefined || !sharesStatement(req)) return claimOne(req)
        return Effect.contextWith((context: Context.Context<never>) =>
          Context.getOrUndefined(context, sql.transactionService) === undefined ? claims.send(req) : claimOne(req)
        )
      }))

    const claimMany = Effect.fnUntraced(function*(
      requests: ReadonlyArray<IdempotencyStore.ClaimRequest>
    ) {
      for (const req of requests) {
        const invalid = Rules.checkClaim(req)
        if (invalid !== undefined) return yield* invalid
      }
      const answers = yield* claimBatch(requests)
      const claimed: Array<IdempotencyStore.Claim> = []
      for (const answer of answers) {
        if (Exit.isFailure(answer)) return yield* Effect.failCause(answer.cause)
        claimed.push(answer.value)
      }
      return claimed
    }, traced("IdempotencyStore.claimMany"))

    const read = Effect.fnUntraced(function*(
      ref: IdempotencyStore.RecordRef,
      options?: IdempotencyStore.At
    ) {
      return Option.fromNullishOr(yield* readRow(ref, options?.now, "read"))
    }, traced("IdempotencyStore.read"))

    /** A complete without follow-ups, alone in its statement. */
    const completeOne = (c: Completing) =>
      Effect.flatMap(
        completeQuery({
          scope: c.lease.scope,
          key: c.lease.key,
          fence: c.lease.fence,
          result: c.result,
          externalRef: c.externalRef,
          retentionMs: c.retentionMs,
          now: c.now
        }, c.lease.key),
        fenced(c.lease, "complete", "succeeded")
      )

    /**
     * The completes of `requests` in one statement (`completeMany`), each answered as it would be
     * alone: a lease the statement completed is done; any other is confirmed as a single complete
     * that matched nothing is (done when an identical write of ours committed, else `LeaseLost`).
     * A repeat of a lease finds it completed by the first, as it would one after another.
     */
    const completeBatch = (requests: ReadonlyArray<Completing>) =>
      Effect.flatMap(
        completeManyQuery({ completes: Codecs.completeManyJson(requests) }),
        (rows) => {
          // the statement reports the stored scope and key (a lone surrogate as U+FFFD), as the JSON sent them
          const waiting = new Map<string, Array<number>>()
          requests.forEach((c, i) => {
            const id = fencedId({ ...Codecs.asStoredRef(c.lease), fence: c.lease.fence })
            const list = waiting.get(id)
            if (list === undefined) waiting.set(id, [i])
            else list.push(i)
          })
          const completed: Array<boolean> = requests.map(() => false)
          for (const row of rows) {
            const i = waiting.get(fencedId(row))?.shift()
            if (i !== undefined) completed[i] = true
          }
          return Effect.forEach(requests, (c, i) =>
            completed[i]
              ? Effect.succeed(Exit.void)
              : Effect.exit(confirm(c.lease, "complete", "succeeded")))
        }
      )

    /**
     * Whether a complete without follow-ups may share a statement: it reads the database's clock,
     * and nothing in it could fail a statement a single complete would fail alone (a fence beyond
     * `int8`, a NUL, text that may pass the 256 KiB bound, a retention whose instant leaves
     * `timestamptz`'s range).
     */
    const sharesComplete = (c: Completing): boolean =>
      c.now === null && typeof c.lease.fence === "bigint" && BigInt.asIntN(64, c.lease.fence) === c.lease.fence &&
      sharedText(c.lease.scope, maxSharedIdentity) && sharedText(c.lease.key, maxSharedIdentity) &&
      sharedText(c.result, Rules.maxStoredBytes / 3) &&
      (c.externalRef === null || sharedText(c.externalRef, Rules.maxStoredBytes / 3)) &&
      Number.isFinite(c.retentionMs) && Math.abs(c.retentionMs) <= 1e12

    /** Group commit of completes, as of claims (`claims` below): plain completes outside a transaction share statements. */
    const completes = groupCommit === false ? undefined : GroupCommit.make({
      ...groupCommit,
      one: completeOne,
      many: (requests: ReadonlyArray<Completing>) => sharedOrInTurn(requests, completeBatch(requests), completeOne)
    })

    const completeSpan = traced("IdempotencyStore.complete")
    /**
     * A complete (no generator on this path: it runs once per execution). Suspended, as every store
     * operation is: nothing of the request is read before the effect runs.
     */
    const complete = (lease: IdempotencyStore.FencedRef, options: CompleteOptions) =>
      completeSpan(Effect.suspend((): Effect.Effect<void, StoreUnavailable | LeaseLost> => {
        const followUps = options.followUps
        if (followUps !== undefined && followUps.length > 0) {
          return Effect.flatMap(
            completeWithFollowUpsQuery({
              scope: lease.scope,
              key: lease.key,
              fence: lease.fence,
              result: options.result,
              externalRef: options.externalRef ?? null,
              retentionMs: options.retentionMs,
              now: options.now ?? null,
              messages: Codecs.messagesJson(followUps)
            }, lease.key),
            fenced(lease, "complete", "succeeded")
          )
        }
        const c: Completing = {
          lease,
          result: options.result,
          externalRef: options.externalRef ?? null,
          retentionMs: options.retentionMs,
          now: options.now ?? null
        }
        if (completes === undefined || !sharesComplete(c)) return completeOne(c)
        return Effect.contextWith((context: Context.Context<never>) =>
          Context.getOrUndefined(context, sql.transactionService) === undefined ? completes.send(c) : completeOne(c)
        )
      }))

    const fail = Effect.fnUntraced(function*(
      lease: IdempotencyStore.FencedRef,
      options: IdempotencyStore.At & { readonly error: string; readonly retentionMs: number }
    ) {
      const rows = yield* failQuery({
        scope: lease.scope,
        key: lease.key,
        fence: lease.fence,
        error: options.error,
        retentionMs: options.retentionMs,
        now: options.now ?? null
      }, lease.key)
      yield* fenced(lease, "fail", "failed")(rows)
    }, traced("IdempotencyStore.fail"))

    const release = Effect.fnUntraced(function*(
      lease: IdempotencyStore.FencedRef,
      options: IdempotencyStore.At & { readonly error: string | null }
    ) {
      const rows = yield* releaseQuery({
        scope: lease.scope,
        key: lease.key,
        fence: lease.fence,
        error: options.error,
        now: options.now ?? null
      }, lease.key)
      yield* fenced(lease, "release", "released")(rows)
    }, traced("IdempotencyStore.release"))

    const heartbeat = Effect.fnUntraced(function*(
      lease: IdempotencyStore.FencedRef,
      options: IdempotencyStore.At & { readonly leaseMs: number }
    ) {
      const invalid = Rules.checkHeartbeat(lease.key, options.leaseMs)
      if (invalid !== undefined) return yield* invalid
      const rows = yield* heartbeatQuery({
        scope: lease.scope,
        key: lease.key,
        fence: lease.fence,
        leaseMs: options.leaseMs,
        now: options.now ?? null
      }, lease.key)
      if (rows.length === 0) return yield* lost(lease, "heartbeat")
      return rows[0].leaseExpiresAt
    }, traced("IdempotencyStore.heartbeat"))

    const park = Effect.fnUntraced(function*(
      lease: IdempotencyStore.FencedRef,
      options: IdempotencyStore.At & { readonly error: string | null }
    ) {
      const rows = yield* parkQuery({
        scope: lease.scope,
        key: lease.key,
        fence: lease.fence,
        error: options.error,
        now: options.now ?? null
      }, lease.key)
      if (rows.length === 0) return yield* lost(lease, "park")
      return rows[0].fence
    }, traced("IdempotencyStore.park"))

    const parkExpired = Effect.fnUntraced(function*(
      ref: IdempotencyStore.FencedRef,
      options?: IdempotencyStore.At
    ) {
      const rows = yield* parkExpiredQuery({
        scope: ref.scope,
        key: ref.key,
        fence: ref.fence,
        now: options?.now ?? null
      }, ref.key)
      if (rows.length === 0) return Option.none<bigint>()
      yield* ExecutionMetrics.count("parked")
      return Option.some(rows[0].fence)
    }, traced("IdempotencyStore.parkExpired"))

    const resolve = Effect.fnUntraced(function*(
      ref: IdempotencyStore.FencedRef,
      resolution: IdempotencyStore.Resolution,
      options: IdempotencyStore.At & {
        readonly retentionMs: number
        readonly audit?: IdempotencyStore.Audit | undefined
      }
    ) {
      const request = {
        scope: ref.scope,
        key: ref.key,
        fence: ref.fence,
        status: resolution._tag === "Succeeded" ? "succeeded" : resolution._tag === "Failed" ? "failed" : "released",
        result: resolution._tag === "Succeeded" ? resolution.result : null,
        error: resolution._tag === "Failed" ? resolution.error : null,
        externalRef: resolution._tag === "Succeeded" ? resolution.externalRef ?? null : null,
        retentionMs: options.retentionMs,
        now: options.now ?? null
      } as const
      const followUps = resolution._tag === "Succeeded" ? resolution.followUps ?? [] : []
      const messages = followUps.length === 0 ? undefined : Codecs.messagesJson(followUps)
      const audit = options.audit
      const rows = audit === undefined
        ? messages === undefined
          ? yield* resolveQuery(request, ref.key)
          : yield* resolveWithFollowUpsQuery({ ...request, messages }, ref.key)
        : messages === undefined
        ? yield* resolveAuditedQuery({ ...request, by: audit.by, reason: audit.reason }, ref.key)
        : yield* resolveAuditedWithFollowUpsQuery({ ...request, by: audit.by, reason: audit.reason, messages }, ref.key)
      yield* fenced(ref, "resolve", undefined)(rows)
    }, traced("IdempotencyStore.resolve"))

    const reap = Effect.fnUntraced(function*(
      options?: IdempotencyStore.At & {
        readonly graceMs?: number | undefined
        readonly includeReexecutable?: boolean | undefined
        readonly batchSize?: number | undefined
      }
    ) {
      const rows = yield* reapQuery({
        graceMs: options?.graceMs ?? 0,
        includeReexecutable: options?.includeReexecutable ?? false,
        batchSize: options?.batchSize ?? 100,
        now: options?.now ?? null
      }, null)
      if (rows.length > 0) yield* ExecutionMetrics.count("parked", rows.length)
      return rows
    }, traced("IdempotencyStore.reap"))

    const purge = Effect.fnUntraced(function*(
      options?: IdempotencyStore.At & {
        readonly batchSize?: number | undefined
        readonly olderThanMs?: number | undefined
        readonly scope?: string | undefined
      }
    ) {
      const batchSize = options?.batchSize ?? 500
      let total = 0
      for (;;) {
        const rows = yield* purgeQuery(
          {
            batchSize,
            now: options?.now ?? null,
            olderThanMs: options?.olderThanMs ?? null,
            scope: options?.scope ?? null
          },
          null
        )
        total += rows.length
        if (rows.length < batchSize) break
      }
      if (total > 0) yield* ExecutionMetrics.count("purged", total)
      return total
    }, traced("IdempotencyStore.purge"))

    const journal = Effect.fnUntraced(function*(
      lease: IdempotencyStore.FencedRef,
      entry: IdempotencyStore.At & {
        readonly attempt: number
        readonly outcome: IdempotencyStore.JournalOutcome
        readonly detail: string | null
      }
    ) {
      yield* journalQuery({
        scope: lease.scope,
        key: lease.key,
        fence: lease.fence,
        attempt: entry.attempt,
        outcome: entry.outcome,
        detail: entry.detail,
        now: entry.now ?? null
      }, lease.key)
    }, traced("IdempotencyStore.journal"))

    const journalOf = Effect.fnUntraced(function*(ref: IdempotencyStore.RecordRef) {
      return yield* journalOfQuery({ scope: ref.scope, key: ref.key }, ref.key)
    }, traced("IdempotencyStore.journalOf"))

    const list = Effect.fnUntraced(function*(wanted: IdempotencyStore.ListQuery) {
      const rows = yield* listQuery({
        scope: wanted.scope ?? null,
        keyPrefix: wanted.keyPrefix ?? null,
        status: wanted.status === undefined ? null : wanted.status.join(","),
        tool: wanted.tool ?? null,
        limit: Rules.clampLimit(wanted.limit),
        now: wanted.now ?? null
      }, null)
      const records: Array<IdempotencyStore.StoredRecord> = []
      for (const row of rows) {
        const record = Codecs.toRecord(row)
        if (record === undefined) return yield* unreadableRow("list", row.key)
        records.push(record)
      }
      return records
    }, traced("IdempotencyStore.list"))

    const resolutions = Effect.fnUntraced(function*(ref: IdempotencyStore.RecordRef) {
      return yield* resolutionsQuery({ scope: ref.scope, key: ref.key }, ref.key)
    }, traced("IdempotencyStore.resolutions"))

    const service: IdempotencyStore.Service = {
      claim,
      claimMany,
      read,
      complete,
      fail,
      release,
      heartbeat,
      park,
      parkExpired,
      resolve,
      reap,
      purge,
      journal,
      journalOf,
      list,
      resolutions
    }
    return service
  })
