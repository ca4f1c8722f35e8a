/**
 * The SQL implementation of `IdempotencyStore`: statements S1–S10 of `research/idempotency.md`
 * §b.3 with the additions listed in `IdempotencyStore.ts`, in the portable subset that runs on
 * PostgreSQL ≥ 13 and PGlite (no `RETURNING old.*`, no `ON CONFLICT DO SELECT`). Statements are
 * rendered once per schema and run with `sql.unsafe`, so the driver's prepared-statement cache
 * serves them; every value is a bound parameter.
 *
 * @internal
 */
import { Effect, Option, Predicate } from "effect"
import { Migrator, SqlClient, type SqlError } from "effect/sql"
import { LeaseLost, StoreUnavailable } from "../ExecutionError.js"
import * as ExecutionMetrics from "../ExecutionMetrics.js"
import type * as IdempotencyStore from "../IdempotencyStore.js"

const identifier = /^[a-z_][a-z0-9_]{0,62}$/

interface Names {
  readonly record: string
  readonly attempt: string
  readonly sequence: string
  readonly migrations: string
}

const names = (schema: string): Names => ({
  record: `"${schema}"."idem_record"`,
  attempt: `"${schema}"."idem_attempt"`,
  sequence: `"${schema}"."idem_fence_seq"`,
  migrations: `${schema}.toolgate_migrations`
})

const settled = `('succeeded','failed','released')`

/** The predicate "the old row is settled and past retention": the key is free again (b.3). */
const reset = `r.status IN ${settled} AND r.expires_at <= EXCLUDED.updated_at`

/** The resumption of this owner's own claim whose response was lost. */
const resumed = `r.status = 'in_progress' AND r.owner = EXCLUDED.owner`

const statements = (n: Names) => ({
  /** S1 — `$1 scope, $2 key, $3 tool, $4 fingerprint, $5 owner, $6 lease_ms, $7 retention_ms, $8 max_attempts, $9 recovery, $10 now` */
  claim: `INSERT INTO ${n.record} AS r (scope, idem_key, tool, fingerprint, status, fence, attempt, max_attempts,
  recovery, generation, owner, lease_expires_at, created_at, updated_at, expires_at)
SELECT $1, $2, $3, $4, 'in_progress', nextval('${n.sequence}'), 1, $8, $9, 1, $5,
       t.now + $6 * interval '1 millisecond', t.now, t.now, t.now + $7 * interval '1 millisecond'
FROM (SELECT coalesce($10::timestamptz, now()) AS now) AS t
ON CONFLICT (scope, idem_key) DO UPDATE SET
  status           = 'in_progress',
  fence            = EXCLUDED.fence,
  owner            = EXCLUDED.owner,
  lease_expires_at = EXCLUDED.lease_expires_at,
  prev_status      = CASE WHEN ${resumed} AND NOT (${reset}) THEN r.prev_status ELSE r.status END,
  updated_at       = EXCLUDED.updated_at,
  completed_at     = NULL,
  attempt          = CASE WHEN ${reset} THEN 1 WHEN ${resumed} THEN r.attempt ELSE r.attempt + 1 END,
  generation       = CASE WHEN ${reset} THEN r.generation + 1 ELSE r.generation END,
  tool             = EXCLUDED.tool,
  fingerprint      = EXCLUDED.fingerprint,
  max_attempts     = CASE WHEN ${reset} THEN EXCLUDED.max_attempts ELSE r.max_attempts END,
  recovery         = CASE WHEN ${reset} THEN EXCLUDED.recovery ELSE r.recovery END,
  result           = NULL,
  result_bytes     = NULL,
  error            = CASE WHEN ${reset} THEN NULL ELSE r.error END,
  external_ref     = CASE WHEN ${reset} THEN NULL ELSE r.external_ref END,
  created_at       = CASE WHEN ${reset} THEN EXCLUDED.created_at ELSE r.created_at END,
  expires_at       = CASE WHEN ${reset} THEN EXCLUDED.expires_at ELSE greatest(r.expires_at, EXCLUDED.expires_at) END
WHERE (${reset})
   OR (r.fingerprint = EXCLUDED.fingerprint AND ${resumed})
   OR (r.fingerprint = EXCLUDED.fingerprint
       AND r.attempt < r.max_attempts
       AND (r.status = 'released'
            OR (r.status = 'in_progress' AND r.lease_expires_at <= EXCLUDED.updated_at AND r.recovery <> 'manual')
            OR (r.status = 'unknown' AND r.recovery <> 'manual')))
RETURNING fence, attempt, max_attempts, generation, prev_status, recovery, lease_expires_at`,

  /** S2 — `$1 scope, $2 key, $3 now` */
  read: `SELECT r.scope, r.idem_key, r.tool, r.fingerprint, r.status, r.prev_status, r.fence, r.attempt,
       r.max_attempts, r.generation, r.recovery, r.owner, r.result, r.error, r.external_ref,
       r.lease_expires_at, r.expires_at, r.created_at, r.updated_at, r.completed_at,
       coalesce(greatest(extract(epoch FROM (r.lease_expires_at - t.now)) * 1000, 0), 0)::float8 AS retry_after_ms,
       coalesce(r.lease_expires_at <= t.now, false) AS lease_expired,
       r.expires_at <= t.now AS retention_elapsed
FROM ${n.record} AS r, (SELECT coalesce($3::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2`,

  /** Confirmation after a fenced write matched nothing — `$1 scope, $2 key` */
  peek: `SELECT status, fence FROM ${n.record} WHERE scope = $1 AND idem_key = $2`,

  /** S3 — `$1, $2, $3 fence, $4 result jsonb, $5 result_bytes, $6 external_ref, $7 retention_ms, $8 now` */
  complete: `UPDATE ${n.record} AS r
SET status = 'succeeded', result = $4, result_bytes = $5, external_ref = $6, error = NULL,
    lease_expires_at = NULL, owner = NULL, completed_at = t.now, updated_at = t.now,
    expires_at = t.now + $7 * interval '1 millisecond'
FROM (SELECT coalesce($8::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'in_progress'
RETURNING r.fence`,

  /** S4 — `$1, $2, $3 fence, $4 error jsonb, $5 retention_ms, $6 now` */
  fail: `UPDATE ${n.record} AS r
SET status = 'failed', error = $4, result = NULL, result_bytes = NULL, lease_expires_at = NULL, owner = NULL,
    completed_at = t.now, updated_at = t.now, expires_at = t.now + $5 * interval '1 millisecond'
FROM (SELECT coalesce($6::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'in_progress'
RETURNING r.fence`,

  /** S5 — `$1, $2, $3 fence, $4 error jsonb, $5 now` */
  release: `UPDATE ${n.record} AS r
SET status = 'released', error = $4, lease_expires_at = NULL, owner = NULL, updated_at = t.now
FROM (SELECT coalesce($5::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'in_progress'
RETURNING r.fence`,

  /** S6 — `$1, $2, $3 fence, $4 lease_ms, $5 now` */
  heartbeat: `UPDATE ${n.record} AS r
SET lease_expires_at = t.now + $4 * interval '1 millisecond', updated_at = t.now
FROM (SELECT coalesce($5::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'in_progress'
RETURNING r.lease_expires_at`,

  /** The holder parks its own lease — `$1, $2, $3 fence, $4 error jsonb, $5 now` */
  park: `UPDATE ${n.record} AS r
SET status = 'unknown', prev_status = r.status, fence = nextval('${n.sequence}'), error = $4,
    lease_expires_at = NULL, owner = NULL, updated_at = t.now
FROM (SELECT coalesce($5::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'in_progress'
RETURNING r.fence`,

  /** S7 — `$1, $2, $3 fence seen, $4 now` */
  parkExpired: `UPDATE ${n.record} AS r
SET status = 'unknown', prev_status = r.status, fence = nextval('${n.sequence}'),
    lease_expires_at = NULL, owner = NULL, updated_at = t.now
FROM (SELECT coalesce($4::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3
  AND r.status = 'in_progress' AND r.lease_expires_at <= t.now
RETURNING r.fence`,

  /** S8 — `$1 grace_ms, $2 include_reexecutable, $3 batch, $4 now` */
  reap: `WITH t AS (SELECT coalesce($4::timestamptz, now()) AS now),
victims AS (
  SELECT scope, idem_key, fence FROM ${n.record}
  WHERE status = 'in_progress' AND lease_expires_at <= (SELECT now FROM t) - $1 * interval '1 millisecond'
    AND (recovery = 'manual' OR attempt >= max_attempts OR $2::boolean)
  ORDER BY lease_expires_at
  LIMIT $3
  FOR UPDATE SKIP LOCKED)
UPDATE ${n.record} AS r
SET status = 'unknown', prev_status = r.status, fence = nextval('${n.sequence}'),
    lease_expires_at = NULL, owner = NULL, updated_at = (SELECT now FROM t)
FROM victims AS v
WHERE r.scope = v.scope AND r.idem_key = v.idem_key AND r.fence = v.fence
  AND r.status = 'in_progress'
RETURNING r.scope, r.idem_key, r.fence`,

  /** S9 — `$1, $2, $3 fence seen, $4 status, $5 result jsonb, $6 result_bytes, $7 error jsonb, $8 external_ref, $9 retention_ms, $10 now` */
  resolve: `UPDATE ${n.record} AS r
SET status = $4, result = $5, result_bytes = $6, error = $7, external_ref = $8,
    completed_at = CASE WHEN $4 IN ('succeeded','failed') THEN t.now END,
    updated_at = t.now, expires_at = t.now + $9 * interval '1 millisecond'
FROM (SELECT coalesce($10::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'unknown'
  AND $4 IN ('succeeded','failed','released')
RETURNING r.fence`,

  /** S10 — `$1 batch, $2 now` */
  purge: `WITH t AS (SELECT coalesce($2::timestamptz, now()) AS now),
doomed AS (
  SELECT scope, idem_key FROM ${n.record}
  WHERE status IN ${settled} AND expires_at <= (SELECT now FROM t)
  ORDER BY expires_at LIMIT $1
  FOR UPDATE SKIP LOCKED)
DELETE FROM ${n.record} AS r USING doomed AS d
WHERE r.scope = d.scope AND r.idem_key = d.idem_key
  AND r.status IN ${settled} AND r.expires_at <= (SELECT now FROM t)
RETURNING r.idem_key`,

  /** Journal — `$1 fence, $2 scope, $3 key, $4 attempt, $5 outcome, $6 detail jsonb, $7 now` */
  journal: `INSERT INTO ${n.attempt} (fence, scope, idem_key, attempt, outcome, detail, recorded_at)
VALUES ($1, $2, $3, $4, $5, $6, coalesce($7::timestamptz, now()))
ON CONFLICT (fence) DO UPDATE SET outcome = EXCLUDED.outcome, detail = EXCLUDED.detail, recorded_at = EXCLUDED.recorded_at`,

  /** `$1 scope, $2 key` */
  journalOf: `SELECT fence, scope, idem_key, attempt, outcome, detail, recorded_at FROM ${n.attempt}
WHERE scope = $1 AND idem_key = $2 ORDER BY fence`
})

const ddl = (schema: string): ReadonlyArray<string> => {
  const n = names(schema)
  return [
    `CREATE SEQUENCE ${n.sequence} AS bigint`,
    `CREATE TABLE ${n.record} (
  scope            text        NOT NULL,
  idem_key         text        NOT NULL,
  tool             text        NOT NULL,
  fingerprint      text        NOT NULL,
  status           text        NOT NULL CHECK (status IN ('in_progress','succeeded','failed','released','unknown')),
  fence            bigint      NOT NULL,
  attempt          integer     NOT NULL CHECK (attempt >= 1),
  max_attempts     integer     NOT NULL CHECK (max_attempts >= 1),
  recovery         text        NOT NULL CHECK (recovery IN ('reexecute','reconcile','manual')),
  generation       integer     NOT NULL DEFAULT 1,
  owner            text,
  lease_expires_at timestamptz,
  prev_status      text,
  result           jsonb,
  result_bytes     integer     CHECK (result_bytes IS NULL OR result_bytes <= 262144),
  error            jsonb,
  external_ref     text,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  completed_at     timestamptz,
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (scope, idem_key),
  CHECK ((status = 'in_progress') = (lease_expires_at IS NOT NULL)),
  CHECK (status NOT IN ('succeeded','failed') OR completed_at IS NOT NULL)
)`,
    `CREATE INDEX idem_record_lease_idx ON ${n.record} (lease_expires_at) WHERE status = 'in_progress'`,
    `CREATE INDEX idem_record_expiry_idx ON ${n.record} (expires_at) WHERE status IN ${settled}`,
    `CREATE INDEX idem_record_unknown_idx ON ${n.record} (updated_at) WHERE status = 'unknown'`,
    `CREATE TABLE ${n.attempt} (
  fence       bigint      PRIMARY KEY,
  scope       text        NOT NULL,
  idem_key    text        NOT NULL,
  attempt     integer     NOT NULL,
  outcome     text        NOT NULL CHECK (outcome IN ('succeeded','failed','released','lease_lost','unknown')),
  detail      jsonb,
  recorded_at timestamptz NOT NULL
)`,
    `CREATE INDEX idem_attempt_key_idx ON ${n.attempt} (scope, idem_key)`
  ]
}

const checkSchema = (schema: string): Effect.Effect<void> =>
  identifier.test(schema) ? Effect.void : Effect.die(new Error(`invalid schema name ${JSON.stringify(schema)}`))

/** @internal */
export const migrations = (schema: string): Migrator.Loader =>
  Migrator.fromRecord({
    "1_idempotency_records": Effect.gen(function*() {
      yield* checkSchema(schema)
      const sql = yield* SqlClient.SqlClient
      for (const statement of ddl(schema)) yield* sql.unsafe(statement)
    })
  })

const sqlState = (error: SqlError.SqlError): string | null => {
  const cause = error.reason.cause
  return Predicate.hasProperty(cause, "code") && typeof cause.code === "string" ? cause.code : null
}

/** Maps a driver failure to `StoreUnavailable`, keeping the reason tag and SQLSTATE, never values. */
const unavailable = (operation: string, keyHash: string | null) => (error: SqlError.SqlError): StoreUnavailable => {
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

const toBigInt = (value: unknown): bigint => typeof value === "bigint" ? value : BigInt(value as string | number)
const toDate = (value: unknown): Date => value instanceof Date ? value : new Date(value as string)
const toDateOrNull = (value: unknown): Date | null => value === null || value === undefined ? null : toDate(value)
const toJson = (value: unknown): unknown => typeof value === "string" ? JSON.parse(value) : value ?? null

interface ClaimRow {
  readonly fence: unknown
  readonly attempt: number
  readonly max_attempts: number
  readonly generation: number
  readonly prev_status: IdempotencyStore.Status | null
  readonly recovery: IdempotencyStore.Recovery
  readonly lease_expires_at: unknown
}

interface RecordRow {
  readonly scope: string
  readonly idem_key: string
  readonly tool: string
  readonly fingerprint: string
  readonly status: IdempotencyStore.Status
  readonly prev_status: IdempotencyStore.Status | null
  readonly fence: unknown
  readonly attempt: number
  readonly max_attempts: number
  readonly generation: number
  readonly recovery: IdempotencyStore.Recovery
  readonly owner: string | null
  readonly result: unknown
  readonly error: unknown
  readonly external_ref: string | null
  readonly lease_expires_at: unknown
  readonly expires_at: unknown
  readonly created_at: unknown
  readonly updated_at: unknown
  readonly completed_at: unknown
  readonly retry_after_ms: number
  readonly lease_expired: boolean
  readonly retention_elapsed: boolean
}

/** The claim kind from the replaced status (b.3, with `unknown` and resumed claims). */
export const kindOf = (previous: IdempotencyStore.Status | null, attempt: number): IdempotencyStore.ClaimKind =>
  previous === null
    ? "Fresh"
    : previous === "in_progress" || previous === "unknown"
    ? "Takeover"
    : previous === "released" && attempt > 1
    ? "RetryAfterRelease"
    : "FreshAfterRetention"

const toRecord = (row: RecordRow): IdempotencyStore.StoredRecord => ({
  scope: row.scope,
  key: row.idem_key,
  tool: row.tool,
  fingerprint: row.fingerprint,
  status: row.status,
  previous: row.prev_status,
  fence: toBigInt(row.fence),
  attempt: row.attempt,
  maxAttempts: row.max_attempts,
  generation: row.generation,
  recovery: row.recovery,
  owner: row.owner,
  result: toJson(row.result),
  error: toJson(row.error),
  externalRef: row.external_ref,
  leaseExpiresAt: toDateOrNull(row.lease_expires_at),
  expiresAt: toDate(row.expires_at),
  createdAt: toDate(row.created_at),
  updatedAt: toDate(row.updated_at),
  completedAt: toDateOrNull(row.completed_at),
  retryAfterMs: Math.ceil(Number(row.retry_after_ms)),
  leaseExpired: row.lease_expired,
  retentionElapsed: row.retention_elapsed
})

/** @internal */
export const make = (schema: string) =>
  Effect.gen(function*() {
    yield* migrate(schema)
    const sql = yield* SqlClient.SqlClient
    const s = statements(names(schema))

    const readRow = (ref: IdempotencyStore.RecordRef, now: Date | undefined) =>
      sql.unsafe<RecordRow>(s.read, [ref.scope, ref.key, now ?? null]).pipe(
        Effect.map((rows) => rows.length === 0 ? undefined : toRecord(rows[0])),
        Effect.mapError(unavailable("read", ref.key))
      )

    /**
     * A fenced write that matched no row: did an earlier, identical write of ours commit and
     * lose its response? Then the record holds `status` under our fence, and the write is done.
     */
    const confirm = (lease: IdempotencyStore.FencedRef, operation: string, status: IdempotencyStore.Status) =>
      sql.unsafe<{ status: string; fence: unknown }>(s.peek, [lease.scope, lease.key]).pipe(
        Effect.mapError(unavailable(operation, lease.key)),
        Effect.flatMap((rows) =>
          rows.length > 0 && rows[0].status === status && toBigInt(rows[0].fence) === lease.fence
            ? Effect.void
            : Effect.fail(new LeaseLost({ keyHash: lease.key, fence: lease.fence.toString(), operation }))
        )
      )

    const fenced = (
      lease: IdempotencyStore.FencedRef,
      operation: string,
      confirmStatus: IdempotencyStore.Status | undefined,
      statement: string,
      params: ReadonlyArray<unknown>
    ) =>
      sql.unsafe<{ fence: unknown }>(statement, params).pipe(
        Effect.mapError(unavailable(operation, lease.key)),
        Effect.flatMap((rows) =>
          rows.length > 0
            ? Effect.void
            : confirmStatus === undefined
            ? Effect.fail(new LeaseLost({ keyHash: lease.key, fence: lease.fence.toString(), operation }))
            : confirm(lease, operation, confirmStatus)
        )
      )

    const claim = Effect.fn("IdempotencyStore.claim")(function*(req: IdempotencyStore.ClaimRequest) {
      // A claim that loses and then finds no row raced a purge; claiming again settles it.
      for (let round = 0; round < 3; round++) {
        const rows = yield* sql.unsafe<ClaimRow>(s.claim, [
          req.scope,
          req.key,
          req.tool,
          req.fingerprint,
          req.owner,
          req.leaseMs,
          req.retentionMs,
          req.maxAttempts,
          req.recovery,
          req.now ?? null
        ]).pipe(Effect.mapError(unavailable("claim", req.key)))
        if (rows.length > 0) {
          const row = rows[0]
          const lease: IdempotencyStore.Lease = {
            scope: req.scope,
            key: req.key,
            fence: toBigInt(row.fence),
            kind: kindOf(row.prev_status, row.attempt),
            previous: row.prev_status,
            attempt: row.attempt,
            maxAttempts: row.max_attempts,
            generation: row.generation,
            recovery: row.recovery,
            leaseExpiresAt: toDate(row.lease_expires_at)
          }
          return { _tag: "Claimed", lease } as const
        }
        const record = yield* readRow(req, req.now)
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

    const read = Effect.fn("IdempotencyStore.read")(function*(
      ref: IdempotencyStore.RecordRef,
      options?: IdempotencyStore.At
    ) {
      return Option.fromNullishOr(yield* readRow(ref, options?.now))
    })

    const complete = Effect.fn("IdempotencyStore.complete")(function*(
      lease: IdempotencyStore.FencedRef,
      options: IdempotencyStore.At & {
        readonly result: string
        readonly externalRef?: string | null | undefined
        readonly retentionMs: number
      }
    ) {
      yield* fenced(lease, "complete", "succeeded", s.complete, [
        lease.scope,
        lease.key,
        lease.fence,
        options.result,
        Buffer.byteLength(options.result, "utf8"),
        options.externalRef ?? null,
        options.retentionMs,
        options.now ?? null
      ])
    })

    const fail = Effect.fn("IdempotencyStore.fail")(function*(
      lease: IdempotencyStore.FencedRef,
      options: IdempotencyStore.At & { readonly error: string; readonly retentionMs: number }
    ) {
      yield* fenced(lease, "fail", "failed", s.fail, [
        lease.scope,
        lease.key,
        lease.fence,
        options.error,
        options.retentionMs,
        options.now ?? null
      ])
    })

    const release = Effect.fn("IdempotencyStore.release")(function*(
      lease: IdempotencyStore.FencedRef,
      options: IdempotencyStore.At & { readonly error: string | null }
    ) {
      yield* fenced(lease, "release", "released", s.release, [
        lease.scope,
        lease.key,
        lease.fence,
        options.error,
        options.now ?? null
      ])
    })

    const heartbeat = Effect.fn("IdempotencyStore.heartbeat")(function*(
      lease: IdempotencyStore.FencedRef,
      options: IdempotencyStore.At & { readonly leaseMs: number }
    ) {
      const rows = yield* sql.unsafe<{ lease_expires_at: unknown }>(s.heartbeat, [
        lease.scope,
        lease.key,
        lease.fence,
        options.leaseMs,
        options.now ?? null
      ]).pipe(Effect.mapError(unavailable("heartbeat", lease.key)))
      if (rows.length === 0) {
        return yield* new LeaseLost({ keyHash: lease.key, fence: lease.fence.toString(), operation: "heartbeat" })
      }
      return toDate(rows[0].lease_expires_at)
    })

    const park = Effect.fn("IdempotencyStore.park")(function*(
      lease: IdempotencyStore.FencedRef,
      options: IdempotencyStore.At & { readonly error: string | null }
    ) {
      const rows = yield* sql.unsafe<{ fence: unknown }>(s.park, [
        lease.scope,
        lease.key,
        lease.fence,
        options.error,
        options.now ?? null
      ]).pipe(Effect.mapError(unavailable("park", lease.key)))
      if (rows.length === 0) {
        return yield* new LeaseLost({ keyHash: lease.key, fence: lease.fence.toString(), operation: "park" })
      }
      return toBigInt(rows[0].fence)
    })

    const parkExpired = Effect.fn("IdempotencyStore.parkExpired")(function*(
      ref: IdempotencyStore.FencedRef,
      options?: IdempotencyStore.At
    ) {
      const rows = yield* sql.unsafe<{ fence: unknown }>(s.parkExpired, [
        ref.scope,
        ref.key,
        ref.fence,
        options?.now ?? null
      ]).pipe(Effect.mapError(unavailable("parkExpired", ref.key)))
      if (rows.length === 0) return Option.none<bigint>()
      yield* ExecutionMetrics.count("parked")
      return Option.some(toBigInt(rows[0].fence))
    })

    const resolve = Effect.fn("IdempotencyStore.resolve")(function*(
      ref: IdempotencyStore.FencedRef,
      resolution: IdempotencyStore.Resolution,
      options: IdempotencyStore.At & { readonly retentionMs: number }
    ) {
      const result = resolution._tag === "Succeeded" ? resolution.result : null
      const params = [
        ref.scope,
        ref.key,
        ref.fence,
        resolution._tag === "Succeeded" ? "succeeded" : resolution._tag === "Failed" ? "failed" : "released",
        result,
        result === null ? null : Buffer.byteLength(result, "utf8"),
        resolution._tag === "Failed" ? resolution.error : null,
        resolution._tag === "Succeeded" ? resolution.externalRef ?? null : null,
        options.retentionMs,
        options.now ?? null
      ]
      yield* fenced(ref, "resolve", undefined, s.resolve, params)
    })

    const reap = Effect.fn("IdempotencyStore.reap")(function*(
      options?: IdempotencyStore.At & {
        readonly graceMs?: number | undefined
        readonly includeReexecutable?: boolean | undefined
        readonly batchSize?: number | undefined
      }
    ) {
      const rows = yield* sql.unsafe<{ scope: string; idem_key: string; fence: unknown }>(s.reap, [
        options?.graceMs ?? 0,
        options?.includeReexecutable ?? false,
        options?.batchSize ?? 100,
        options?.now ?? null
      ]).pipe(Effect.mapError(unavailable("reap", null)))
      if (rows.length > 0) yield* ExecutionMetrics.count("parked", rows.length)
      return rows.map((row) => ({ scope: row.scope, key: row.idem_key, fence: toBigInt(row.fence) }))
    })

    const purge = Effect.fn("IdempotencyStore.purge")(function*(
      options?: IdempotencyStore.At & { readonly batchSize?: number | undefined }
    ) {
      const batch = options?.batchSize ?? 500
      let total = 0
      for (;;) {
        const rows = yield* sql.unsafe<{ idem_key: string }>(s.purge, [batch, options?.now ?? null]).pipe(
          Effect.mapError(unavailable("purge", null))
        )
        total += rows.length
        if (rows.length < batch) break
      }
      if (total > 0) yield* ExecutionMetrics.count("purged", total)
      return total
    })

    const journal = Effect.fn("IdempotencyStore.journal")(function*(
      lease: IdempotencyStore.FencedRef,
      entry: IdempotencyStore.At & {
        readonly attempt: number
        readonly outcome: IdempotencyStore.JournalOutcome
        readonly detail: string | null
      }
    ) {
      yield* sql.unsafe(s.journal, [
        lease.fence,
        lease.scope,
        lease.key,
        entry.attempt,
        entry.outcome,
        entry.detail,
        entry.now ?? null
      ]).pipe(Effect.mapError(unavailable("journal", lease.key)))
    })

    const journalOf = Effect.fn("IdempotencyStore.journalOf")(function*(ref: IdempotencyStore.RecordRef) {
      const rows = yield* sql.unsafe<{
        fence: unknown
        scope: string
        idem_key: string
        attempt: number
        outcome: IdempotencyStore.JournalOutcome
        detail: unknown
        recorded_at: unknown
      }>(s.journalOf, [ref.scope, ref.key]).pipe(Effect.mapError(unavailable("journalOf", ref.key)))
      return rows.map((row): IdempotencyStore.JournalEntry => ({
        scope: row.scope,
        key: row.idem_key,
        fence: toBigInt(row.fence),
        attempt: row.attempt,
        outcome: row.outcome,
        detail: toJson(row.detail),
        at: toDate(row.recorded_at)
      }))
    })

    const service: IdempotencyStore.Service = {
      claim,
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
      journalOf
    }
    return service
  })

/**
 * The raw claim and complete statements for `schema`, with their parameter order, for the
 * benchmark's floor (the same statements through the same client, without the service).
 *
 * @internal
 */
export const rawStatements = (schema: string): { readonly claim: string; readonly complete: string } => {
  const s = statements(names(schema))
  return { claim: s.claim, complete: s.complete }
}
