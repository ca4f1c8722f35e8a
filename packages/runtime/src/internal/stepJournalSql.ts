/**
 * The SQL implementation of `StepJournal`, beside the idempotency store in its schema (its table
 * is migration `4_step_journal` of the store's loader, in `sqlStatements`): one statement per
 * operation rendered once per schema (every value a bound parameter, run through the driver's prepared-statement cache),
 * and the codecs of their parameters and rows. Fences come from the store's sequence
 * (`idem_fence_seq`). The claim is an insert-or-take-over whose `WHERE` is the takeover rule of
 * `stepJournalRules.claimOn`; every later write is fenced (`… AND fence = $4 AND status =
 * 'in_progress'`); time is `coalesce($now, now())`, the database clock unless a test injects one.
 * Outputs are `text` holding the JSON text as written, bounded by a CHECK (8 MiB).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { type StoreOperation, StoreUnavailable } from "../ExecutionError.js"
import type * as StepJournal from "../StepJournal.js"
import { StepLeaseLost } from "../StepJournal.js"
import { traced } from "./spans.js"
import { migrate, queryOn } from "./sqlStore.js"
import { checkClaim, checkHeartbeat, outputText, readOutput } from "./stepJournalRules.js"

/** Qualified names of the journal's objects in one schema. */
const names = (schema: string) => ({
  journal: `"${schema}"."step_journal"`,
  sequence: `"${schema}"."idem_fence_seq"`
})

/** This owner's own live lease (a claim whose response was lost). */
const resumed = `s.status = 'in_progress' AND s.owner = EXCLUDED.owner`

/** A step that no longer holds anything back at `now`: settled, or its lease abandoned; and past retention. */
const doomedAt = (alias: string, now: string) =>
  `((${alias}.status <> 'in_progress' OR ${alias}.lease_expires_at <= ${now}) AND ${alias}.expires_at <= ${now})`

const columns = `s.scope AS "tenant", s.turn, s.step, s.fingerprint, s.status, s.prev_status AS "previous", s.fence,
       s.attempt, s.owner, s.output AS "outputText", s.lease_expires_at AS "leaseExpiresAt",
       s.created_at AS "createdAt", s.updated_at AS "updatedAt", s.recorded_at AS "recordedAt",
       s.expires_at AS "expiresAt",
       ceil(coalesce(greatest(extract(epoch FROM (s.lease_expires_at - t.now)) * 1000, 0), 0))::float8 AS "retryAfterMs",
       coalesce(s.lease_expires_at <= t.now, false) AS "leaseExpired",
       t.now AS "readAt"`

/** The statements for one schema, with their parameters in order. */
const statements = (schema: string) => {
  const n = names(schema)
  return {
    /** `$1 scope, $2 turn, $3 step, $4 fingerprint, $5 owner, $6 lease_ms, $7 retention_ms, $8 now` */
    claim: `INSERT INTO ${n.journal} AS s (scope, turn, step, fingerprint, status, fence, attempt, owner,
  lease_expires_at, created_at, updated_at, expires_at)
SELECT $1, $2, $3, $4, 'in_progress', nextval('${n.sequence}'), 1, $5,
       t.now + $6 * interval '1 millisecond', t.now, t.now, t.now + $7 * interval '1 millisecond'
FROM (SELECT coalesce($8::timestamptz, now()) AS now) AS t
ON CONFLICT (scope, turn, step) DO UPDATE SET
  status           = 'in_progress',
  fence            = EXCLUDED.fence,
  owner            = EXCLUDED.owner,
  lease_expires_at = EXCLUDED.lease_expires_at,
  prev_status      = CASE WHEN ${resumed} THEN s.prev_status ELSE s.status END,
  attempt          = CASE WHEN ${resumed} THEN s.attempt ELSE s.attempt + 1 END,
  updated_at       = EXCLUDED.updated_at,
  expires_at       = greatest(s.expires_at, EXCLUDED.expires_at)
WHERE s.fingerprint = EXCLUDED.fingerprint
  AND (s.status = 'released'
       OR (s.status = 'in_progress'
           AND (s.owner = EXCLUDED.owner OR s.lease_expires_at <= EXCLUDED.updated_at)))
RETURNING fence, attempt, prev_status AS "previous", lease_expires_at AS "leaseExpiresAt"`,

    /** `$1 scope, $2 turn, $3 step, $4 now` */
    read: `SELECT ${columns}
FROM ${n.journal} AS s, (SELECT coalesce($4::timestamptz, now()) AS now) AS t
WHERE s.scope = $1 AND s.turn = $2 AND s.step = $3`,

    /** `$1 scope, $2 turn, $3 now` */
    steps: `SELECT ${columns}
FROM ${n.journal} AS s, (SELECT coalesce($3::timestamptz, now()) AS now) AS t
WHERE s.scope = $1 AND s.turn = $2
ORDER BY s.step`,

    /** Confirmation after a fenced write matched nothing — `$1 scope, $2 turn, $3 step` */
    peek: `SELECT status, fence FROM ${n.journal} WHERE scope = $1 AND turn = $2 AND step = $3`,

    /** `$1, $2, $3, $4 fence, $5 output text, $6 retention_ms, $7 now` */
    record: `UPDATE ${n.journal} AS s
SET status = 'recorded', output = $5, owner = NULL, lease_expires_at = NULL, recorded_at = t.now,
    updated_at = t.now, expires_at = t.now + $6 * interval '1 millisecond'
FROM (SELECT coalesce($7::timestamptz, now()) AS now) AS t
WHERE s.scope = $1 AND s.turn = $2 AND s.step = $3 AND s.fence = $4 AND s.status = 'in_progress'
RETURNING s.fence`,

    /** `$1, $2, $3, $4 fence, $5 now` */
    release: `UPDATE ${n.journal} AS s
SET status = 'released', owner = NULL, lease_expires_at = NULL, updated_at = t.now
FROM (SELECT coalesce($5::timestamptz, now()) AS now) AS t
WHERE s.scope = $1 AND s.turn = $2 AND s.step = $3 AND s.fence = $4 AND s.status = 'in_progress'
RETURNING s.fence`,

    /** `$1, $2, $3, $4 fence, $5 lease_ms, $6 now` */
    heartbeat: `UPDATE ${n.journal} AS s
SET lease_expires_at = t.now + $5 * interval '1 millisecond', updated_at = t.now
FROM (SELECT coalesce($6::timestamptz, now()) AS now) AS t
WHERE s.scope = $1 AND s.turn = $2 AND s.step = $3 AND s.fence = $4 AND s.status = 'in_progress'
RETURNING s.lease_expires_at AS "leaseExpiresAt"`,

    /** Turns whose every step is doomed, `$1` at a time — `$1 batch, $2 now` */
    purge: `WITH t AS (SELECT coalesce($2::timestamptz, now()) AS now),
candidates AS (
  SELECT DISTINCT scope, turn FROM ${n.journal} WHERE expires_at <= (SELECT now FROM t)),
doomed AS (
  SELECT c.scope, c.turn FROM candidates AS c
  WHERE NOT EXISTS (
    SELECT 1 FROM ${n.journal} AS o
    WHERE o.scope = c.scope AND o.turn = c.turn AND NOT ${doomedAt("o", "(SELECT now FROM t)")})
  LIMIT $1)
DELETE FROM ${n.journal} AS s USING doomed AS d
WHERE s.scope = d.scope AND s.turn = d.turn AND ${doomedAt("s", "(SELECT now FROM t)")}
RETURNING s.scope AS "tenant", s.turn`
  }
}

/** An `int8` the driver returns as `bigint` (or, configured otherwise, as a decimal string). */
const Fence = Schema.Union([Schema.BigInt, Schema.BigIntFromString])
/** A `timestamptz` the driver returns as a `Date` (or as an ISO string). */
const Timestamp = Schema.Union([Schema.Date, Schema.DateFromString])
const Now = Schema.NullOr(Schema.Date)
const Status = Schema.Literals(["in_progress", "recorded", "released"])

const Ref = { tenant: Schema.String, turn: Schema.String, step: Schema.Number }
const FencedRequest = Schema.Struct({ ...Ref, fence: Schema.BigInt, now: Now })

const ClaimRequest = Schema.Struct({
  ...Ref,
  fingerprint: Schema.String,
  owner: Schema.String,
  leaseMs: Schema.Number,
  retentionMs: Schema.Number,
  now: Now
})
const ClaimRow = Schema.Struct({
  fence: Fence,
  attempt: Schema.Number,
  previous: Schema.NullOr(Status),
  leaseExpiresAt: Timestamp
})
const StepRow = Schema.Struct({
  tenant: Schema.String,
  turn: Schema.String,
  step: Schema.Number,
  fingerprint: Schema.String,
  status: Status,
  previous: Schema.NullOr(Status),
  fence: Fence,
  attempt: Schema.Number,
  owner: Schema.NullOr(Schema.String),
  outputText: Schema.NullOr(Schema.String),
  leaseExpiresAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  recordedAt: Schema.NullOr(Timestamp),
  expiresAt: Timestamp,
  retryAfterMs: Schema.Number,
  leaseExpired: Schema.Boolean,
  readAt: Timestamp
})

/** @internal */
export const make = (schema: string) =>
  Effect.gen(function*() {
    yield* migrate(schema)
    const sql = yield* SqlClient.SqlClient
    const s = statements(schema)

    const run = queryOn(sql)
    const query = <Req extends Schema.Top, Row extends Schema.Top>(
      operation: StoreOperation,
      statement: string,
      Request: Req,
      Row: Row,
      params: (request: Req["Encoded"]) => ReadonlyArray<unknown>
    ) => run(operation, statement, { Request, Row, params })

    const claimQuery = query(
      "claimStep",
      s.claim,
      ClaimRequest,
      ClaimRow,
      (r) => [r.tenant, r.turn, r.step, r.fingerprint, r.owner, r.leaseMs, r.retentionMs, r.now]
    )
    const readQuery = query(
      "readStep",
      s.read,
      Schema.Struct({ ...Ref, now: Now }),
      StepRow,
      (r) => [r.tenant, r.turn, r.step, r.now]
    )
    const stepsQuery = query(
      "readTurn",
      s.steps,
      Schema.Struct({ tenant: Schema.String, turn: Schema.String, now: Now }),
      StepRow,
      (r) => [r.tenant, r.turn, r.now]
    )
    const peekQuery = (operation: StoreOperation) =>
      query(
        operation,
        s.peek,
        Schema.Struct(Ref),
        Schema.Struct({ status: Status, fence: Fence }),
        (r) => [r.tenant, r.turn, r.step]
      )
    const recordQuery = query(
      "recordStep",
      s.record,
      Schema.Struct({ ...FencedRequest.fields, output: Schema.String, retentionMs: Schema.Number }),
      Schema.Struct({ fence: Fence }),
      (r) => [r.tenant, r.turn, r.step, r.fence, r.output, r.retentionMs, r.now]
    )
    const releaseQuery = query(
      "releaseStep",
      s.release,
      FencedRequest,
      Schema.Struct({ fence: Fence }),
      (r) => [r.tenant, r.turn, r.step, r.fence, r.now]
    )
    const heartbeatQuery = query(
      "heartbeatStep",
      s.heartbeat,
      Schema.Struct({ ...FencedRequest.fields, leaseMs: Schema.Number }),
      Schema.Struct({ leaseExpiresAt: Timestamp }),
      (r) => [r.tenant, r.turn, r.step, r.fence, r.leaseMs, r.now]
    )
    const purgeQuery = query(
      "purgeSteps",
      s.purge,
      Schema.Struct({ batchSize: Schema.Number, now: Now }),
      Schema.Struct({ tenant: Schema.String, turn: Schema.String }),
      (r) => [r.batchSize, r.now]
    )

    const toStored = (
      row: typeof StepRow.Type,
      operation: "readStep" | "readTurn" | "claimStep"
    ): Effect.Effect<StepJournal.StoredStep, StoreUnavailable> => {
      const output = row.outputText === null ? null : readOutput(row.outputText)
      return output === undefined
        ? Effect.fail(
          new StoreUnavailable({ keyHash: null, operation, reason: "UnreadableRow", code: null, retryable: false })
        )
        : Effect.succeed({ ...row, output })
    }

    const lost = (lease: StepJournal.FencedStep, operation: StepJournal.StepLeaseLost["operation"]) =>
      new StepLeaseLost({ turn: lease.turn, step: lease.step, fence: lease.fence.toString(), operation })

    /**
     * A fenced write that matched no row: did an earlier, identical write of ours commit and lose
     * its response? Then the step holds `status` under our fence, and the write is done.
     */
    const fenced = (
      lease: StepJournal.FencedStep,
      operation: "record" | "release",
      status: StepJournal.Status
    ) =>
    (rows: ReadonlyArray<unknown>) =>
      rows.length > 0
        ? Effect.void
        : peekQuery(operation === "record" ? "recordStep" : "releaseStep")(lease).pipe(
          Effect.flatMap((found) =>
            found.length > 0 && found[0]!.status === status && found[0]!.fence === lease.fence
              ? Effect.void
              : Effect.fail(lost(lease, operation))
          )
        )

    const readRow = (ref: StepJournal.StepRef, now: Date | undefined, operation: "readStep" | "claimStep") =>
      readQuery({ tenant: ref.tenant, turn: ref.turn, step: ref.step, now: now ?? null }).pipe(
        Effect.flatMap((rows) => rows.length === 0 ? Effect.succeed(undefined) : toStored(rows[0]!, operation))
      )

    const claim = Effect.fnUntraced(function*(req: StepJournal.ClaimRequest) {
      const invalid = checkClaim(req)
      if (invalid !== undefined) return yield* invalid
      // A claim that loses and then finds no row raced a purge; claiming again settles it.
      for (let round = 0; round < 3; round++) {
        const rows = yield* claimQuery({
          tenant: req.tenant,
          turn: req.turn,
          step: req.step,
          fingerprint: req.fingerprint,
          owner: req.owner,
          leaseMs: req.leaseMs,
          retentionMs: req.retentionMs,
          now: req.now ?? null
        })
        if (rows.length > 0) {
          const row = rows[0]!
          const lease: StepJournal.StepLease = { tenant: req.tenant, turn: req.turn, step: req.step, ...row }
          return { _tag: "Claimed", lease } as const
        }
        const step = yield* readRow(req, req.now, "claimStep")
        if (step !== undefined) return { _tag: "Existing", step } as const
      }
      return yield* new StoreUnavailable({
        keyHash: null,
        operation: "claimStep",
        reason: "ClaimContention",
        code: null,
        retryable: true
      })
    }, traced("StepJournal.claim"))

    const record = Effect.fnUntraced(function*(
      lease: StepJournal.FencedStep,
      options: StepJournal.At & { readonly output: StepJournal.StepOutput; readonly retentionMs: number }
    ) {
      const written = outputText(lease, options.output)
      if (!("text" in written)) return yield* written
      const rows = yield* recordQuery({
        tenant: lease.tenant,
        turn: lease.turn,
        step: lease.step,
        fence: lease.fence,
        output: written.text,
        retentionMs: options.retentionMs,
        now: options.now ?? null
      })
      yield* fenced(lease, "record", "recorded")(rows)
    }, traced("StepJournal.record"))

    const release = Effect.fnUntraced(function*(
      lease: StepJournal.FencedStep,
      options?: StepJournal.At
    ) {
      const rows = yield* releaseQuery({
        tenant: lease.tenant,
        turn: lease.turn,
        step: lease.step,
        fence: lease.fence,
        now: options?.now ?? null
      })
      yield* fenced(lease, "release", "released")(rows)
    }, traced("StepJournal.release"))

    const heartbeat = Effect.fnUntraced(function*(
      lease: StepJournal.FencedStep,
      options: StepJournal.At & { readonly leaseMs: number }
    ) {
      const invalid = checkHeartbeat(lease, options.leaseMs)
      if (invalid !== undefined) return yield* invalid
      const rows = yield* heartbeatQuery({
        tenant: lease.tenant,
        turn: lease.turn,
        step: lease.step,
        fence: lease.fence,
        leaseMs: options.leaseMs,
        now: options.now ?? null
      })
      if (rows.length === 0) return yield* lost(lease, "heartbeat")
      return rows[0]!.leaseExpiresAt
    }, traced("StepJournal.heartbeat"))

    const read = Effect.fnUntraced(function*(ref: StepJournal.StepRef, options?: StepJournal.At) {
      return Option.fromNullishOr(yield* readRow(ref, options?.now, "readStep"))
    }, traced("StepJournal.read"))

    const steps = Effect.fnUntraced(function*(ref: StepJournal.TurnRef, options?: StepJournal.At) {
      const rows = yield* stepsQuery({ tenant: ref.tenant, turn: ref.turn, now: options?.now ?? null })
      return yield* Effect.forEach(rows, (row) => toStored(row, "readTurn"))
    }, traced("StepJournal.steps"))

    const purge = Effect.fnUntraced(function*(
      options?: StepJournal.At & { readonly batchSize?: number | undefined }
    ) {
      const batchSize = options?.batchSize ?? 500
      let total = 0
      for (;;) {
        const rows = yield* purgeQuery({ batchSize, now: options?.now ?? null })
        total += rows.length
        const turns = new Set(rows.map((r) => `${r.tenant}\u0000${r.turn}`))
        if (turns.size < batchSize) break
      }
      return total
    }, traced("StepJournal.purge"))

    const service: StepJournal.Service = { claim, record, release, heartbeat, read, steps, purge }
    return service
  })
