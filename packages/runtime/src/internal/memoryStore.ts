/**
 * The in-memory implementation of `IdempotencyStore`, for unit tests: the same state machine as
 * the SQL statements, decision for decision, over a `Map`. Each operation is one synchronous
 * step, so it is atomic in its process. Its clock is effect's `Clock` (so `TestClock` drives it)
 * unless an operation passes `now`.
 *
 * (Why one long module: it mirrors `sqlStatements` operation for operation; keeping both in the
 * same shape is what lets them be compared.)
 *
 * @internal
 */
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import { type FencedOperation, LeaseLost, type StoreOperation, StoreUnavailable } from "../ExecutionError.js"
import * as ExecutionMetrics from "../ExecutionMetrics.js"
import type * as FollowUp from "../FollowUp.js"
import type * as IdempotencyStore from "../IdempotencyStore.js"
import * as OutboxMemory from "./outbox/memory.js"
import { traced } from "./spans.js"
import {
  checkClaim,
  checkHeartbeat,
  claimOn,
  clampLimit,
  clockOf,
  isSettled,
  kindOf,
  maxAuditBy,
  maxAuditReason,
  maxStoredBytes
} from "./storeRules.js"

interface Row {
  scope: string
  key: string
  tool: string
  fingerprint: string
  status: IdempotencyStore.Status
  fence: bigint
  attempt: number
  maxAttempts: number
  recovery: IdempotencyStore.Recovery
  generation: number
  owner: string | null
  leaseExpiresAt: number | null
  prevStatus: IdempotencyStore.Status | null
  /** The arguments' canonical JSON text, as written by the last claim. */
  arguments: string | null
  /** The result's JSON text, as written. */
  result: string | null
  resultBytes: number | null
  /** The error's JSON text, as written. */
  error: string | null
  externalRef: string | null
  createdAt: number
  updatedAt: number
  completedAt: number | null
  expiresAt: number
}

/** Parses stored JSON text; `undefined` when it is not JSON (the SQL store's `UnreadableRow`). */
const parse = (json: string | null): unknown => {
  if (json === null) return null
  try {
    return JSON.parse(json)
  } catch {
    return undefined
  }
}

const unreadable = (ref: IdempotencyStore.RecordRef, operation: StoreOperation) =>
  new StoreUnavailable({ keyHash: ref.key, operation, reason: "UnreadableRow", code: null, retryable: false })

const id = (ref: IdempotencyStore.RecordRef): string => `${ref.scope}\u0000${ref.key}`

const lost = (lease: IdempotencyStore.FencedRef, operation: FencedOperation) =>
  new LeaseLost({ keyHash: lease.key, fence: lease.fence.toString(), operation })

/** What the SQL CHECKs on the sizes of results, errors and journal details answer. */
const tooLarge = (lease: IdempotencyStore.RecordRef, operation: StoreOperation) =>
  new StoreUnavailable({ keyHash: lease.key, operation, reason: "ConstraintError", code: "23514", retryable: false })

const oversized = (json: string | null): boolean => json !== null && Buffer.byteLength(json, "utf8") > maxStoredBytes

const byLease = Order.mapInput(Order.Number, (r: Row) => r.leaseExpiresAt ?? 0)
const byFence = Order.mapInput(Order.BigInt, (e: IdempotencyStore.JournalEntry) => e.fence)
/** Newest change first, then key descending: the SQL list's `ORDER BY updated_at DESC, idem_key DESC`. */
const newestFirst = Order.flip(
  Order.combine(
    Order.mapInput(Order.Number, (r: Row) => r.updatedAt),
    Order.mapInput(Order.String, (r: Row) => r.key)
  )
)
const byResolution = Order.combine(
  Order.mapInput(Order.Number, (e: IdempotencyStore.ResolutionEntry) => e.at.getTime()),
  Order.mapInput(Order.BigInt, (e: IdempotencyStore.ResolutionEntry) => e.fence)
)

/** What the SQL CHECKs on an audit answer. */
const auditRefused = (audit: IdempotencyStore.Audit | undefined): boolean =>
  audit !== undefined &&
  (audit.by.length < 1 || audit.by.length > maxAuditBy ||
    (audit.reason !== null && audit.reason.length > maxAuditReason))

/** A follow-up the SQL store's CHECK would refuse (a payload over the stored-value limit). */
const oversizedMessages = (messages: ReadonlyArray<FollowUp.Message> | undefined): boolean =>
  messages !== undefined && messages.some((m) => Buffer.byteLength(m.payload, "utf8") > maxStoredBytes)

/** @internal */
export const make = Effect.sync(() => {
  const rows = new Map<string, Row>()
  const journal = new Map<bigint, IdempotencyStore.JournalEntry>()
  const audits: Array<IdempotencyStore.ResolutionEntry> = []
  let sequence = 0n
  const nextFence = (): bigint => ++sequence
  const outbox = OutboxMemory.makeState(nextFence)

  /** The record as read at `now`; fails when a stored value is not JSON (written by a caller bug). */
  const snapshot = (row: Row, now: number, operation: StoreOperation) => {
    const record = toRecord(row, now)
    return record.result === undefined || record.error === undefined
      ? Effect.fail(unreadable(row, operation))
      : Effect.succeed(record)
  }

  const toRecord = (row: Row, now: number): IdempotencyStore.StoredRecord => ({
    scope: row.scope,
    key: row.key,
    tool: row.tool,
    fingerprint: row.fingerprint,
    status: row.status,
    previous: row.prevStatus,
    fence: row.fence,
    attempt: row.attempt,
    maxAttempts: row.maxAttempts,
    generation: row.generation,
    recovery: row.recovery,
    owner: row.owner,
    argumentsText: row.arguments,
    resultText: row.result,
    result: parse(row.result),
    error: parse(row.error),
    externalRef: row.externalRef,
    leaseExpiresAt: row.leaseExpiresAt === null ? null : new Date(row.leaseExpiresAt),
    expiresAt: new Date(row.expiresAt),
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
    completedAt: row.completedAt === null ? null : new Date(row.completedAt),
    retryAfterMs: row.leaseExpiresAt === null ? 0 : Math.max(0, row.leaseExpiresAt - now),
    leaseExpired: row.leaseExpiresAt !== null && row.leaseExpiresAt <= now,
    retentionElapsed: row.expiresAt <= now,
    readAt: new Date(now)
  })

  /** The row a fenced write may change: same fence, `in_progress`. */
  const held = (lease: IdempotencyStore.FencedRef): Row | undefined => {
    const row = rows.get(id(lease))
    return row !== undefined && row.fence === lease.fence && row.status === "in_progress" ? row : undefined
  }

  const claim = Effect.fnUntraced(function*(req: IdempotencyStore.ClaimRequest) {
    const invalid = checkClaim(req)
    if (invalid !== undefined) return yield* invalid
    const now = yield* clockOf(req)
    const fence = nextFence()
    const existing = rows.get(id(req))
    const lease = now + req.leaseMs
    const args = req.arguments ?? null
    if (oversized(args)) return yield* tooLarge(req, "claim")
    if (existing === undefined) {
      const row: Row = {
        scope: req.scope,
        key: req.key,
        tool: req.tool,
        fingerprint: req.fingerprint,
        status: "in_progress",
        fence,
        attempt: 1,
        maxAttempts: req.maxAttempts,
        recovery: req.recovery,
        generation: 1,
        owner: req.owner,
        leaseExpiresAt: lease,
        prevStatus: null,
        arguments: args,
        result: null,
        resultBytes: null,
        error: null,
        externalRef: null,
        createdAt: now,
        updatedAt: now,
        completedAt: null,
        expiresAt: now + req.retentionMs
      }
      rows.set(id(req), row)
      return { _tag: "Claimed", lease: toLease(row) } as const
    }
    const r = existing
    const how = claimOn(r, req, now)
    if (how === "refuse") return { _tag: "Existing", record: yield* snapshot(r, now, "claim") } as const
    const isReset = how === "reset"
    const isResumed = how === "resume"
    r.prevStatus = isResumed ? r.prevStatus : r.status
    r.attempt = isReset ? 1 : isResumed ? r.attempt : r.attempt + 1
    r.generation = isReset ? r.generation + 1 : r.generation
    r.maxAttempts = isReset ? req.maxAttempts : r.maxAttempts
    r.recovery = isReset ? req.recovery : r.recovery
    r.error = isReset ? null : r.error
    r.externalRef = isReset ? null : r.externalRef
    r.createdAt = isReset ? now : r.createdAt
    r.expiresAt = isReset ? now + req.retentionMs : Math.max(r.expiresAt, now + req.retentionMs)
    r.status = "in_progress"
    r.fence = fence
    r.owner = req.owner
    r.leaseExpiresAt = lease
    r.updatedAt = now
    r.completedAt = null
    r.tool = req.tool
    r.fingerprint = req.fingerprint
    r.arguments = args
    r.result = null
    r.resultBytes = null
    return { _tag: "Claimed", lease: toLease(r) } as const
  }, traced("IdempotencyStore.claim"))

  /** The claims one after another, each decided as `claim` decides it, at the first request's `now`. */
  const claimMany = Effect.fnUntraced(function*(
    requests: ReadonlyArray<IdempotencyStore.ClaimRequest>
  ) {
    for (const req of requests) {
      const invalid = checkClaim(req)
      if (invalid !== undefined) return yield* invalid
    }
    // refused whole before anything is written, as the SQL store's one statement is
    for (const req of requests) {
      if (oversized(req.arguments ?? null)) return yield* tooLarge(req, "claim")
    }
    // one clock reading for the whole batch: a later request's own `now` is not used (a repeat of a
    // key won here could otherwise find its lease expired and win the key a second time)
    const now = new Date(yield* clockOf(requests[0]))
    const claims: Array<IdempotencyStore.Claim> = []
    for (const req of requests) claims.push(yield* claim({ ...req, now }))
    return claims
  }, traced("IdempotencyStore.claimMany"))

  const toLease = (row: Row): IdempotencyStore.Lease => ({
    scope: row.scope,
    key: row.key,
    fence: row.fence,
    kind: kindOf(row.prevStatus, row.attempt),
    previous: row.prevStatus,
    attempt: row.attempt,
    maxAttempts: row.maxAttempts,
    generation: row.generation,
    recovery: row.recovery,
    leaseExpiresAt: new Date(row.leaseExpiresAt ?? 0)
  })

  const read = Effect.fnUntraced(function*(
    ref: IdempotencyStore.RecordRef,
    options?: IdempotencyStore.At
  ) {
    const now = yield* clockOf(options)
    const row = rows.get(id(ref))
    return row === undefined ? Option.none() : Option.some(yield* snapshot(row, now, "read"))
  }, traced("IdempotencyStore.read"))

  /** A fenced write that found no held row: confirmed when an identical write of ours already landed. */
  const confirmOrLost = (
    lease: IdempotencyStore.FencedRef,
    operation: FencedOperation,
    status: IdempotencyStore.Status
  ) => {
    const row = rows.get(id(lease))
    return row !== undefined && row.fence === lease.fence && row.status === status
      ? Effect.void
      : Effect.fail(lost(lease, operation))
  }

  const complete = Effect.fnUntraced(function*(
    lease: IdempotencyStore.FencedRef,
    options: IdempotencyStore.At & {
      readonly result: string
      readonly externalRef?: string | null | undefined
      readonly retentionMs: number
      readonly followUps?: ReadonlyArray<FollowUp.Message> | undefined
    }
  ) {
    const now = yield* clockOf(options)
    const row = held(lease)
    if (row === undefined) return yield* confirmOrLost(lease, "complete", "succeeded")
    const bytes = Buffer.byteLength(options.result, "utf8")
    if (bytes > maxStoredBytes || oversizedMessages(options.followUps)) return yield* tooLarge(lease, "complete")
    if (options.followUps !== undefined) OutboxMemory.write(outbox, row, options.followUps, now)
    row.status = "succeeded"
    row.result = options.result
    row.resultBytes = bytes
    row.externalRef = options.externalRef ?? null
    row.error = null
    row.leaseExpiresAt = null
    row.owner = null
    row.completedAt = now
    row.updatedAt = now
    row.expiresAt = now + options.retentionMs
  }, traced("IdempotencyStore.complete"))

  const fail = Effect.fnUntraced(function*(
    lease: IdempotencyStore.FencedRef,
    options: IdempotencyStore.At & { readonly error: string; readonly retentionMs: number }
  ) {
    const now = yield* clockOf(options)
    const row = held(lease)
    if (row === undefined) return yield* confirmOrLost(lease, "fail", "failed")
    if (oversized(options.error)) return yield* tooLarge(lease, "fail")
    row.status = "failed"
    row.error = options.error
    row.result = null
    row.resultBytes = null
    row.leaseExpiresAt = null
    row.owner = null
    row.completedAt = now
    row.updatedAt = now
    row.expiresAt = now + options.retentionMs
  }, traced("IdempotencyStore.fail"))

  const release = Effect.fnUntraced(function*(
    lease: IdempotencyStore.FencedRef,
    options: IdempotencyStore.At & { readonly error: string | null }
  ) {
    const now = yield* clockOf(options)
    const row = held(lease)
    if (row === undefined) return yield* confirmOrLost(lease, "release", "released")
    if (oversized(options.error)) return yield* tooLarge(lease, "release")
    row.status = "released"
    row.error = options.error
    row.leaseExpiresAt = null
    row.owner = null
    row.updatedAt = now
  }, traced("IdempotencyStore.release"))

  const heartbeat = Effect.fnUntraced(function*(
    lease: IdempotencyStore.FencedRef,
    options: IdempotencyStore.At & { readonly leaseMs: number }
  ) {
    const invalid = checkHeartbeat(lease.key, options.leaseMs)
    if (invalid !== undefined) return yield* invalid
    const now = yield* clockOf(options)
    const row = held(lease)
    if (row === undefined) return yield* lost(lease, "heartbeat")
    row.leaseExpiresAt = now + options.leaseMs
    row.updatedAt = now
    return new Date(row.leaseExpiresAt)
  }, traced("IdempotencyStore.heartbeat"))

  const parkRow = (row: Row, now: number): bigint => {
    row.prevStatus = row.status
    row.status = "unknown"
    row.fence = nextFence()
    row.leaseExpiresAt = null
    row.owner = null
    row.updatedAt = now
    return row.fence
  }

  const park = Effect.fnUntraced(function*(
    lease: IdempotencyStore.FencedRef,
    options: IdempotencyStore.At & { readonly error: string | null }
  ) {
    const now = yield* clockOf(options)
    const row = held(lease)
    if (row === undefined) return yield* lost(lease, "park")
    if (oversized(options.error)) return yield* tooLarge(lease, "park")
    row.error = options.error
    return parkRow(row, now)
  }, traced("IdempotencyStore.park"))

  const parkExpired = Effect.fnUntraced(function*(
    ref: IdempotencyStore.FencedRef,
    options?: IdempotencyStore.At
  ) {
    const now = yield* clockOf(options)
    const row = held(ref)
    if (row === undefined || row.leaseExpiresAt === null || row.leaseExpiresAt > now) return Option.none<bigint>()
    yield* ExecutionMetrics.count("parked")
    return Option.some(parkRow(row, now))
  }, traced("IdempotencyStore.parkExpired"))

  const resolve = Effect.fnUntraced(function*(
    ref: IdempotencyStore.FencedRef,
    resolution: IdempotencyStore.Resolution,
    options: IdempotencyStore.At & { readonly retentionMs: number; readonly audit?: IdempotencyStore.Audit | undefined }
  ) {
    const now = yield* clockOf(options)
    const row = rows.get(id(ref))
    if (row === undefined || row.fence !== ref.fence || row.status !== "unknown") return yield* lost(ref, "resolve")
    const result = resolution._tag === "Succeeded" ? resolution.result : null
    const error = resolution._tag === "Failed" ? resolution.error : null
    const bytes = result === null ? null : Buffer.byteLength(result, "utf8")
    const followUps = resolution._tag === "Succeeded" ? resolution.followUps : undefined
    if (
      (bytes !== null && bytes > maxStoredBytes) || oversized(error) || auditRefused(options.audit) ||
      oversizedMessages(followUps)
    ) {
      return yield* tooLarge(ref, "resolve")
    }
    if (followUps !== undefined) OutboxMemory.write(outbox, row, followUps, now)
    const parkedError = parse(row.error)
    row.status = resolution._tag === "Succeeded" ? "succeeded" : resolution._tag === "Failed" ? "failed" : "released"
    row.result = result
    row.resultBytes = bytes
    row.error = error
    row.externalRef = resolution._tag === "Succeeded" ? resolution.externalRef ?? null : null
    row.completedAt = row.status === "released" ? null : now
    row.updatedAt = now
    row.expiresAt = now + options.retentionMs
    if (options.audit !== undefined) {
      audits.push({
        scope: row.scope,
        key: row.key,
        fence: row.fence,
        tool: row.tool,
        status: row.status,
        resultText: result,
        errorText: error,
        parkedError: parkedError ?? null,
        by: options.audit.by,
        reason: options.audit.reason,
        at: new Date(now)
      })
    }
  }, traced("IdempotencyStore.resolve"))

  const reap = Effect.fnUntraced(function*(
    options?: IdempotencyStore.At & {
      readonly graceMs?: number | undefined
      readonly includeReexecutable?: boolean | undefined
      readonly batchSize?: number | undefined
    }
  ) {
    const now = yield* clockOf(options)
    const horizon = now - (options?.graceMs ?? 0)
    const candidates = [...rows.values()].filter((r) =>
      r.status === "in_progress" && r.leaseExpiresAt !== null && r.leaseExpiresAt <= horizon &&
      (r.recovery === "manual" || r.attempt >= r.maxAttempts || options?.includeReexecutable === true)
    )
    const victims = Arr.sort(candidates, byLease).slice(0, options?.batchSize ?? 100)
    const parked = victims.map((row) => ({ scope: row.scope, key: row.key, fence: parkRow(row, now) }))
    if (parked.length > 0) yield* ExecutionMetrics.count("parked", parked.length)
    return parked
  }, traced("IdempotencyStore.reap"))

  const purge = Effect.fnUntraced(function*(
    options?: IdempotencyStore.At & {
      readonly batchSize?: number | undefined
      readonly olderThanMs?: number | undefined
      readonly scope?: string | undefined
    }
  ) {
    const now = yield* clockOf(options)
    const olderThan = options?.olderThanMs
    const scope = options?.scope
    let total = 0
    for (const [k, row] of rows) {
      if (
        isSettled(row.status) && (scope === undefined || row.scope === scope) &&
        (olderThan === undefined ? row.expiresAt <= now : row.updatedAt <= now - olderThan)
      ) {
        rows.delete(k)
        total++
      }
    }
    if (total > 0) yield* ExecutionMetrics.count("purged", total)
    return total
  }, traced("IdempotencyStore.purge"))

  const journalWrite = Effect.fnUntraced(function*(
    lease: IdempotencyStore.FencedRef,
    entry: IdempotencyStore.At & {
      readonly attempt: number
      readonly outcome: IdempotencyStore.JournalOutcome
      readonly detail: string | null
    }
  ) {
    if (oversized(entry.detail)) return yield* tooLarge(lease, "journal")
    const now = yield* clockOf(entry)
    const detail = parse(entry.detail)
    if (detail === undefined) return yield* unreadable(lease, "journal")
    journal.set(lease.fence, {
      scope: lease.scope,
      key: lease.key,
      fence: lease.fence,
      attempt: entry.attempt,
      outcome: entry.outcome,
      detail,
      at: new Date(now)
    })
  }, traced("IdempotencyStore.journal"))

  const journalOf = (ref: IdempotencyStore.RecordRef) =>
    Effect.sync(() =>
      Arr.sort([...journal.values()].filter((e) => e.scope === ref.scope && e.key === ref.key), byFence)
    ).pipe(traced("IdempotencyStore.journalOf"))

  const list = Effect.fnUntraced(function*(query: IdempotencyStore.ListQuery) {
    const now = yield* clockOf(query)
    const status = query.status === undefined ? undefined : new Set(query.status)
    const found = [...rows.values()].filter((r) =>
      (query.scope === undefined || r.scope === query.scope) &&
      (query.keyPrefix === undefined || r.key.startsWith(query.keyPrefix)) &&
      (status === undefined || status.has(r.status)) &&
      (query.tool === undefined || r.tool === query.tool)
    )
    const records: Array<IdempotencyStore.StoredRecord> = []
    for (const row of Arr.sort(found, newestFirst).slice(0, clampLimit(query.limit))) {
      records.push(yield* snapshot(row, now, "list"))
    }
    return records
  }, traced("IdempotencyStore.list"))

  const resolutions = (ref: IdempotencyStore.RecordRef) =>
    Effect.sync(() => Arr.sort(audits.filter((e) => e.scope === ref.scope && e.key === ref.key), byResolution)).pipe(
      traced("IdempotencyStore.resolutions")
    )

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
    journal: journalWrite,
    journalOf,
    list,
    resolutions
  }
  OutboxMemory.register(service, outbox)
  return service
})
