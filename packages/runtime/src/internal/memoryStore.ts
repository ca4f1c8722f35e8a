/**
 * The in-memory implementation of `IdempotencyStore`, for unit tests: the same state machine as
 * the SQL statements, decision for decision, over a `Map`. Each operation is one synchronous
 * step, so it is atomic in its process. Its clock is effect's `Clock` (so `TestClock` drives it)
 * unless an operation passes `now`.
 *
 * @internal
 */
import { Array as Arr, Clock, Effect, Option, Order } from "effect"
import { LeaseLost, StoreUnavailable } from "../ExecutionError.js"
import * as ExecutionMetrics from "../ExecutionMetrics.js"
import type * as IdempotencyStore from "../IdempotencyStore.js"
import { kindOf } from "./sqlStore.js"

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
  result: unknown
  resultBytes: number | null
  error: unknown
  externalRef: string | null
  createdAt: number
  updatedAt: number
  completedAt: number | null
  expiresAt: number
}

const settled = (status: IdempotencyStore.Status): boolean =>
  status === "succeeded" || status === "failed" || status === "released"

const parse = (json: string | null): unknown => json === null ? null : JSON.parse(json)

const id = (ref: IdempotencyStore.RecordRef): string => `${ref.scope}\u0000${ref.key}`

const clock = (options: IdempotencyStore.At | undefined): Effect.Effect<number> =>
  options?.now !== undefined ? Effect.succeed(options.now.getTime()) : Clock.currentTimeMillis

const lost = (lease: IdempotencyStore.FencedRef, operation: string) =>
  new LeaseLost({ keyHash: lease.key, fence: lease.fence.toString(), operation })

/** What the SQL CHECK on `result_bytes` answers. */
const tooLarge = (lease: IdempotencyStore.FencedRef, operation: string) =>
  new StoreUnavailable({ keyHash: lease.key, operation, reason: "ConstraintError", code: "23514", retryable: false })

const byLease = Order.mapInput(Order.Number, (r: Row) => r.leaseExpiresAt ?? 0)
const byFence = Order.mapInput(Order.BigInt, (e: IdempotencyStore.JournalEntry) => e.fence)

/** @internal */
export const make = Effect.sync(() => {
  const rows = new Map<string, Row>()
  const journal = new Map<bigint, IdempotencyStore.JournalEntry>()
  let sequence = 0n
  const nextFence = (): bigint => ++sequence

  const snapshot = (row: Row, now: number): IdempotencyStore.StoredRecord => ({
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
    result: row.result,
    error: row.error,
    externalRef: row.externalRef,
    leaseExpiresAt: row.leaseExpiresAt === null ? null : new Date(row.leaseExpiresAt),
    expiresAt: new Date(row.expiresAt),
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
    completedAt: row.completedAt === null ? null : new Date(row.completedAt),
    retryAfterMs: row.leaseExpiresAt === null ? 0 : Math.max(0, row.leaseExpiresAt - now),
    leaseExpired: row.leaseExpiresAt !== null && row.leaseExpiresAt <= now,
    retentionElapsed: row.expiresAt <= now
  })

  /** The row a fenced write may change: same fence, `in_progress`. */
  const held = (lease: IdempotencyStore.FencedRef): Row | undefined => {
    const row = rows.get(id(lease))
    return row !== undefined && row.fence === lease.fence && row.status === "in_progress" ? row : undefined
  }

  const claim = Effect.fn("IdempotencyStore.claim")(function*(req: IdempotencyStore.ClaimRequest) {
    const now = yield* clock(req)
    const fence = nextFence()
    const existing = rows.get(id(req))
    const lease = now + req.leaseMs
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
    const isReset = settled(r.status) && r.expiresAt <= now
    const isResumed = r.status === "in_progress" && r.owner === req.owner
    const takeable = isReset ||
      (r.fingerprint === req.fingerprint && isResumed) ||
      (r.fingerprint === req.fingerprint && r.attempt < r.maxAttempts &&
        (r.status === "released" ||
          (r.status === "in_progress" && r.leaseExpiresAt !== null && r.leaseExpiresAt <= now &&
            r.recovery !== "manual") ||
          (r.status === "unknown" && r.recovery !== "manual")))
    if (!takeable) return { _tag: "Existing", record: snapshot(r, now) } as const
    r.prevStatus = isResumed && !isReset ? r.prevStatus : r.status
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
    r.result = null
    r.resultBytes = null
    return { _tag: "Claimed", lease: toLease(r) } as const
  })

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

  const read = Effect.fn("IdempotencyStore.read")(function*(
    ref: IdempotencyStore.RecordRef,
    options?: IdempotencyStore.At
  ) {
    const now = yield* clock(options)
    const row = rows.get(id(ref))
    return row === undefined ? Option.none() : Option.some(snapshot(row, now))
  })

  /** A fenced write that found no held row: confirmed when an identical write of ours already landed. */
  const confirmOrLost = (lease: IdempotencyStore.FencedRef, operation: string, status: IdempotencyStore.Status) => {
    const row = rows.get(id(lease))
    return row !== undefined && row.fence === lease.fence && row.status === status
      ? Effect.void
      : Effect.fail(lost(lease, operation))
  }

  const complete = Effect.fn("IdempotencyStore.complete")(function*(
    lease: IdempotencyStore.FencedRef,
    options: IdempotencyStore.At & {
      readonly result: string
      readonly externalRef?: string | null | undefined
      readonly retentionMs: number
    }
  ) {
    const now = yield* clock(options)
    const row = held(lease)
    if (row === undefined) return yield* confirmOrLost(lease, "complete", "succeeded")
    const bytes = Buffer.byteLength(options.result, "utf8")
    if (bytes > 262_144) return yield* tooLarge(lease, "complete")
    row.status = "succeeded"
    row.result = parse(options.result)
    row.resultBytes = bytes
    row.externalRef = options.externalRef ?? null
    row.error = null
    row.leaseExpiresAt = null
    row.owner = null
    row.completedAt = now
    row.updatedAt = now
    row.expiresAt = now + options.retentionMs
  })

  const fail = Effect.fn("IdempotencyStore.fail")(function*(
    lease: IdempotencyStore.FencedRef,
    options: IdempotencyStore.At & { readonly error: string; readonly retentionMs: number }
  ) {
    const now = yield* clock(options)
    const row = held(lease)
    if (row === undefined) return yield* confirmOrLost(lease, "fail", "failed")
    row.status = "failed"
    row.error = parse(options.error)
    row.result = null
    row.resultBytes = null
    row.leaseExpiresAt = null
    row.owner = null
    row.completedAt = now
    row.updatedAt = now
    row.expiresAt = now + options.retentionMs
  })

  const release = Effect.fn("IdempotencyStore.release")(function*(
    lease: IdempotencyStore.FencedRef,
    options: IdempotencyStore.At & { readonly error: string | null }
  ) {
    const now = yield* clock(options)
    const row = held(lease)
    if (row === undefined) return yield* confirmOrLost(lease, "release", "released")
    row.status = "released"
    row.error = parse(options.error)
    row.leaseExpiresAt = null
    row.owner = null
    row.updatedAt = now
  })

  const heartbeat = Effect.fn("IdempotencyStore.heartbeat")(function*(
    lease: IdempotencyStore.FencedRef,
    options: IdempotencyStore.At & { readonly leaseMs: number }
  ) {
    const now = yield* clock(options)
    const row = held(lease)
    if (row === undefined) return yield* lost(lease, "heartbeat")
    row.leaseExpiresAt = now + options.leaseMs
    row.updatedAt = now
    return new Date(row.leaseExpiresAt)
  })

  const parkRow = (row: Row, now: number): bigint => {
    row.prevStatus = row.status
    row.status = "unknown"
    row.fence = nextFence()
    row.leaseExpiresAt = null
    row.owner = null
    row.updatedAt = now
    return row.fence
  }

  const park = Effect.fn("IdempotencyStore.park")(function*(
    lease: IdempotencyStore.FencedRef,
    options: IdempotencyStore.At & { readonly error: string | null }
  ) {
    const now = yield* clock(options)
    const row = held(lease)
    if (row === undefined) return yield* lost(lease, "park")
    row.error = parse(options.error)
    return parkRow(row, now)
  })

  const parkExpired = Effect.fn("IdempotencyStore.parkExpired")(function*(
    ref: IdempotencyStore.FencedRef,
    options?: IdempotencyStore.At
  ) {
    const now = yield* clock(options)
    const row = held(ref)
    if (row === undefined || row.leaseExpiresAt === null || row.leaseExpiresAt > now) return Option.none<bigint>()
    yield* ExecutionMetrics.count("parked")
    return Option.some(parkRow(row, now))
  })

  const resolve = Effect.fn("IdempotencyStore.resolve")(function*(
    ref: IdempotencyStore.FencedRef,
    resolution: IdempotencyStore.Resolution,
    options: IdempotencyStore.At & { readonly retentionMs: number }
  ) {
    const now = yield* clock(options)
    const row = rows.get(id(ref))
    if (row === undefined || row.fence !== ref.fence || row.status !== "unknown") return yield* lost(ref, "resolve")
    const result = resolution._tag === "Succeeded" ? resolution.result : null
    const bytes = result === null ? null : Buffer.byteLength(result, "utf8")
    if (bytes !== null && bytes > 262_144) return yield* tooLarge(ref, "resolve")
    row.status = resolution._tag === "Succeeded" ? "succeeded" : resolution._tag === "Failed" ? "failed" : "released"
    row.result = parse(result)
    row.resultBytes = bytes
    row.error = resolution._tag === "Failed" ? parse(resolution.error) : null
    row.externalRef = resolution._tag === "Succeeded" ? resolution.externalRef ?? null : null
    row.completedAt = row.status === "released" ? null : now
    row.updatedAt = now
    row.expiresAt = now + options.retentionMs
  })

  const reap = Effect.fn("IdempotencyStore.reap")(function*(
    options?: IdempotencyStore.At & {
      readonly graceMs?: number | undefined
      readonly includeReexecutable?: boolean | undefined
      readonly batchSize?: number | undefined
    }
  ) {
    const now = yield* clock(options)
    const horizon = now - (options?.graceMs ?? 0)
    const candidates = [...rows.values()].filter((r) =>
      r.status === "in_progress" && r.leaseExpiresAt !== null && r.leaseExpiresAt <= horizon &&
      (r.recovery === "manual" || r.attempt >= r.maxAttempts || options?.includeReexecutable === true)
    )
    const victims = Arr.sort(candidates, byLease).slice(0, options?.batchSize ?? 100)
    const parked = victims.map((row) => ({ scope: row.scope, key: row.key, fence: parkRow(row, now) }))
    if (parked.length > 0) yield* ExecutionMetrics.count("parked", parked.length)
    return parked
  })

  const purge = Effect.fn("IdempotencyStore.purge")(function*(
    options?: IdempotencyStore.At & { readonly batchSize?: number | undefined }
  ) {
    const now = yield* clock(options)
    let total = 0
    for (const [k, row] of rows) {
      if (settled(row.status) && row.expiresAt <= now) {
        rows.delete(k)
        total++
      }
    }
    if (total > 0) yield* ExecutionMetrics.count("purged", total)
    return total
  })

  const journalWrite = Effect.fn("IdempotencyStore.journal")(function*(
    lease: IdempotencyStore.FencedRef,
    entry: IdempotencyStore.At & {
      readonly attempt: number
      readonly outcome: IdempotencyStore.JournalOutcome
      readonly detail: string | null
    }
  ) {
    const now = yield* clock(entry)
    journal.set(lease.fence, {
      scope: lease.scope,
      key: lease.key,
      fence: lease.fence,
      attempt: entry.attempt,
      outcome: entry.outcome,
      detail: parse(entry.detail),
      at: new Date(now)
    })
  })

  const journalOf = (ref: IdempotencyStore.RecordRef) =>
    Effect.sync(() =>
      Arr.sort([...journal.values()].filter((e) => e.scope === ref.scope && e.key === ref.key), byFence)
    ).pipe(Effect.withSpan("IdempotencyStore.journalOf"))

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
    journal: journalWrite,
    journalOf
  }
  return service
})
