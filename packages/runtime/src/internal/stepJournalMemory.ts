/**
 * The in-memory step journal, for unit tests: the same state machine as the SQL statements over a
 * `Map`, each operation one synchronous step (atomic in its process). Its clock is effect's
 * `Clock` unless an operation passes `now`; fences come from one counter, never reused.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { StoreUnavailable } from "../ExecutionError.js"
import type * as StepJournal from "../StepJournal.js"
import { StepLeaseLost } from "../StepJournal.js"
import { traced } from "./spans.js"
import { checkClaim, checkHeartbeat, claimOn, outputText, readOutput } from "./stepJournalRules.js"
import { clockOf } from "./storeRules.js"

interface Row {
  tenant: string
  turn: string
  step: number
  fingerprint: string
  status: StepJournal.Status
  previous: StepJournal.Status | null
  fence: bigint
  attempt: number
  owner: string | null
  leaseExpiresAt: number | null
  output: string | null
  createdAt: number
  updatedAt: number
  recordedAt: number | null
  expiresAt: number
}

const turnId = (ref: StepJournal.TurnRef): string => `${ref.tenant}\u0000${ref.turn}`

const lost = (lease: StepJournal.FencedStep, operation: StepJournal.StepLeaseLost["operation"]) =>
  new StepLeaseLost({ turn: lease.turn, step: lease.step, fence: lease.fence.toString(), operation })

const unreadable = (operation: "readStep" | "readTurn" | "claimStep") =>
  new StoreUnavailable({ keyHash: null, operation, reason: "UnreadableRow", code: null, retryable: false })

/** @internal */
export const make = Effect.sync(() => {
  /** turn id → step → row */
  const turns = new Map<string, Map<number, Row>>()
  let sequence = 0n

  const rowOf = (ref: StepJournal.StepRef): Row | undefined => turns.get(turnId(ref))?.get(ref.step)

  const toStored = (row: Row, now: number): StepJournal.StoredStep | undefined => {
    const output = row.output === null ? null : readOutput(row.output)
    if (output === undefined) return undefined
    return {
      tenant: row.tenant,
      turn: row.turn,
      step: row.step,
      fence: row.fence,
      fingerprint: row.fingerprint,
      status: row.status,
      previous: row.previous,
      attempt: row.attempt,
      owner: row.owner,
      outputText: row.output,
      output,
      leaseExpiresAt: row.leaseExpiresAt === null ? null : new Date(row.leaseExpiresAt),
      createdAt: new Date(row.createdAt),
      updatedAt: new Date(row.updatedAt),
      recordedAt: row.recordedAt === null ? null : new Date(row.recordedAt),
      expiresAt: new Date(row.expiresAt),
      retryAfterMs: row.leaseExpiresAt === null ? 0 : Math.max(0, row.leaseExpiresAt - now),
      leaseExpired: row.leaseExpiresAt !== null && row.leaseExpiresAt <= now,
      readAt: new Date(now)
    }
  }

  const snapshot = (row: Row, now: number, operation: "readStep" | "readTurn" | "claimStep") => {
    const stored = toStored(row, now)
    return stored === undefined ? Effect.fail(unreadable(operation)) : Effect.succeed(stored)
  }

  const toLease = (row: Row): StepJournal.StepLease => ({
    tenant: row.tenant,
    turn: row.turn,
    step: row.step,
    fence: row.fence,
    previous: row.previous,
    attempt: row.attempt,
    leaseExpiresAt: new Date(row.leaseExpiresAt ?? 0)
  })

  /** The row a fenced write may change: same fence, `in_progress`. */
  const held = (lease: StepJournal.FencedStep): Row | undefined => {
    const row = rowOf(lease)
    return row !== undefined && row.fence === lease.fence && row.status === "in_progress" ? row : undefined
  }

  /** A fenced write that found no held row: confirmed when an identical write of ours landed. */
  const confirmOrLost = (
    lease: StepJournal.FencedStep,
    operation: StepJournal.StepLeaseLost["operation"],
    status: StepJournal.Status
  ) => {
    const row = rowOf(lease)
    return row !== undefined && row.fence === lease.fence && row.status === status
      ? Effect.void
      : Effect.fail(lost(lease, operation))
  }

  const claim = Effect.fnUntraced(function*(req: StepJournal.ClaimRequest) {
    const invalid = checkClaim(req)
    if (invalid !== undefined) return yield* invalid
    const now = yield* clockOf(req)
    let steps = turns.get(turnId(req))
    if (steps === undefined) {
      steps = new Map()
      turns.set(turnId(req), steps)
    }
    const existing = steps.get(req.step)
    const lease = now + req.leaseMs
    if (existing === undefined) {
      const row: Row = {
        tenant: req.tenant,
        turn: req.turn,
        step: req.step,
        fingerprint: req.fingerprint,
        status: "in_progress",
        previous: null,
        fence: ++sequence,
        attempt: 1,
        owner: req.owner,
        leaseExpiresAt: lease,
        output: null,
        createdAt: now,
        updatedAt: now,
        recordedAt: null,
        expiresAt: now + req.retentionMs
      }
      steps.set(req.step, row)
      return { _tag: "Claimed", lease: toLease(row) } as const
    }
    const how = claimOn(existing, req, now)
    if (how === "refuse") return { _tag: "Existing", step: yield* snapshot(existing, now, "claimStep") } as const
    existing.previous = how === "resume" ? existing.previous : existing.status
    existing.attempt = how === "resume" ? existing.attempt : existing.attempt + 1
    existing.status = "in_progress"
    existing.fence = ++sequence
    existing.owner = req.owner
    existing.leaseExpiresAt = lease
    existing.updatedAt = now
    existing.expiresAt = Math.max(existing.expiresAt, now + req.retentionMs)
    return { _tag: "Claimed", lease: toLease(existing) } as const
  }, traced("StepJournal.claim"))

  const record = Effect.fnUntraced(function*(
    lease: StepJournal.FencedStep,
    options: StepJournal.At & { readonly output: StepJournal.StepOutput; readonly retentionMs: number }
  ) {
    const now = yield* clockOf(options)
    const written = outputText(lease, options.output)
    if (!("text" in written)) return yield* written
    const row = held(lease)
    if (row === undefined) return yield* confirmOrLost(lease, "record", "recorded")
    row.status = "recorded"
    row.output = written.text
    row.owner = null
    row.leaseExpiresAt = null
    row.recordedAt = now
    row.updatedAt = now
    row.expiresAt = now + options.retentionMs
  }, traced("StepJournal.record"))

  const release = Effect.fnUntraced(function*(
    lease: StepJournal.FencedStep,
    options?: StepJournal.At
  ) {
    const now = yield* clockOf(options)
    const row = held(lease)
    if (row === undefined) return yield* confirmOrLost(lease, "release", "released")
    row.status = "released"
    row.owner = null
    row.leaseExpiresAt = null
    row.updatedAt = now
  }, traced("StepJournal.release"))

  const heartbeat = Effect.fnUntraced(function*(
    lease: StepJournal.FencedStep,
    options: StepJournal.At & { readonly leaseMs: number }
  ) {
    const invalid = checkHeartbeat(lease, options.leaseMs)
    if (invalid !== undefined) return yield* invalid
    const now = yield* clockOf(options)
    const row = held(lease)
    if (row === undefined) return yield* lost(lease, "heartbeat")
    row.leaseExpiresAt = now + options.leaseMs
    row.updatedAt = now
    return new Date(row.leaseExpiresAt)
  }, traced("StepJournal.heartbeat"))

  const read = Effect.fnUntraced(function*(ref: StepJournal.StepRef, options?: StepJournal.At) {
    const now = yield* clockOf(options)
    const row = rowOf(ref)
    return row === undefined ? Option.none() : Option.some(yield* snapshot(row, now, "readStep"))
  }, traced("StepJournal.read"))

  const steps = Effect.fnUntraced(function*(ref: StepJournal.TurnRef, options?: StepJournal.At) {
    const now = yield* clockOf(options)
    const rows = [...(turns.get(turnId(ref))?.values() ?? [])].toSorted((a, b) => a.step - b.step)
    const out: Array<StepJournal.StoredStep> = []
    for (const row of rows) out.push(yield* snapshot(row, now, "readTurn"))
    return out
  }, traced("StepJournal.steps"))

  const purge = Effect.fnUntraced(function*(options?: StepJournal.At) {
    const now = yield* clockOf(options)
    const doomed = (row: Row) =>
      (row.status !== "in_progress" || (row.leaseExpiresAt !== null && row.leaseExpiresAt <= now)) &&
      row.expiresAt <= now
    let total = 0
    for (const [id, rows] of turns) {
      if ([...rows.values()].every(doomed)) {
        total += rows.size
        turns.delete(id)
      }
    }
    return total
  }, traced("StepJournal.purge"))

  const service: StepJournal.Service = { claim, record, release, heartbeat, read, steps, purge }
  return service
})
