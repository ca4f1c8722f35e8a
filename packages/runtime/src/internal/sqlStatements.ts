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
import * as Effect from "effect/Effect"
import { Migrator, SqlClient } from "effect/sql"
import type * as IdempotencyStore from "../IdempotencyStore.js"
import * as Rules from "./storeRules.js"

const identifier = /^[a-z_][a-z0-9_]{0,62}$/

/** Qualified names of the store's objects in one schema. @internal */
export interface Names {
  readonly record: string
  readonly attempt: string
  readonly resolution: string
  readonly sequence: string
  readonly migrations: string
  readonly stepJournal: string
  readonly outbox: string
  /** The function that completes a batch of leases (migration 6). */
  readonly completeMany: string
  /** The `LISTEN`/`NOTIFY` channel a write of follow-ups notifies (an identifier, unquoted). */
  readonly channel: string
}

/** @internal */
export const names = (schema: string): Names => ({
  record: `"${schema}"."idem_record"`,
  attempt: `"${schema}"."idem_attempt"`,
  resolution: `"${schema}"."idem_resolution"`,
  sequence: `"${schema}"."idem_fence_seq"`,
  migrations: `${schema}.toolgate_migrations`,
  stepJournal: `"${schema}"."step_journal"`,
  outbox: `"${schema}"."outbox_message"`,
  completeMany: `"${schema}"."idem_complete_many"`,
  channel: `toolgate_outbox_${schema}`.slice(0, 63)
})

/** The columns of a read record, aliased to `StoredRecord`'s fields; `t.now` is the reading's clock. */
const recordColumns =
  `r.scope, r.idem_key AS "key", r.tool, r.fingerprint, r.status, r.prev_status AS "previous", r.fence,
       r.attempt, r.max_attempts AS "maxAttempts", r.generation, r.recovery, r.owner, r.arguments AS "argumentsText",
       r.result AS "resultText", r.error, r.external_ref AS "externalRef", r.lease_expires_at AS "leaseExpiresAt",
       r.expires_at AS "expiresAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
       r.completed_at AS "completedAt",
       ceil(coalesce(greatest(extract(epoch FROM (r.lease_expires_at - t.now)) * 1000, 0), 0))::float8 AS "retryAfterMs",
       coalesce(r.lease_expires_at <= t.now, false) AS "leaseExpired",
       r.expires_at <= t.now AS "retentionElapsed",
       t.now AS "readAt"`

/** The assignments of a resolution (`$4` status, `$5` result, `$6` its bytes, `$7` error, `$8` external_ref, `$9` retention). */
const resolution = `status = $4, result = $5, result_bytes = $6, error = $7, external_ref = $8,
    completed_at = CASE WHEN $4 IN ('succeeded','failed') THEN t.now END,
    updated_at = t.now, expires_at = t.now + $9 * interval '1 millisecond'`

const settled = `('succeeded','failed','released')`

/** The predicate "the old row is settled and past retention": the key is free again. */
const reset = `r.status IN ${settled} AND r.expires_at <= EXCLUDED.updated_at`

/** The resumption of this owner's own claim whose response was lost. */
const resumed = `r.status = 'in_progress' AND r.owner = EXCLUDED.owner`

/** The columns a follow-up is given as, one JSON object each (`jsonb_to_recordset`). */
const messageColumns =
  `ordinal integer, delivery_key text, kind text, destination text, payload text, delay_ms float8, ordering_key text`

/**
 * The tail of a write of follow-ups: CTE `written` inserts the messages `messages` (a JSON array)
 * once per row of CTE `source` (the fenced write's one returned row, so a write fenced off inserts
 * nothing), at `now`; the statement returns the fence of CTE `answer`, and notifies the outbox's
 * channel (at commit) when a message was written.
 */
const writeFollowUps = (n: Names, source: string, answer: string, messages: string, now: string) =>
  `written AS (
  INSERT INTO ${n.outbox} AS o (delivery_key, scope, idem_key, fence, ordinal, kind, destination, payload, ordering_key,
    status, attempts, available_at, created_at, updated_at)
  SELECT m.delivery_key, $1, $2, d.fence, m.ordinal, m.kind, m.destination, m.payload, m.ordering_key,
    'pending', 0, ${now} + m.delay_ms * interval '1 millisecond', ${now}, ${now}
  FROM ${source} AS d, jsonb_to_recordset(${messages}::jsonb) AS m(${messageColumns})
  ON CONFLICT (delivery_key) DO NOTHING
  RETURNING o.id)
SELECT d.fence,
  (SELECT count(pg_notify('${n.channel}', '')) FROM (SELECT 1 FROM written LIMIT 1) AS w)::int AS notified
FROM ${answer} AS d`

/** The columns of a read outbox message (`OutboxMessage`'s fields); `t.now` the reading's clock. */
const messageRead = `o.id, o.delivery_key AS "deliveryKey", o.scope, o.idem_key AS "key", o.fence, o.ordinal, o.kind,
       o.destination, o.payload, o.ordering_key AS "orderingKey", o.status, o.attempts, o.lease_fence AS "leaseFence",
       o.lease_owner AS "leaseOwner", o.lease_expires_at AS "leaseExpiresAt", o.available_at AS "availableAt",
       o.last_error AS "lastError", o.created_at AS "createdAt", o.updated_at AS "updatedAt",
       o.delivered_at AS "deliveredAt"`

/** The columns a claim writes. */
const claimColumns = `scope, idem_key, tool, fingerprint, status, fence, attempt, max_attempts,
  recovery, generation, owner, lease_expires_at, created_at, updated_at, expires_at, arguments`

/** One claim of a batch, as a JSON object (`jsonb_to_recordset`). */
const claimRequestColumns = `scope text, key text, tool text, fingerprint text, owner text, lease_ms float8,
  retention_ms float8, max_attempts integer, recovery text, arguments text`

/** The takeover rule of a claim (`storeRules.claimOn`): what a claim of an existing record does, and when. */
const claimConflict = `ON CONFLICT (scope, idem_key) DO UPDATE SET
  status           = 'in_progress',
  arguments        = EXCLUDED.arguments,
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
            OR (r.status = 'unknown' AND r.recovery <> 'manual')))`

/** What a won claim returns (a `Lease` but its identity and kind). */
const claimReturning = `fence, attempt, max_attempts AS "maxAttempts", generation, prev_status AS "previous", recovery,
  lease_expires_at AS "leaseExpiresAt"`

/** The statements for one schema, with their parameters in order. @internal */
export const statements = (n: Names) => ({
  /** Claim — `$1 scope, $2 key, $3 tool, $4 fingerprint, $5 owner, $6 lease_ms, $7 retention_ms, $8 max_attempts, $9 recovery, $10 now, $11 arguments` */
  claim: `INSERT INTO ${n.record} AS r (${claimColumns})
SELECT $1, $2, $3, $4, 'in_progress', nextval('${n.sequence}'), 1, $8, $9, 1, $5,
       t.now + $6 * interval '1 millisecond', t.now, t.now, t.now + $7 * interval '1 millisecond', $11
FROM (SELECT coalesce($10::timestamptz, now()) AS now) AS t
${claimConflict}
RETURNING ${claimReturning}`,

  /**
   * The claims of several keys in one statement (each row decided as {@link claim} decides it) —
   * `$1 claims` (a JSON array of objects with the fields of `claimRequestColumns`, no two of one
   * record), `$2 now`. Rows are inserted in (scope, key) order, so concurrent batches of overlapping
   * keys take their row locks in one order. Returns a row (with its scope and key) per won claim.
   */
  claimMany: `INSERT INTO ${n.record} AS r (${claimColumns})
SELECT c.scope, c.key, c.tool, c.fingerprint, 'in_progress', nextval('${n.sequence}'), 1, c.max_attempts, c.recovery,
       1, c.owner, t.now + c.lease_ms * interval '1 millisecond', t.now, t.now,
       t.now + c.retention_ms * interval '1 millisecond', c.arguments
FROM (SELECT coalesce($2::timestamptz, now()) AS now) AS t,
     jsonb_to_recordset($1::jsonb) AS c(${claimRequestColumns})
ORDER BY c.scope, c.key
${claimConflict}
RETURNING r.scope, r.idem_key AS "key", ${claimReturning}`,

  /** Read several records — `$1 refs` (a JSON array of `{ scope, key }`), `$2 now` */
  readMany: `SELECT ${recordColumns}
FROM ${n.record} AS r, (SELECT coalesce($2::timestamptz, now()) AS now) AS t,
     jsonb_to_recordset($1::jsonb) AS k(scope text, key text)
WHERE r.scope = k.scope AND r.idem_key = k.key`,

  /** Read — `$1 scope, $2 key, $3 now` */
  read: `SELECT ${recordColumns}
FROM ${n.record} AS r, (SELECT coalesce($3::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2`,

  /** List, newest change first — `$1 scope, $2 key prefix, $3 statuses (comma-separated), $4 tool, $5 limit, $6 now` */
  list: `SELECT ${recordColumns}
FROM ${n.record} AS r, (SELECT coalesce($6::timestamptz, now()) AS now) AS t
WHERE ($1::text IS NULL OR r.scope = $1)
  AND ($2::text IS NULL OR starts_with(r.idem_key, $2))
  AND ($3::text IS NULL OR r.status = ANY (string_to_array($3, ',')))
  AND ($4::text IS NULL OR r.tool = $4)
ORDER BY r.updated_at DESC, r.idem_key DESC
LIMIT $5`,

  /** Confirmation after a fenced write matched nothing — `$1 scope, $2 key` */
  peek: `SELECT status, fence FROM ${n.record} WHERE scope = $1 AND idem_key = $2`,

  /** Complete — `$1, $2, $3 fence, $4 result text, $5 result_bytes, $6 external_ref, $7 retention_ms, $8 now` */
  complete: `UPDATE ${n.record} AS r
SET status = 'succeeded', result = $4, result_bytes = $5, external_ref = $6, error = NULL,
    lease_expires_at = NULL, owner = NULL, completed_at = t.now, updated_at = t.now,
    expires_at = t.now + $7 * interval '1 millisecond'
FROM (SELECT coalesce($8::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'in_progress'
RETURNING r.fence`,

  /**
   * Complete several leases in one statement — `$1` a JSON array of `{ scope, key, fence, result,
   * result_bytes, external_ref, retention_ms }` (`completeManyJson`), each completed as
   * {@link complete} completes it, at one clock reading. Returns the scope, key and fence of each
   * lease it completed (migration 6's function: one `UPDATE` by primary key per lease, in key order).
   */
  completeMany: `SELECT scope, idem_key AS "key", fence FROM ${n.completeMany}($1::jsonb)`,

  /** Fail — `$1, $2, $3 fence, $4 error text, $5 retention_ms, $6 now` */
  fail: `UPDATE ${n.record} AS r
SET status = 'failed', error = $4, result = NULL, result_bytes = NULL, lease_expires_at = NULL, owner = NULL,
    completed_at = t.now, updated_at = t.now, expires_at = t.now + $5 * interval '1 millisecond'
FROM (SELECT coalesce($6::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'in_progress'
RETURNING r.fence`,

  /** Release — `$1, $2, $3 fence, $4 error text, $5 now` */
  release: `UPDATE ${n.record} AS r
SET status = 'released', error = $4, lease_expires_at = NULL, owner = NULL, updated_at = t.now
FROM (SELECT coalesce($5::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'in_progress'
RETURNING r.fence`,

  /** Heartbeat — `$1, $2, $3 fence, $4 lease_ms, $5 now` */
  heartbeat: `UPDATE ${n.record} AS r
SET lease_expires_at = t.now + $4 * interval '1 millisecond', updated_at = t.now
FROM (SELECT coalesce($5::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'in_progress'
RETURNING r.lease_expires_at AS "leaseExpiresAt"`,

  /** The holder parks its own lease — `$1, $2, $3 fence, $4 error text, $5 now` */
  park: `UPDATE ${n.record} AS r
SET status = 'unknown', prev_status = r.status, fence = nextval('${n.sequence}'), error = $4,
    lease_expires_at = NULL, owner = NULL, updated_at = t.now
FROM (SELECT coalesce($5::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'in_progress'
RETURNING r.fence`,

  /** Park an expired lease — `$1, $2, $3 fence seen, $4 now` */
  parkExpired: `UPDATE ${n.record} AS r
SET status = 'unknown', prev_status = r.status, fence = nextval('${n.sequence}'),
    lease_expires_at = NULL, owner = NULL, updated_at = t.now
FROM (SELECT coalesce($4::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3
  AND r.status = 'in_progress' AND r.lease_expires_at <= t.now
RETURNING r.fence`,

  /** Reap — `$1 grace_ms, $2 include_reexecutable, $3 batch, $4 now` */
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
RETURNING r.scope, r.idem_key AS "key", r.fence`,

  /** Resolve — `$1, $2, $3 fence seen, $4 status, $5 result text, $6 result_bytes, $7 error text, $8 external_ref, $9 retention_ms, $10 now` */
  resolve: `UPDATE ${n.record} AS r
SET ${resolution}
FROM (SELECT coalesce($10::timestamptz, now()) AS now) AS t
WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'unknown'
  AND $4 IN ('succeeded','failed','released')
RETURNING r.fence`,

  /**
   * Resolve and audit, one statement — the parameters of `resolve`, then `$11 by, $12 reason`.
   * The row is locked first, so the audit keeps the error it held while `unknown`.
   */
  resolveAudited: `WITH t AS (SELECT coalesce($10::timestamptz, now()) AS now),
parked AS (
  SELECT error FROM ${n.record}
  WHERE scope = $1 AND idem_key = $2 AND fence = $3 AND status = 'unknown'
  FOR UPDATE),
resolved AS (
  UPDATE ${n.record} AS r
  SET ${resolution}
  FROM t, parked
  WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'unknown'
    AND $4 IN ('succeeded','failed','released')
  RETURNING r.fence, r.tool)
INSERT INTO ${n.resolution} (scope, idem_key, fence, tool, status, result, error, parked_error, resolved_by, reason,
  resolved_at)
SELECT $1, $2, resolved.fence, resolved.tool, $4, $5, $7, parked.error, $11, $12, t.now
FROM resolved, parked, t
RETURNING fence`,

  /** `$1 scope, $2 key` */
  resolutions: `SELECT scope, idem_key AS "key", fence, tool, status, result AS "resultText", error AS "errorText",
       parked_error AS "parkedError", resolved_by AS "by", reason, resolved_at AS "at"
FROM ${n.resolution} WHERE scope = $1 AND idem_key = $2 ORDER BY resolved_at, fence`,

  /** Purge — `$1 batch, $2 now, $3 older_than_ms (null: past retention), $4 scope (null: every one)` */
  purge: `WITH t AS (SELECT coalesce($2::timestamptz, now()) AS now),
doomed AS (
  SELECT scope, idem_key FROM ${n.record}
  WHERE status IN ${settled} AND ($4::text IS NULL OR scope = $4)
    AND CASE WHEN $3::float8 IS NULL THEN expires_at <= (SELECT now FROM t)
             ELSE updated_at <= (SELECT now FROM t) - $3::float8 * interval '1 millisecond' END
  ORDER BY expires_at LIMIT $1
  FOR UPDATE SKIP LOCKED)
DELETE FROM ${n.record} AS r USING doomed AS d
WHERE r.scope = d.scope AND r.idem_key = d.idem_key AND r.status IN ${settled}
RETURNING r.idem_key AS "key"`,

  /** Journal — `$1 fence, $2 scope, $3 key, $4 attempt, $5 outcome, $6 detail text, $7 now` */
  journal: `INSERT INTO ${n.attempt} (fence, scope, idem_key, attempt, outcome, detail, recorded_at)
VALUES ($1, $2, $3, $4, $5, $6, coalesce($7::timestamptz, now()))
ON CONFLICT (fence) DO UPDATE SET outcome = EXCLUDED.outcome, detail = EXCLUDED.detail, recorded_at = EXCLUDED.recorded_at`,

  /** `$1 scope, $2 key` */
  journalOf: `SELECT fence, scope, idem_key AS "key", attempt, outcome, detail, recorded_at AS "at" FROM ${n.attempt}
WHERE scope = $1 AND idem_key = $2 ORDER BY fence`,

  /** Complete and write the call's follow-ups, one statement — the parameters of `complete`, then `$9 messages (JSON)` */
  completeWithFollowUps: `WITH t AS (SELECT coalesce($8::timestamptz, now()) AS now),
done AS (
  UPDATE ${n.record} AS r
  SET status = 'succeeded', result = $4, result_bytes = $5, external_ref = $6, error = NULL,
      lease_expires_at = NULL, owner = NULL, completed_at = t.now, updated_at = t.now,
      expires_at = t.now + $7 * interval '1 millisecond'
  FROM t
  WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'in_progress'
  RETURNING r.fence),
${writeFollowUps(n, "done", "done", "$9", "(SELECT now FROM t)")}`,

  /** Resolve and write follow-ups (written only when `$4` is `succeeded`) — the parameters of `resolve`, then `$11 messages` */
  resolveWithFollowUps: `WITH t AS (SELECT coalesce($10::timestamptz, now()) AS now),
done AS (
  UPDATE ${n.record} AS r
  SET ${resolution}
  FROM t
  WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'unknown'
    AND $4 IN ('succeeded','failed','released')
  RETURNING r.fence),
applied AS (SELECT fence FROM done WHERE $4 = 'succeeded'),
${writeFollowUps(n, "applied", "done", "$11", "(SELECT now FROM t)")}`,

  /** Resolve, audit and write follow-ups — the parameters of `resolveAudited`, then `$13 messages` */
  resolveAuditedWithFollowUps: `WITH t AS (SELECT coalesce($10::timestamptz, now()) AS now),
parked AS (
  SELECT error FROM ${n.record}
  WHERE scope = $1 AND idem_key = $2 AND fence = $3 AND status = 'unknown'
  FOR UPDATE),
resolved AS (
  UPDATE ${n.record} AS r
  SET ${resolution}
  FROM t, parked
  WHERE r.scope = $1 AND r.idem_key = $2 AND r.fence = $3 AND r.status = 'unknown'
    AND $4 IN ('succeeded','failed','released')
  RETURNING r.fence, r.tool),
done AS (
  INSERT INTO ${n.resolution} (scope, idem_key, fence, tool, status, result, error, parked_error, resolved_by, reason,
    resolved_at)
  SELECT $1, $2, resolved.fence, resolved.tool, $4, $5, $7, parked.error, $11, $12, t.now
  FROM resolved, parked, t
  RETURNING fence),
applied AS (SELECT fence FROM done WHERE $4 = 'succeeded'),
${writeFollowUps(n, "applied", "done", "$13", "(SELECT now FROM t)")}`,

  /**
   * Lease due messages — `$1 owner, $2 lease_ms, $3 limit, $4 now`. Due: `pending` and available,
   * or `delivering` with its lease expired (a dispatcher died mid-delivery); and, with an ordering
   * key, no earlier message of that key is still `pending` or `delivering`. Rows another dispatcher
   * is leasing now are skipped (`SKIP LOCKED`); the update re-checks the state it leases from.
   */
  claimMessages: `WITH t AS (SELECT coalesce($4::timestamptz, now()) AS now),
due AS (
  SELECT o.id FROM ${n.outbox} AS o, t
  WHERE ((o.status = 'pending' AND o.available_at <= t.now)
         OR (o.status = 'delivering' AND o.lease_expires_at <= t.now))
    AND (o.ordering_key IS NULL OR NOT EXISTS (
      SELECT 1 FROM ${n.outbox} AS e
      WHERE e.ordering_key = o.ordering_key AND e.id < o.id AND e.status IN ('pending','delivering')))
  ORDER BY o.id
  LIMIT $3
  FOR UPDATE OF o SKIP LOCKED)
UPDATE ${n.outbox} AS o
SET status = 'delivering', attempts = o.attempts + 1, lease_fence = nextval('${n.sequence}'), lease_owner = $1,
    lease_expires_at = t.now + $2 * interval '1 millisecond', updated_at = t.now
FROM due, t
WHERE o.id = due.id
  AND ((o.status = 'pending' AND o.available_at <= t.now)
       OR (o.status = 'delivering' AND o.lease_expires_at <= t.now))
RETURNING ${messageRead}`,

  /**
   * Settle a leased message, fenced by its lease — `$1 id, $2 lease_fence, $3 status (delivered, pending, dead),
   * $4 last error, $5 retry delay ms, $6 now`. Returns the ms from its writing to now (delivery latency).
   */
  settleMessage: `UPDATE ${n.outbox} AS o
SET status = $3, last_error = CASE WHEN $3 = 'delivered' THEN o.last_error ELSE $4 END,
    available_at = CASE WHEN $3 = 'pending' THEN t.now + $5::float8 * interval '1 millisecond' ELSE o.available_at END,
    delivered_at = CASE WHEN $3 = 'delivered' THEN t.now END,
    lease_owner = NULL, lease_expires_at = NULL, updated_at = t.now
FROM (SELECT coalesce($6::timestamptz, now()) AS now) AS t
WHERE o.id = $1 AND o.lease_fence = $2 AND o.status = 'delivering' AND $3 IN ('delivered','pending','dead')
RETURNING greatest(extract(epoch FROM (t.now - o.created_at)) * 1000, 0)::float8 AS "latencyMs"`,

  /** Messages by state: `status, count` */
  countMessages: `SELECT status, count(*)::int AS count FROM ${n.outbox} GROUP BY status`,

  /** The messages of the outbox, oldest first — `$1 scope, $2 key, $3 statuses (comma-separated), $4 limit` */
  listMessages: `SELECT ${messageRead}
FROM ${n.outbox} AS o
WHERE ($1::text IS NULL OR o.scope = $1)
  AND ($2::text IS NULL OR o.idem_key = $2)
  AND ($3::text IS NULL OR o.status = ANY (string_to_array($3, ',')))
ORDER BY o.id
LIMIT $4`
})

/** Migration 1: the tables (results, errors and details as `jsonb`; migration 2 makes them `text`). */
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

/**
 * Migration 2: results, errors and journal details become `text` holding the JSON text as written
 * (a replay returns the execution's bytes); errors and details are bounded like results. Existing
 * values keep their (jsonb-normalised) JSON; the size CHECKs are `NOT VALID`, so rows written
 * before (an error of 1 MiB was possible) stay readable while every new write is checked.
 */
const storedText = (schema: string): ReadonlyArray<string> => {
  const n = names(schema)
  const bounded = (column: string) => `CHECK (${column} IS NULL OR octet_length(${column}) <= ${Rules.maxStoredBytes})`
  return [
    `ALTER TABLE ${n.record} ALTER COLUMN result TYPE text USING result::text,
  ALTER COLUMN error TYPE text USING error::text`,
    `ALTER TABLE ${n.record} ADD CONSTRAINT idem_record_result_text_bytes ${bounded("result")} NOT VALID`,
    `ALTER TABLE ${n.record} ADD CONSTRAINT idem_record_error_bytes ${bounded("error")} NOT VALID`,
    `ALTER TABLE ${n.attempt} ALTER COLUMN detail TYPE text USING detail::text`,
    `ALTER TABLE ${n.attempt} ADD CONSTRAINT idem_attempt_detail_bytes ${bounded("detail")} NOT VALID`
  ]
}

/**
 * Migration 3: the audit of operators' resolutions (`idem_resolution`: who, when, why, what was
 * written, the error the record held while `unknown`; kept when records are purged), and the
 * records' `arguments` (canonical JSON text of the call that last claimed it, bounded like
 * results; `NULL` on rows written before).
 */
const resolutionAudit = (schema: string): ReadonlyArray<string> => {
  const n = names(schema)
  const bounded = (column: string, bytes: number) => `CHECK (${column} IS NULL OR octet_length(${column}) <= ${bytes})`
  return [
    `ALTER TABLE ${n.record} ADD COLUMN arguments text
  CONSTRAINT idem_record_arguments_bytes ${bounded("arguments", Rules.maxStoredBytes)}`,
    `CREATE TABLE ${n.resolution} (
  scope        text        NOT NULL,
  idem_key     text        NOT NULL,
  fence        bigint      NOT NULL,
  tool         text        NOT NULL,
  status       text        NOT NULL CHECK (status IN ('succeeded','failed','released')),
  result       text        ${bounded("result", Rules.maxStoredBytes)},
  error        text        ${bounded("error", Rules.maxStoredBytes)},
  parked_error text        ${bounded("parked_error", Rules.maxStoredBytes)},
  resolved_by  text        NOT NULL CHECK (length(resolved_by) BETWEEN 1 AND ${Rules.maxAuditBy}),
  reason       text        CHECK (reason IS NULL OR length(reason) <= ${Rules.maxAuditReason}),
  resolved_at  timestamptz NOT NULL,
  PRIMARY KEY (scope, idem_key, fence)
)`
  ]
}

/**
 * Migration 4: the step journal's table (`StepJournal`), one row per (tenant, turn, step), its
 * fence from the store's sequence, its output the JSON text as written, bounded by a CHECK.
 */
const stepJournal = (schema: string): ReadonlyArray<string> => {
  const n = names(schema)
  return [
    `CREATE TABLE ${n.stepJournal} (
  scope            text        NOT NULL,
  turn             text        NOT NULL,
  step             integer     NOT NULL CHECK (step >= 1),
  fingerprint      text        NOT NULL,
  status           text        NOT NULL CHECK (status IN ('in_progress','recorded','released')),
  prev_status      text,
  fence            bigint      NOT NULL,
  attempt          integer     NOT NULL CHECK (attempt >= 1),
  owner            text,
  lease_expires_at timestamptz,
  output           text        CHECK (output IS NULL OR octet_length(output) <= ${Rules.maxStepOutputBytes}),
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  recorded_at      timestamptz,
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (scope, turn, step),
  CHECK ((status = 'in_progress') = (lease_expires_at IS NOT NULL)),
  CHECK ((status = 'recorded') = (output IS NOT NULL)),
  CHECK ((status = 'recorded') = (recorded_at IS NOT NULL))
)`,
    `CREATE INDEX step_journal_expiry_idx ON ${n.stepJournal} (expires_at)`
  ]
}

/**
 * Migration 5: the transactional outbox (`outbox_message`): the follow-ups of completed calls,
 * one row per message, written in the statement that completes (or resolves as applied) the call
 * and keyed by its delivery key (`<downstream key>:<ordinal>`); the dispatcher's lease (its own
 * fence, from the store's sequence), attempts, next attempt time and last error; the payload the
 * JSON text as written, bounded like results.
 */
const outbox = (schema: string): ReadonlyArray<string> => {
  const n = names(schema)
  return [
    `CREATE TABLE ${n.outbox} (
  id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_key     text        NOT NULL UNIQUE,
  scope            text        NOT NULL,
  idem_key         text        NOT NULL,
  fence            bigint      NOT NULL,
  ordinal          integer     NOT NULL CHECK (ordinal >= 0),
  kind             text        NOT NULL CHECK (kind IN ('webhook','named')),
  destination      text        NOT NULL,
  payload          text        NOT NULL CHECK (octet_length(payload) <= ${Rules.maxStoredBytes}),
  ordering_key     text,
  status           text        NOT NULL CHECK (status IN ('pending','delivering','delivered','dead')),
  attempts         integer     NOT NULL CHECK (attempts >= 0),
  lease_fence      bigint,
  lease_owner      text,
  lease_expires_at timestamptz,
  available_at     timestamptz NOT NULL,
  last_error       text        CHECK (last_error IS NULL OR octet_length(last_error) <= ${Rules.maxStoredBytes}),
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  delivered_at     timestamptz,
  CHECK ((status = 'delivering') = (lease_expires_at IS NOT NULL)),
  CHECK ((status = 'delivered') = (delivered_at IS NOT NULL))
)`,
    `CREATE INDEX outbox_message_due_idx ON ${n.outbox} (available_at) WHERE status = 'pending'`,
    `CREATE INDEX outbox_message_lease_idx ON ${n.outbox} (lease_expires_at) WHERE status = 'delivering'`,
    `CREATE INDEX outbox_message_order_idx ON ${n.outbox} (ordering_key, id) WHERE status IN ('pending','delivering')`,
    `CREATE INDEX outbox_message_record_idx ON ${n.outbox} (scope, idem_key)`
  ]
}

/**
 * Migration 6: the function behind `completeMany`. It runs the `complete` statement's update once
 * per lease of the batch, by primary key, in key order (batch order among repeats), so each
 * completes exactly as `complete` alone would, one after another, and batches that share leases
 * take their row locks in one order. A single `UPDATE … FROM jsonb_to_recordset(…)` was not used:
 * its plan is the planner's choice, and on a table it takes for small that is a hash join over every
 * in-progress record (the lease index); the function's update is planned as `complete` is, one
 * record by its key.
 */
const completeMany = (schema: string): ReadonlyArray<string> => {
  const n = names(schema)
  return [
    `CREATE FUNCTION ${n.completeMany}(batch jsonb)
RETURNS TABLE (scope text, idem_key text, fence bigint)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  c record;
  clock timestamptz := now();
BEGIN
  FOR c IN
    SELECT * FROM ROWS FROM (
        jsonb_to_recordset(batch) AS (scope text, key text, fence bigint, result text, result_bytes integer,
                                      external_ref text, retention_ms double precision)
      ) WITH ORDINALITY AS x(scope, key, fence, result, result_bytes, external_ref, retention_ms, ord)
    ORDER BY x.scope, x.key, x.ord
  LOOP
    RETURN QUERY UPDATE ${n.record} AS r
    SET status = 'succeeded', result = c.result, result_bytes = c.result_bytes, external_ref = c.external_ref,
        error = NULL, lease_expires_at = NULL, owner = NULL, completed_at = clock, updated_at = clock,
        expires_at = clock + c.retention_ms * interval '1 millisecond'
    WHERE r.scope = c.scope AND r.idem_key = c.key AND r.fence = c.fence AND r.status = 'in_progress'
    RETURNING r.scope, r.idem_key, r.fence;
  END LOOP;
END
$fn$`
  ]
}

/** Dies on a schema name that is not a plain identifier (it is interpolated into SQL). @internal */
export const checkSchema = (schema: string): Effect.Effect<void> =>
  identifier.test(schema) ? Effect.void : Effect.die(new Error(`invalid schema name ${JSON.stringify(schema)}`))

/** @internal */
export const migrations = (schema: string): Migrator.Loader =>
  Migrator.fromRecord({
    "1_idempotency_records": Effect.gen(function*() {
      yield* checkSchema(schema)
      const sql = yield* SqlClient.SqlClient
      for (const statement of ddl(schema)) yield* sql.unsafe(statement)
    }),
    "2_stored_text": Effect.gen(function*() {
      yield* checkSchema(schema)
      const sql = yield* SqlClient.SqlClient
      for (const statement of storedText(schema)) yield* sql.unsafe(statement)
    }),
    "3_resolution_audit": Effect.gen(function*() {
      yield* checkSchema(schema)
      const sql = yield* SqlClient.SqlClient
      for (const statement of resolutionAudit(schema)) yield* sql.unsafe(statement)
    }),
    "4_step_journal": Effect.gen(function*() {
      yield* checkSchema(schema)
      const sql = yield* SqlClient.SqlClient
      for (const statement of stepJournal(schema)) yield* sql.unsafe(statement)
    }),
    "5_outbox": Effect.gen(function*() {
      yield* checkSchema(schema)
      const sql = yield* SqlClient.SqlClient
      for (const statement of outbox(schema)) yield* sql.unsafe(statement)
    }),
    "6_complete_many": Effect.gen(function*() {
      yield* checkSchema(schema)
      const sql = yield* SqlClient.SqlClient
      for (const statement of completeMany(schema)) yield* sql.unsafe(statement)
    })
  })

/**
 * The claim and complete statements for `schema`, with their parameters in order (see
 * `IdempotencyStore.sqlStatements`).
 *
 * @internal
 */
export const rawStatements = (schema: string): {
  readonly claim: IdempotencyStore.SqlStatement
  readonly complete: IdempotencyStore.SqlStatement
} => {
  const s = statements(names(schema))
  return {
    claim: {
      text: s.claim,
      parameters: [
        "scope",
        "key",
        "tool",
        "fingerprint",
        "owner",
        "leaseMs",
        "retentionMs",
        "maxAttempts",
        "recovery",
        "now",
        "arguments"
      ]
    },
    complete: {
      text: s.complete,
      parameters: ["scope", "key", "fence", "result", "resultBytes", "externalRef", "retentionMs", "now"]
    }
  }
}
