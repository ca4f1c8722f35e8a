/**
 * The SQL store's codecs: one `Schema` per statement's parameters and per returned row. The
 * statements alias their columns to the model's field names, so a decoded row is the model
 * (`StoredRecord`, `Lease`, `JournalEntry`) without hand mapping; columns the driver may return in
 * another representation (`int8` as a string, `timestamptz` as text) decode either way.
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import type * as FollowUp from "../FollowUp.js"
import type * as IdempotencyStore from "../IdempotencyStore.js"
import * as Rules from "./storeRules.js"

/** An `int8` the driver returns as `bigint` (or, configured otherwise, as a decimal string). */
const Fence = Schema.Union([Schema.BigInt, Schema.BigIntFromString])
/** A `timestamptz` the driver returns as a `Date` (or as an ISO string). */
const Timestamp = Schema.Union([Schema.Date, Schema.DateFromString])
const Json = Schema.NullOr(Schema.fromJsonString(Schema.Unknown))
const Now = Schema.NullOr(Schema.Date)

const RefRequest = Schema.Struct({ scope: Schema.String, key: Schema.String, now: Now })
const FencedRequest = Schema.Struct({ scope: Schema.String, key: Schema.String, fence: Schema.BigInt, now: Now })

const ClaimRequest = Schema.Struct({
  scope: Schema.String,
  key: Schema.String,
  tool: Schema.String,
  fingerprint: Schema.String,
  arguments: Schema.NullOr(Schema.String),
  owner: Schema.String,
  leaseMs: Schema.Number,
  retentionMs: Schema.Number,
  maxAttempts: Schema.Number,
  recovery: Rules.Recovery,
  now: Now
})

const ClaimRow = Schema.Struct({
  fence: Fence,
  attempt: Schema.Number,
  maxAttempts: Schema.Number,
  generation: Schema.Number,
  previous: Schema.NullOr(Rules.Status),
  recovery: Rules.Recovery,
  leaseExpiresAt: Timestamp
})

const RecordRow = Schema.Struct({
  scope: Schema.String,
  key: Schema.String,
  tool: Schema.String,
  fingerprint: Schema.String,
  status: Rules.Status,
  previous: Schema.NullOr(Rules.Status),
  fence: Fence,
  attempt: Schema.Number,
  maxAttempts: Schema.Number,
  generation: Schema.Number,
  recovery: Rules.Recovery,
  owner: Schema.NullOr(Schema.String),
  argumentsText: Schema.NullOr(Schema.String),
  resultText: Schema.NullOr(Schema.String),
  error: Json,
  externalRef: Schema.NullOr(Schema.String),
  leaseExpiresAt: Schema.NullOr(Timestamp),
  expiresAt: Timestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  completedAt: Schema.NullOr(Timestamp),
  retryAfterMs: Schema.Number,
  leaseExpired: Schema.Boolean,
  retentionElapsed: Schema.Boolean,
  readAt: Timestamp
})

const FenceRow = Schema.Struct({ fence: Fence })
const PeekRow = Schema.Struct({ status: Rules.Status, fence: Fence })
const LeaseRow = Schema.Struct({ leaseExpiresAt: Timestamp })
const ReapedRow = Schema.Struct({ scope: Schema.String, key: Schema.String, fence: Fence })
const KeyRow = Schema.Struct({ key: Schema.String })

const JournalRow = Schema.Struct({
  fence: Fence,
  scope: Schema.String,
  key: Schema.String,
  attempt: Schema.Number,
  outcome: Rules.JournalOutcome,
  detail: Json,
  at: Timestamp
})

const CompleteRequest = Schema.Struct({
  ...FencedRequest.fields,
  result: Schema.String,
  externalRef: Schema.NullOr(Schema.String),
  retentionMs: Schema.Number
})
const FailRequest = Schema.Struct({ ...FencedRequest.fields, error: Schema.String, retentionMs: Schema.Number })
const ErrorRequest = Schema.Struct({ ...FencedRequest.fields, error: Schema.NullOr(Schema.String) })
const HeartbeatRequest = Schema.Struct({ ...FencedRequest.fields, leaseMs: Schema.Number })
const ResolveRequest = Schema.Struct({
  ...FencedRequest.fields,
  status: Rules.Status,
  result: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  externalRef: Schema.NullOr(Schema.String),
  retentionMs: Schema.Number
})
const ResolveAuditedRequest = Schema.Struct({
  ...ResolveRequest.fields,
  by: Schema.String,
  reason: Schema.NullOr(Schema.String)
})
const ListRequest = Schema.Struct({
  scope: Schema.NullOr(Schema.String),
  keyPrefix: Schema.NullOr(Schema.String),
  status: Schema.NullOr(Schema.String),
  tool: Schema.NullOr(Schema.String),
  limit: Schema.Number,
  now: Now
})
const ResolutionRow = Schema.Struct({
  scope: Schema.String,
  key: Schema.String,
  fence: Fence,
  tool: Schema.String,
  status: Rules.Status,
  resultText: Schema.NullOr(Schema.String),
  errorText: Schema.NullOr(Schema.String),
  parkedError: Json,
  by: Schema.String,
  reason: Schema.NullOr(Schema.String),
  at: Timestamp
})
const ReapRequest = Schema.Struct({
  graceMs: Schema.Number,
  includeReexecutable: Schema.Boolean,
  batchSize: Schema.Number,
  now: Now
})
const PurgeRequest = Schema.Struct({
  batchSize: Schema.Number,
  now: Now,
  olderThanMs: Schema.NullOr(Schema.Number),
  scope: Schema.NullOr(Schema.String)
})
const JournalRequest = Schema.Struct({
  ...FencedRequest.fields,
  attempt: Schema.Number,
  outcome: Rules.JournalOutcome,
  detail: Schema.NullOr(Schema.String)
})
const RecordRefRequest = Schema.Struct({ scope: Schema.String, key: Schema.String })

const bytesOf = (text: string | null): number | null => text === null ? null : Buffer.byteLength(text, "utf8")

/**
 * A statement's codecs: its parameters (`params` puts them in placeholder order) and its rows.
 *
 * The statements every execution runs (claim, complete) also have a reading without `Schema`
 * (`fast`): the request's parameters and each row checked field by field in the one shape the
 * store sends and the driver returns (a plain object, not an array; a `bigint` fence, a valid
 * `Date`), each field read once, `undefined` for anything else, which `Request`/`Row` then decide,
 * failures included. Where it answers, the answer is `params(encode(request))` and `decode(row)`:
 * tested against the schemas on any value (`test/SqlCodecs.props.test.ts`).
 *
 * @internal
 */
export interface Codec<Req extends Schema.Constraint, Row extends Schema.Constraint> {
  readonly Request: Req
  readonly Row: Row
  readonly params: (request: Req["Encoded"]) => ReadonlyArray<unknown>
  readonly fast?: Fast<Req, Row> | undefined
}

/** A statement's reading without `Schema` for its usual values; `undefined`: not such a value. @internal */
export interface Fast<Req extends Schema.Constraint, Row extends Schema.Constraint> {
  readonly params: (request: Req["Type"]) => ReadonlyArray<unknown> | undefined
  readonly row: (row: unknown) => Row["Type"] | undefined
}

const codec = <Req extends Schema.Constraint, Row extends Schema.Constraint>(
  Request: Req,
  Row: Row,
  params: (request: Req["Encoded"]) => ReadonlyArray<unknown>,
  fast?: Fast<Req, Row>
): Codec<Req, Row> => ({ Request, Row, params, fast })

const recoveries: ReadonlySet<unknown> = new Set(Rules.Recovery.literals)
const statuses: ReadonlySet<unknown> = new Set(Rules.Status.literals)
const isText = (u: unknown): u is string => typeof u === "string"
const isTextOrNull = (u: unknown): u is string | null => u === null || typeof u === "string"
const isNumber = (u: unknown): u is number => typeof u === "number"
/** What `Schema.Date` accepts. */
const isValidDate = (u: unknown): u is Date => u instanceof Date && !Number.isNaN(u.getTime())
const isNow = (u: unknown): u is Date | null => u === null || isValidDate(u)
/** An object as a `Schema.Struct` takes one: not `null`, not an array, not a function. */
const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const claimParams = (r: typeof ClaimRequest.Encoded): ReadonlyArray<unknown> => [
  r.scope,
  r.key,
  r.tool,
  r.fingerprint,
  r.owner,
  r.leaseMs,
  r.retentionMs,
  r.maxAttempts,
  r.recovery,
  r.now,
  r.arguments
]

/** @internal */
export const claim = codec(ClaimRequest, ClaimRow, claimParams, {
  params: (r) => {
    if (!isRecord(r)) return undefined
    // each field read once: what is checked is what is sent
    const { arguments: args, fingerprint, key, leaseMs, maxAttempts, now, owner, recovery, retentionMs, scope, tool } =
      r
    return isText(scope) && isText(key) && isText(tool) && isText(fingerprint) && isTextOrNull(args) &&
        isText(owner) && isNumber(leaseMs) && isNumber(retentionMs) && isNumber(maxAttempts) &&
        recoveries.has(recovery) && isNow(now)
      ? claimParams({
        scope,
        key,
        tool,
        fingerprint,
        arguments: args,
        owner,
        leaseMs,
        retentionMs,
        maxAttempts,
        recovery: recovery as typeof ClaimRequest.Encoded["recovery"],
        now
      })
      : undefined
  },
  row: (row) => {
    if (!isRecord(row)) return undefined
    const { attempt, fence, generation, leaseExpiresAt, maxAttempts, previous, recovery } = row
    return typeof fence === "bigint" && isNumber(attempt) && isNumber(maxAttempts) && isNumber(generation) &&
        (previous === null || statuses.has(previous)) && recoveries.has(recovery) && isValidDate(leaseExpiresAt)
      ? {
        fence,
        attempt,
        maxAttempts,
        generation,
        previous: previous as typeof ClaimRow.Type["previous"],
        recovery: recovery as typeof ClaimRow.Type["recovery"],
        leaseExpiresAt
      }
      : undefined
  }
})
/**
 * A batch of claims: `claims` is the JSON array `claimManyJson` makes; each row a won claim with
 * its record's identity. @internal
 */
export const claimMany = codec(
  Schema.Struct({ claims: Schema.String, now: Now }),
  Schema.Struct({ scope: Schema.String, key: Schema.String, ...ClaimRow.fields }),
  (r) => [r.claims, r.now]
)
/** @internal */
export const readMany = codec(Schema.Struct({ refs: Schema.String, now: Now }), RecordRow, (r) => [r.refs, r.now])

/** `String.prototype.isWellFormed` / `toWellFormed` (ES2024; the project's lib is ES2023, Node ≥ 20 has them). */
type WellFormed = { isWellFormed(): boolean; toWellFormed(): string }
const wellFormed = (s: string): boolean => (s as unknown as WellFormed).isWellFormed()
const toWellFormed = (s: string): string => (s as unknown as WellFormed).toWellFormed()

/**
 * A claim request as a text parameter stores it: the driver sends strings as UTF-8, which turns a
 * lone surrogate into U+FFFD, where `jsonb` refuses its `\uD800` escape (SQLSTATE 22P02) and would
 * fail the whole batch. The request itself when its text is well formed (the usual case: no copy).
 * @internal
 */
export const asStored = (r: IdempotencyStore.ClaimRequest): IdempotencyStore.ClaimRequest =>
  wellFormed(r.scope) && wellFormed(r.key) && wellFormed(r.tool) && wellFormed(r.fingerprint) &&
    wellFormed(r.owner) && (r.arguments == null || wellFormed(r.arguments))
    ? r
    : {
      ...r,
      scope: toWellFormed(r.scope),
      key: toWellFormed(r.key),
      tool: toWellFormed(r.tool),
      fingerprint: toWellFormed(r.fingerprint),
      owner: toWellFormed(r.owner),
      arguments: r.arguments == null ? r.arguments : toWellFormed(r.arguments)
    }

/** A record's scope and key as text parameters store them (see {@link asStored}). @internal */
export const asStoredRef = (r: IdempotencyStore.RecordRef): IdempotencyStore.RecordRef =>
  wellFormed(r.scope) && wellFormed(r.key) ? r : { scope: toWellFormed(r.scope), key: toWellFormed(r.key) }

/** The JSON array of a batch of claims, in the shape of `claimMany`'s `jsonb_to_recordset`. @internal */
export const claimManyJson = (requests: ReadonlyArray<IdempotencyStore.ClaimRequest>): string =>
  JSON.stringify(requests.map((r) => ({
    scope: r.scope,
    key: r.key,
    tool: r.tool,
    fingerprint: r.fingerprint,
    owner: r.owner,
    lease_ms: r.leaseMs,
    retention_ms: r.retentionMs,
    max_attempts: r.maxAttempts,
    recovery: r.recovery,
    arguments: r.arguments ?? null
  })))
/** @internal */
export const read = codec(RefRequest, RecordRow, (r) => [r.scope, r.key, r.now])
/** @internal */
export const peek = codec(RecordRefRequest, PeekRow, (r) => [r.scope, r.key])
const completeParams = (r: typeof CompleteRequest.Encoded): ReadonlyArray<unknown> => [
  r.scope,
  r.key,
  r.fence,
  r.result,
  Buffer.byteLength(r.result, "utf8"),
  r.externalRef,
  r.retentionMs,
  r.now
]

/** @internal */
export const complete = codec(CompleteRequest, FenceRow, completeParams, {
  params: (r) => {
    if (!isRecord(r)) return undefined
    const { externalRef, fence, key, now, result, retentionMs, scope } = r
    return isText(scope) && isText(key) && typeof fence === "bigint" && isText(result) && isTextOrNull(externalRef) &&
        isNumber(retentionMs) && isNow(now)
      ? completeParams({ scope, key, fence, result, externalRef, retentionMs, now })
      : undefined
  },
  row: (row) => {
    if (!isRecord(row)) return undefined
    const fence = row.fence
    return typeof fence === "bigint" ? { fence } : undefined
  }
})
/**
 * A batch of completes: `completes` is the JSON array `completeManyJson` makes; each row a lease
 * the statement completed. @internal
 */
export const completeMany = codec(
  Schema.Struct({ completes: Schema.String }),
  Schema.Struct({ scope: Schema.String, key: Schema.String, fence: Fence }),
  (r) => [r.completes]
)

/** One complete of a batch: the lease and what `complete` writes. @internal */
export interface CompleteEntry {
  readonly lease: IdempotencyStore.FencedRef
  readonly result: string
  readonly externalRef: string | null
  readonly retentionMs: number
}

/**
 * The JSON array of a batch of completes, in the shape of `completeMany`'s `jsonb_to_recordset`:
 * text as a text parameter stores it (a lone surrogate as U+FFFD, which `jsonb` would refuse as an
 * escape), the fence as a decimal string (a JSON number loses an `int8` beyond 2^53). @internal
 */
export const completeManyJson = (entries: ReadonlyArray<CompleteEntry>): string =>
  JSON.stringify(entries.map((e) => ({
    scope: toWellFormed(e.lease.scope),
    key: toWellFormed(e.lease.key),
    fence: e.lease.fence.toString(),
    result: toWellFormed(e.result),
    result_bytes: Buffer.byteLength(e.result, "utf8"),
    external_ref: e.externalRef === null ? null : toWellFormed(e.externalRef),
    retention_ms: e.retentionMs
  })))

const CompleteWithFollowUpsRequest = Schema.Struct({ ...CompleteRequest.fields, messages: Schema.String })
/** @internal */
export const completeWithFollowUps = codec(CompleteWithFollowUpsRequest, FenceRow, (r) => [
  ...complete.params(r),
  r.messages
])
/** @internal */
export const fail = codec(FailRequest, FenceRow, (r) => [r.scope, r.key, r.fence, r.error, r.retentionMs, r.now])
/** @internal */
export const release = codec(ErrorRequest, FenceRow, (r) => [r.scope, r.key, r.fence, r.error, r.now])
/** @internal */
export const heartbeat = codec(HeartbeatRequest, LeaseRow, (r) => [r.scope, r.key, r.fence, r.leaseMs, r.now])
/** @internal */
export const park = codec(ErrorRequest, FenceRow, (r) => [r.scope, r.key, r.fence, r.error, r.now])
/** @internal */
export const parkExpired = codec(FencedRequest, FenceRow, (r) => [r.scope, r.key, r.fence, r.now])
/** The parameters of a resolution, in the order of `resolve`'s placeholders. */
const resolveParams = (r: typeof ResolveRequest.Encoded): ReadonlyArray<unknown> => [
  r.scope,
  r.key,
  r.fence,
  r.status,
  r.result,
  bytesOf(r.result),
  r.error,
  r.externalRef,
  r.retentionMs,
  r.now
]
/** @internal */
export const resolve = codec(ResolveRequest, FenceRow, resolveParams)
/** @internal */
export const resolveAudited = codec(ResolveAuditedRequest, FenceRow, (r) => [...resolveParams(r), r.by, r.reason])
const ResolveWithFollowUpsRequest = Schema.Struct({ ...ResolveRequest.fields, messages: Schema.String })
const ResolveAuditedWithFollowUpsRequest = Schema.Struct({ ...ResolveAuditedRequest.fields, messages: Schema.String })
/** @internal */
export const resolveWithFollowUps = codec(ResolveWithFollowUpsRequest, FenceRow, (r) => [
  ...resolveParams(r),
  r.messages
])
/** @internal */
export const resolveAuditedWithFollowUps = codec(ResolveAuditedWithFollowUpsRequest, FenceRow, (r) => [
  ...resolveParams(r),
  r.by,
  r.reason,
  r.messages
])

/** The stored follow-ups as the statements take them: one JSON array of snake_case objects. @internal */
export const messagesJson = (messages: ReadonlyArray<FollowUp.Message>): string =>
  JSON.stringify(messages.map((m) => ({
    ordinal: m.ordinal,
    delivery_key: m.deliveryKey,
    kind: m.kind,
    destination: m.destination,
    payload: m.payload,
    delay_ms: m.delayMs,
    ordering_key: m.orderingKey
  })))

const MessageRow = Schema.Struct({
  id: Fence,
  deliveryKey: Schema.String,
  scope: Schema.String,
  key: Schema.String,
  fence: Fence,
  ordinal: Schema.Number,
  kind: Schema.Literals(["webhook", "named"]),
  destination: Schema.String,
  payload: Schema.String,
  orderingKey: Schema.NullOr(Schema.String),
  status: Schema.Literals(["pending", "delivering", "delivered", "dead"]),
  attempts: Schema.Number,
  leaseFence: Schema.NullOr(Fence),
  leaseOwner: Schema.NullOr(Schema.String),
  leaseExpiresAt: Schema.NullOr(Timestamp),
  availableAt: Timestamp,
  lastError: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  deliveredAt: Schema.NullOr(Timestamp)
})
const ListMessagesRequest = Schema.Struct({
  scope: Schema.NullOr(Schema.String),
  key: Schema.NullOr(Schema.String),
  status: Schema.NullOr(Schema.String),
  limit: Schema.Number
})
const ClaimMessagesRequest = Schema.Struct({
  owner: Schema.String,
  leaseMs: Schema.Number,
  limit: Schema.Number,
  now: Now
})
/** @internal */
export const claimMessages = codec(
  ClaimMessagesRequest,
  MessageRow,
  (r) => [r.owner, r.leaseMs, r.limit, r.now]
)
const SettleMessageRequest = Schema.Struct({
  id: Schema.BigInt,
  leaseFence: Schema.BigInt,
  status: Schema.Literals(["delivered", "pending", "dead"]),
  error: Schema.NullOr(Schema.String),
  delayMs: Schema.Number,
  now: Now
})
/** @internal */
export const settleMessage = codec(
  SettleMessageRequest,
  Schema.Struct({ latencyMs: Schema.Number }),
  (r) => [r.id, r.leaseFence, r.status, r.error, r.delayMs, r.now]
)
/** @internal */
export const countMessages = codec(
  Schema.Struct({}),
  Schema.Struct({ status: Schema.Literals(["pending", "delivering", "delivered", "dead"]), count: Schema.Number }),
  () => []
)
/** @internal */
export const listMessages = codec(ListMessagesRequest, MessageRow, (r) => [r.scope, r.key, r.status, r.limit])

/** @internal */
export const list = codec(ListRequest, RecordRow, (r) => [r.scope, r.keyPrefix, r.status, r.tool, r.limit, r.now])
/** @internal */
export const resolutions = codec(RecordRefRequest, ResolutionRow, (r) => [r.scope, r.key])
/** @internal */
export const reap = codec(ReapRequest, ReapedRow, (r) => [r.graceMs, r.includeReexecutable, r.batchSize, r.now])
/** @internal */
export const purge = codec(PurgeRequest, KeyRow, (r) => [r.batchSize, r.now, r.olderThanMs, r.scope])
/** @internal */
export const journal = codec(JournalRequest, Schema.Unknown, (r) => [
  r.fence,
  r.scope,
  r.key,
  r.attempt,
  r.outcome,
  r.detail,
  r.now
])
/** @internal */
export const journalOf = codec(RecordRefRequest, JournalRow, (r) => [r.scope, r.key])

/** The record of a decoded row; `undefined` when its result is not JSON. */
export const toRecord = (row: typeof RecordRow.Type): IdempotencyStore.StoredRecord | undefined => {
  let result: unknown = null
  if (row.resultText !== null) {
    try {
      result = JSON.parse(row.resultText)
    } catch {
      return undefined
    }
  }
  return { ...row, result }
}
