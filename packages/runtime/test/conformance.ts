/**
 * The store conformance suite: the same tests against every `IdempotencyStore` layer (memory,
 * PGlite, the PostgreSQL server). Store-level tests inject "now" (a fixed instant in 2031 plus
 * offsets), so lease and retention maths are deterministic on the database clock too; the
 * executor-level tests at the end run on real time.
 */
import { assert, layer } from "@effect/vitest"
import { ExecutionError, IdempotencyStore as Store, ToolExecutor } from "@toolgate/runtime"
import { ValidatedCall } from "@toolgate/testing"
import { Cause, Deferred, Effect, Exit, Fiber, type Layer, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

import { at, base, fresh, request } from "./storeRequests.js"

const { IdempotencyStore } = Store

const claimed = (claim: Store.Claim): Store.Lease => {
  if (claim._tag !== "Claimed") assert.fail(`expected a won claim, got ${claim.record.status}`)
  return claim.lease
}

const existing = (claim: Store.Claim): Store.StoredRecord => {
  if (claim._tag !== "Existing") assert.fail(`expected a lost claim, got ${claim.lease.kind}`)
  return claim.record
}

const readNow = (ref: Store.RecordRef, ms: number) =>
  Effect.gen(function*() {
    const store = yield* IdempotencyStore
    return Option.getOrThrow(yield* store.read(ref, { now: at(ms) }))
  })

/** The persistent part of a record (what a rejected write must leave unchanged). */
const stateOf = (r: Store.StoredRecord) => ({
  status: r.status,
  fence: r.fence,
  attempt: r.attempt,
  result: r.result,
  error: r.error,
  leaseExpiresAt: r.leaseExpiresAt?.getTime() ?? null,
  expiresAt: r.expiresAt.getTime()
})

const CreateTask = Tool.make("CreateTask", {
  parameters: Schema.Struct({ dealId: Schema.String, title: Schema.String }),
  success: Schema.Struct({ taskId: Schema.String, n: Schema.Int })
})
const Crm = Toolkit.make(CreateTask)

/** A result whose members are not in any sorted order (jsonb would reorder them). */
const Report = Tool.make("Report", {
  parameters: Schema.Struct({ id: Schema.String }),
  success: Schema.Struct({
    zeta: Schema.String,
    alpha: Schema.Number,
    mid: Schema.Struct({ bb: Schema.Int, a: Schema.Array(Schema.String) }),
    b: Schema.Boolean
  })
})
class Rejected extends Schema.TaggedError<Rejected>()("Rejected", { blob: Schema.String }) {}
/** A tool whose failure value can be of any size. */
const Submit = Tool.make("Submit", {
  parameters: Schema.Struct({ id: Schema.String, size: Schema.Int, applied: Schema.Boolean }),
  success: Schema.Struct({ ok: Schema.Boolean }),
  failure: Rejected
})
const Desk = Toolkit.make(Report, Submit)

const deliver = <T extends Tool.Any>(tool: T, params: Tool.Parameters<T>, id = "call_1") =>
  ValidatedCall.make(tool, params as Record<string, unknown>, { id })

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) return assert.fail("expected a failure")
  const found = Cause.findErrorOption(exit.cause)
  if (Option.isNone(found)) return assert.fail(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return found.value
}

const callOf = (args: { dealId: string; title: string }, id: string) => ValidatedCall.make(CreateTask, args, { id })

/**
 * Registers the conformance suite for one store layer. `concurrency` is how many claimants the
 * race tests use; `propertyRuns` how many cases the interleaving property draws.
 */
export const conformance = (
  name: string,
  storeLayer: Layer.Layer<Store.IdempotencyStore, unknown>,
  options: { readonly propertyRuns: number }
): void =>
  layer(storeLayer, { timeout: "120 seconds", excludeTestServices: true })(name, (it) => {
    it.effect("a fresh claim creates one record: fence from the sequence, attempt 1, generation 1", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("fresh")
        const lease = claimed(yield* store.claim(request(ref)))
        assert.strictEqual(lease.kind, "Fresh")
        assert.strictEqual(lease.previous, null)
        assert.strictEqual(lease.attempt, 1)
        assert.strictEqual(lease.generation, 1)
        assert.strictEqual(typeof lease.fence, "bigint")
        assert.strictEqual(lease.leaseExpiresAt.getTime(), base + 1_000)
        const record = yield* readNow(ref, 10)
        assert.strictEqual(record.status, "in_progress")
        assert.strictEqual(record.fence, lease.fence)
        assert.strictEqual(record.retryAfterMs, 990)
        assert.isFalse(record.leaseExpired)
      }))

    it.effect("claim and complete read nothing until they run: built twice and run once, one record, one write", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("lazy")
        let reads = 0
        const counted = new Proxy(request(ref), {
          get: (target, key, receiver) => {
            reads++
            return Reflect.get(target, key, receiver)
          }
        })
        const claim = store.claim(counted)
        store.claim(counted)
        assert.strictEqual(reads, 0)
        const lease = claimed(yield* claim)
        assert.isAbove(reads, 0)
        let optionReads = 0
        const completeOptions = new Proxy({ result: "{\"n\":1}", externalRef: null, retentionMs: 60_000, now: at(5) }, {
          get: (target, key, receiver) => {
            optionReads++
            return Reflect.get(target, key, receiver)
          }
        })
        const complete = store.complete(lease, completeOptions)
        assert.strictEqual(optionReads, 0)
        yield* complete
        assert.isAbove(optionReads, 0)
        assert.strictEqual((yield* readNow(ref, 10)).status, "succeeded")
      }))

    it.effect("30 concurrent claims of one key: exactly one wins, the others read its live lease", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("race")
        const claims = yield* Effect.all(Array.from({ length: 30 }, () => store.claim(request(ref))), {
          concurrency: "unbounded"
        })
        const winners = claims.filter((c) => c._tag === "Claimed")
        assert.strictEqual(winners.length, 1)
        for (const c of claims) {
          if (c._tag === "Existing") {
            assert.strictEqual(c.record.status, "in_progress")
            assert.strictEqual(c.record.fence, claimed(winners[0]).fence)
          }
        }
      }))

    it.effect("complete settles the record; claims then read the stored result; old-fence writes are LeaseLost", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("complete")
        const lease = claimed(yield* store.claim(request(ref)))
        yield* store.complete(lease, {
          result: `{"taskId":"T-1","n":1}`,
          externalRef: "crm-1",
          retentionMs: 60_000,
          now: at(5)
        })
        const record = existing(yield* store.claim(request(ref, { now: at(10) })))
        assert.strictEqual(record.status, "succeeded")
        assert.deepStrictEqual(record.result, { taskId: "T-1", n: 1 })
        assert.strictEqual(record.externalRef, "crm-1")
        assert.strictEqual(record.completedAt?.getTime(), base + 5)
        assert.strictEqual(record.expiresAt.getTime(), base + 60_005)
        const before = stateOf(yield* readNow(ref, 20))
        const lost = yield* Effect.flip(store.heartbeat(lease, { leaseMs: 1_000, now: at(20) }))
        assert.strictEqual(lost._tag, "LeaseLost")
        const lost2 = yield* Effect.flip(store.release(lease, { error: null, now: at(20) }))
        assert.strictEqual(lost2._tag, "LeaseLost")
        assert.deepStrictEqual(stateOf(yield* readNow(ref, 20)), before)
      }))

    it.effect("a stale holder after a takeover: complete, fail, release, heartbeat and park are LeaseLost; nothing changes", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("stale")
        const stale = claimed(yield* store.claim(request(ref)))
        const early = existing(yield* store.claim(request(ref, { now: at(999) })))
        assert.isFalse(early.leaseExpired)
        const taker = claimed(yield* store.claim(request(ref, { now: at(1_000) })))
        assert.strictEqual(taker.kind, "Takeover")
        assert.strictEqual(taker.previous, "in_progress")
        assert.strictEqual(taker.attempt, 2)
        assert.isTrue(taker.fence > stale.fence)
        const before = stateOf(yield* readNow(ref, 1_001))
        const writes = [
          store.complete(stale, { result: `{"taskId":"stale","n":0}`, retentionMs: 60_000, now: at(1_001) }),
          store.fail(stale, { error: `{"_tag":"x"}`, retentionMs: 60_000, now: at(1_001) }),
          store.release(stale, { error: null, now: at(1_001) }),
          store.heartbeat(stale, { leaseMs: 5_000, now: at(1_001) }),
          store.park(stale, { error: null, now: at(1_001) })
        ]
        for (const write of writes) {
          const error = yield* Effect.flip(write)
          assert.strictEqual(error._tag, "LeaseLost")
          if (error._tag === "LeaseLost") assert.strictEqual(error.fence, stale.fence.toString())
        }
        assert.deepStrictEqual(stateOf(yield* readNow(ref, 1_001)), before)
        yield* store.complete(taker, { result: `{"taskId":"T-2","n":2}`, retentionMs: 60_000, now: at(1_002) })
        assert.deepStrictEqual((yield* readNow(ref, 1_003)).result, { taskId: "T-2", n: 2 })
      }))

    it.effect("heartbeat extends the lease on the store clock: no takeover before the new expiry", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("heartbeat")
        const lease = claimed(yield* store.claim(request(ref)))
        const until = yield* store.heartbeat(lease, { leaseMs: 1_000, now: at(800) })
        assert.strictEqual(until.getTime(), base + 1_800)
        const blocked = existing(yield* store.claim(request(ref, { now: at(1_500) })))
        assert.strictEqual(blocked.retryAfterMs, 300)
        assert.strictEqual(claimed(yield* store.claim(request(ref, { now: at(1_800) }))).kind, "Takeover")
      }))

    it.effect("release makes a key claimable again (RetryAfterRelease); maxAttempts caps the attempts", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("release")
        const first = claimed(yield* store.claim(request(ref, { maxAttempts: 2 })))
        yield* store.release(first, { error: `{"_tag":"NotApplied"}`, now: at(1) })
        const second = claimed(yield* store.claim(request(ref, { now: at(2) })))
        assert.strictEqual(second.kind, "RetryAfterRelease")
        assert.strictEqual(second.previous, "released")
        assert.strictEqual(second.attempt, 2)
        yield* store.release(second, { error: `{"_tag":"NotApplied","n":2}`, now: at(3) })
        const done = existing(yield* store.claim(request(ref, { now: at(4) })))
        assert.strictEqual(done.status, "released")
        assert.strictEqual(done.attempt, 2)
        assert.strictEqual(done.maxAttempts, 2)
        assert.deepStrictEqual(done.error, { _tag: "NotApplied", n: 2 })
      }))

    it.effect("a terminal failure is cached: the record stays failed and is never claimable within retention", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("fail")
        const lease = claimed(yield* store.claim(request(ref)))
        yield* store.fail(lease, {
          error: `{"_tag":"ToolFailure","failure":{"reason":"no deal"}}`,
          retentionMs: 60_000,
          now: at(1)
        })
        for (const ms of [2, 5_000, 59_000]) {
          const record = existing(yield* store.claim(request(ref, { now: at(ms) })))
          assert.strictEqual(record.status, "failed")
          assert.deepStrictEqual(record.error, { _tag: "ToolFailure", failure: { reason: "no deal" } })
        }
      }))

    it.effect("another fingerprint never claims: not a live lease, an expired one, a released or an unknown record", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("mismatch")
        const lease = claimed(yield* store.claim(request(ref)))
        assert.strictEqual(existing(yield* store.claim(request(ref, { fingerprint: "fp-2" }))).fingerprint, "fp-1")
        assert.strictEqual(
          existing(yield* store.claim(request(ref, { fingerprint: "fp-2", now: at(5_000) }))).fingerprint,
          "fp-1"
        )
        yield* store.release(lease, { error: null, now: at(5_001) })
        assert.strictEqual(
          existing(yield* store.claim(request(ref, { fingerprint: "fp-2", now: at(5_002) }))).status,
          "released"
        )
        const again = claimed(yield* store.claim(request(ref, { now: at(5_003) })))
        yield* store.park(again, { error: null, now: at(5_004) })
        assert.strictEqual(
          existing(yield* store.claim(request(ref, { fingerprint: "fp-2", now: at(5_005) }))).status,
          "unknown"
        )
      }))

    it.effect("manual recovery: an expired lease is not taken over; parkExpired makes it unknown once; resolve settles it", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("manual")
        const lease = claimed(yield* store.claim(request(ref, { recovery: "manual" })))
        const seen = existing(yield* store.claim(request(ref, { recovery: "manual", now: at(2_000) })))
        assert.strictEqual(seen.status, "in_progress")
        assert.isTrue(seen.leaseExpired)
        assert.isTrue(Option.isNone(yield* store.parkExpired({ ...ref, fence: seen.fence }, { now: at(500) })))
        const parked = yield* store.parkExpired({ ...ref, fence: seen.fence }, { now: at(2_000) })
        assert.isTrue(Option.isSome(parked))
        const fence = Option.getOrThrow(parked)
        assert.isTrue(fence > lease.fence)
        assert.isTrue(Option.isNone(yield* store.parkExpired({ ...ref, fence: seen.fence }, { now: at(2_001) })))
        const unknown = existing(yield* store.claim(request(ref, { recovery: "manual", now: at(2_002) })))
        assert.strictEqual(unknown.status, "unknown")
        assert.strictEqual(unknown.previous, "in_progress")
        const wrong = yield* Effect.flip(
          store.resolve({ ...ref, fence: lease.fence }, { _tag: "Released" }, { retentionMs: 60_000, now: at(2_003) })
        )
        assert.strictEqual(wrong._tag, "LeaseLost")
        yield* store.resolve({ ...ref, fence }, {
          _tag: "Succeeded",
          result: `{"taskId":"found","n":7}`,
          externalRef: "crm-7"
        }, {
          retentionMs: 60_000,
          now: at(2_004)
        })
        const done = yield* readNow(ref, 2_005)
        assert.strictEqual(done.status, "succeeded")
        assert.deepStrictEqual(done.result, { taskId: "found", n: 7 })
        assert.strictEqual(done.externalRef, "crm-7")
        const again = yield* Effect.flip(
          store.resolve({ ...ref, fence }, { _tag: "Released" }, { retentionMs: 60_000, now: at(2_006) })
        )
        assert.strictEqual(again._tag, "LeaseLost")
      }))

    it.effect("an unknown record is taken over under reexecute/reconcile within maxAttempts, never under manual", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const auto = fresh("unknown-auto")
        const lease = claimed(yield* store.claim(request(auto, { maxAttempts: 2 })))
        yield* store.park(lease, { error: `{"_tag":"Ambiguous"}`, now: at(1) })
        const taker = claimed(yield* store.claim(request(auto, { now: at(2) })))
        assert.strictEqual(taker.kind, "Takeover")
        assert.strictEqual(taker.previous, "unknown")
        assert.strictEqual(taker.attempt, 2)
        yield* store.park(taker, { error: null, now: at(3) })
        const exhausted = existing(yield* store.claim(request(auto, { now: at(4) })))
        assert.strictEqual(exhausted.status, "unknown")
        assert.strictEqual(exhausted.attempt, 2)
        const manual = fresh("unknown-manual")
        const m = claimed(yield* store.claim(request(manual, { recovery: "manual" })))
        yield* store.park(m, { error: null, now: at(1) })
        assert.strictEqual(
          existing(yield* store.claim(request(manual, { recovery: "manual", now: at(2) }))).status,
          "unknown"
        )
      }))

    it.effect("retention: a settled record past retention is claimable fresh (attempt 1, generation 2, larger fence)", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("retention")
        const first = claimed(yield* store.claim(request(ref, { retentionMs: 10_000 })))
        yield* store.complete(first, { result: `{"taskId":"a","n":1}`, retentionMs: 10_000, now: at(1) })
        assert.strictEqual(existing(yield* store.claim(request(ref, { now: at(10_000) }))).status, "succeeded")
        const again = claimed(yield* store.claim(request(ref, { fingerprint: "fp-new", now: at(10_001) })))
        assert.strictEqual(again.kind, "FreshAfterRetention")
        assert.strictEqual(again.attempt, 1)
        assert.strictEqual(again.generation, 2)
        assert.isTrue(again.fence > first.fence)
        const record = yield* readNow(ref, 10_002)
        assert.strictEqual(record.fingerprint, "fp-new")
        assert.strictEqual(record.result, null)
        assert.strictEqual(record.createdAt.getTime(), base + 10_001)
      }))

    it.effect("purge deletes settled records past retention only; in-progress and unknown stay; fences are not reused", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const settled = fresh("purge-settled")
        const failedRef = fresh("purge-failed")
        const live = fresh("purge-live")
        const unknown = fresh("purge-unknown")
        const young = fresh("purge-young")
        const far = 10_000_000
        const a = claimed(yield* store.claim(request(settled)))
        yield* store.complete(a, { result: `{"taskId":"a","n":1}`, retentionMs: 1_000, now: at(1) })
        const b = claimed(yield* store.claim(request(failedRef)))
        yield* store.fail(b, { error: "{}", retentionMs: 1_000, now: at(1) })
        claimed(yield* store.claim(request(live, { leaseMs: far * 2 })))
        const u = claimed(yield* store.claim(request(unknown)))
        yield* store.park(u, { error: null, now: at(1) })
        const y = claimed(yield* store.claim(request(young)))
        yield* store.complete(y, { result: `{"taskId":"y","n":1}`, retentionMs: far * 2, now: at(1) })
        const purged = yield* store.purge({ now: at(far), batchSize: 1 })
        assert.isAtLeast(purged, 2)
        assert.isTrue(Option.isNone(yield* store.read(settled)))
        assert.isTrue(Option.isNone(yield* store.read(failedRef)))
        assert.strictEqual((yield* readNow(live, far)).status, "in_progress")
        assert.strictEqual((yield* readNow(unknown, far)).status, "unknown")
        assert.strictEqual((yield* readNow(young, far)).status, "succeeded")
        const reborn = claimed(yield* store.claim(request(settled, { now: at(far + 1) })))
        assert.strictEqual(reborn.kind, "Fresh")
        assert.isTrue(reborn.fence > a.fence)
      }))

    it.effect("the reaper parks abandoned manual or exhausted leases after the grace, and spares the rest", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const t = 20_000_000
        const manual = fresh("reap-manual")
        const exhausted = fresh("reap-exhausted")
        const reexecutable = fresh("reap-reexecute")
        const liveRef = fresh("reap-live")
        claimed(yield* store.claim(request(manual, { recovery: "manual", now: at(t) })))
        claimed(yield* store.claim(request(exhausted, { maxAttempts: 1, now: at(t) })))
        claimed(yield* store.claim(request(reexecutable, { now: at(t) })))
        claimed(yield* store.claim(request(liveRef, { recovery: "manual", leaseMs: 100_000, now: at(t) })))
        const inGrace = yield* store.reap({ graceMs: 5_000, now: at(t + 3_000) })
        assert.notInclude(inGrace.map((r) => r.key), manual.key)
        const parked = (yield* store.reap({ graceMs: 5_000, now: at(t + 6_001) })).map((r) => r.key)
        assert.include(parked, manual.key)
        assert.include(parked, exhausted.key)
        assert.notInclude(parked, reexecutable.key)
        assert.notInclude(parked, liveRef.key)
        assert.strictEqual((yield* readNow(manual, t + 6_002)).status, "unknown")
        assert.strictEqual((yield* readNow(reexecutable, t + 6_002)).status, "in_progress")
        const horizon = (yield* store.reap({ graceMs: 5_000, includeReexecutable: true, now: at(t + 6_003) })).map((
          r
        ) => r.key)
        assert.include(horizon, reexecutable.key)
        yield* store.purge({ now: at(t + 100_000_000) })
        assert.strictEqual((yield* readNow(manual, t + 100_000_001)).status, "unknown")
      }))

    it.effect("resolve Released makes an unknown record claimable again; Failed caches the failure", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("resolve")
        const lease = claimed(yield* store.claim(request(ref, { recovery: "manual" })))
        const fence = yield* store.park(lease, { error: null, now: at(1) })
        yield* store.resolve({ ...ref, fence }, { _tag: "Released" }, { retentionMs: 60_000, now: at(2) })
        const retry = claimed(yield* store.claim(request(ref, { recovery: "manual", now: at(3) })))
        assert.strictEqual(retry.kind, "RetryAfterRelease")
        assert.strictEqual(retry.attempt, 2)
        const fence2 = yield* store.park(retry, { error: null, now: at(4) })
        yield* store.resolve({ ...ref, fence: fence2 }, { _tag: "Failed", error: `{"_tag":"ToolFailure"}` }, {
          retentionMs: 60_000,
          now: at(5)
        })
        assert.strictEqual(existing(yield* store.claim(request(ref, { now: at(6) }))).status, "failed")
      }))

    it.effect("a claim repeated by the same owner resumes it (its response was lost); another owner is refused", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("resume")
        const first = claimed(yield* store.claim(request(ref, { owner: "me" })))
        assert.strictEqual(existing(yield* store.claim(request(ref, { owner: "other", now: at(10) }))).owner, "me")
        const resumed = claimed(yield* store.claim(request(ref, { owner: "me", now: at(10) })))
        assert.strictEqual(resumed.kind, "Fresh")
        assert.strictEqual(resumed.attempt, 1)
        assert.isTrue(resumed.fence > first.fence)
        const lost = yield* Effect.flip(store.heartbeat(first, { leaseMs: 1_000, now: at(11) }))
        assert.strictEqual(lost._tag, "LeaseLost")
      }))

    it.effect("a fenced write repeated by its holder is confirmed, not LeaseLost (its response was lost)", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("confirm")
        const lease = claimed(yield* store.claim(request(ref)))
        yield* store.complete(lease, { result: `{"taskId":"c","n":1}`, retentionMs: 60_000, now: at(1) })
        yield* store.complete(lease, { result: `{"taskId":"c","n":1}`, retentionMs: 60_000, now: at(2) })
        const other = fresh("confirm-release")
        const l2 = claimed(yield* store.claim(request(other)))
        yield* store.release(l2, { error: null, now: at(1) })
        yield* store.release(l2, { error: null, now: at(2) })
        const wrong = yield* Effect.flip(store.fail(l2, { error: "{}", retentionMs: 1, now: at(3) }))
        assert.strictEqual(wrong._tag, "LeaseLost")
      }))

    it.effect("a result above 256 KiB is refused by the store itself (ConstraintError), the record unchanged", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("big")
        const lease = claimed(yield* store.claim(request(ref)))
        const error = yield* Effect.flip(
          store.complete(lease, {
            result: JSON.stringify("x".repeat(Store.maxResultBytes)),
            retentionMs: 1,
            now: at(1)
          })
        )
        assert.strictEqual(error._tag, "StoreUnavailable")
        if (error._tag === "StoreUnavailable") {
          assert.strictEqual(error.reason, "ConstraintError")
          assert.isFalse(error.retryable)
        }
        assert.strictEqual((yield* readNow(ref, 2)).status, "in_progress")
      }))

    it.effect("the journal keeps orphaned outcomes per fence", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("journal")
        const lease = claimed(yield* store.claim(request(ref)))
        yield* store.journal(lease, { attempt: 1, outcome: "lease_lost", detail: `{"taskId":"orphan"}`, now: at(3) })
        const entries = yield* store.journalOf(ref)
        assert.strictEqual(entries.length, 1)
        assert.strictEqual(entries[0].fence, lease.fence)
        assert.strictEqual(entries[0].outcome, "lease_lost")
        assert.deepStrictEqual(entries[0].detail, { taskId: "orphan" })
      }))

    it.effect("claims with an impossible lease, retention or attempt limit are refused before anything is written", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("invalid")
        const bad: ReadonlyArray<readonly [Partial<Store.ClaimRequest>, string]> = [
          [{ leaseMs: 0 }, "leaseMs"],
          [{ leaseMs: -1_000 }, "leaseMs"],
          [{ leaseMs: Number.NaN }, "leaseMs"],
          [{ leaseMs: Number.POSITIVE_INFINITY }, "leaseMs"],
          [{ retentionMs: -1 }, "retentionMs"],
          [{ retentionMs: Number.NaN }, "retentionMs"],
          [{ maxAttempts: 0 }, "maxAttempts"],
          [{ maxAttempts: 1.5 }, "maxAttempts"]
        ]
        for (const [over, field] of bad) {
          const error = yield* Effect.flip(store.claim(request(ref, over)))
          assert.strictEqual(error._tag, "InvalidStoreRequest")
          if (error._tag === "InvalidStoreRequest") {
            assert.strictEqual(error.field, field)
            assert.strictEqual(error.operation, "claim")
            assert.strictEqual(error.keyHash, ref.key)
          }
        }
        assert.isTrue(Option.isNone(yield* store.read(ref)))
        // a lease of 0 ms would be expired when granted: the next duplicate would take it over
        const lease = claimed(yield* store.claim(request(ref)))
        const before = stateOf(yield* readNow(ref, 10))
        for (const leaseMs of [0, -5, Number.NaN]) {
          const error = yield* Effect.flip(store.heartbeat(lease, { leaseMs, now: at(10) }))
          assert.strictEqual(error._tag, "InvalidStoreRequest")
        }
        assert.deepStrictEqual(stateOf(yield* readNow(ref, 10)), before)
        assert.strictEqual(existing(yield* store.claim(request(ref, { now: at(10) }))).status, "in_progress")
      }))

    it.effect("a stored result is returned byte for byte: member order, spacing, escapes and numbers as written", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const texts = [
          `{"zeta":1,"alpha":{"bb":2,"a":[3,{"y":1,"x":2}]},"mid":"é ☃ \u2028 \u0041 \ud83d\ude00"}`,
          `{ "b" : 1.50 , "a" : 12345678901234567890 , "c" : 1e2 }`,
          `[{"k":"dup","k":"last"},-0,0.1]`
        ]
        for (const text of texts) {
          const ref = fresh("bytes")
          const lease = claimed(yield* store.claim(request(ref)))
          yield* store.complete(lease, { result: text, retentionMs: 60_000, now: at(1) })
          const replay = existing(yield* store.claim(request(ref, { now: at(2) })))
          assert.strictEqual(replay.resultText, text)
          assert.deepStrictEqual(replay.result, JSON.parse(text))
          assert.strictEqual((yield* readNow(ref, 3)).resultText, text)
        }
        const ref = fresh("bytes-resolve")
        const lease = claimed(yield* store.claim(request(ref)))
        const fence = yield* store.park(lease, { error: null, now: at(1) })
        yield* store.resolve({ ...ref, fence }, { _tag: "Succeeded", result: texts[0] }, {
          retentionMs: 60_000,
          now: at(2)
        })
        assert.strictEqual((yield* readNow(ref, 3)).resultText, texts[0])
      }))

    it.effect("errors and journal details are bounded like results: at 256 KiB accepted, above refused", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const pad = (bytes: number) => {
          const shell = JSON.stringify({ _tag: "Unrecognized", pad: "" })
          return JSON.stringify({ _tag: "Unrecognized", pad: "a".repeat(bytes - shell.length) })
        }
        const atLimit = pad(Store.maxResultBytes)
        assert.strictEqual(Buffer.byteLength(atLimit, "utf8"), Store.maxResultBytes)
        // more bytes than characters: the limit is in UTF-8 bytes
        const over = JSON.stringify("é".repeat(Store.maxResultBytes / 2))
        assert.isBelow(over.length, Store.maxResultBytes)
        const refused = (effect: Effect.Effect<unknown, { readonly _tag: string }>) =>
          Effect.gen(function*() {
            const error = yield* Effect.flip(effect)
            assert.strictEqual(error._tag, "StoreUnavailable")
            if (error._tag === "StoreUnavailable") {
              const e = error as ExecutionError.StoreUnavailable
              assert.strictEqual(e.reason, "ConstraintError")
              assert.isFalse(e.retryable)
            }
          })
        const ref = fresh("bounded")
        const lease = claimed(yield* store.claim(request(ref)))
        yield* refused(store.fail(lease, { error: over, retentionMs: 60_000, now: at(1) }))
        yield* refused(store.release(lease, { error: over, now: at(1) }))
        yield* refused(store.park(lease, { error: over, now: at(1) }))
        yield* refused(store.journal(lease, { attempt: 1, outcome: "lease_lost", detail: over, now: at(1) }))
        assert.strictEqual((yield* readNow(ref, 2)).status, "in_progress")
        yield* store.journal(lease, { attempt: 1, outcome: "lease_lost", detail: atLimit, now: at(1) })
        yield* store.fail(lease, { error: atLimit, retentionMs: 60_000, now: at(2) })
        const failed = yield* readNow(ref, 3)
        assert.strictEqual(failed.status, "failed")
        assert.deepStrictEqual(failed.error, JSON.parse(atLimit))
        const other = fresh("bounded-resolve")
        const fence = yield* store.park(claimed(yield* store.claim(request(other))), { error: null, now: at(1) })
        yield* refused(
          store.resolve({ ...other, fence }, { _tag: "Failed", error: over }, { retentionMs: 1, now: at(2) })
        )
        assert.strictEqual((yield* readNow(other, 3)).status, "unknown")
      }))

    it.effect.prop(
      "any group of concurrent claimants, at any instants within the lease: exactly one winner",
      {
        claimants: Schema.Int.check(Schema.isBetween({ minimum: 2, maximum: 24 })),
        offsets: Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 999 }))),
        recovery: Schema.Literals(["reexecute", "reconcile", "manual"])
      },
      ({ claimants, offsets, recovery }) =>
        Effect.gen(function*() {
          const store = yield* IdempotencyStore
          const ref = fresh("prop")
          const claims = yield* Effect.all(
            Array.from(
              { length: claimants },
              (_, i) =>
                store.claim(request(ref, { recovery, now: at(offsets.length === 0 ? 0 : offsets[i % offsets.length]) }))
            ),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(claims.filter((c) => c._tag === "Claimed").length, 1)
        }),
      { arbitrary: { runs: options.propertyRuns } }
    )

    it.effect("200 fibers race one key through the executor: the handler runs once, every caller gets its result", () =>
      Effect.gen(function*() {
        let runs = 0
        const executor = yield* ToolExecutor.make(Crm, {
          CreateTask: {
            recovery: "reexecute",
            run: (params) =>
              Effect.sleep("20 millis").pipe(Effect.as({ taskId: `task-${params.dealId}-${++runs}`, n: runs }))
          }
        }, { waitMs: 20_000 })
        const scope = { tenant: "acme", turn: `race-${Math.random()}` }
        const outcomes = yield* Effect.all(
          Array.from(
            { length: 200 },
            (_, i) =>
              executor.execute(callOf({ dealId: "D-1", title: "call" }, `call_${i}`), { scope })
          ),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(runs, 1)
        assert.strictEqual(outcomes.filter((o) => o._tag === "Executed").length, 1)
        assert.strictEqual(outcomes.filter((o) => o._tag === "Replayed").length, 199)
        for (const o of outcomes) assert.deepStrictEqual(o.value, { taskId: "task-D-1-1", n: 1 })
      }), { timeout: 60_000 })

    it.effect(
      "executor: a holder whose lease was taken over gets LeaseLost on complete; the record keeps the taker's result",
      () =>
        Effect.gen(function*() {
          const store = yield* IdempotencyStore
          const gate = yield* Deferred.make<void>()
          const started = yield* Deferred.make<void>()
          let runs = 0
          const keys: Array<string> = []
          // the holder is cut off from the store: its heartbeats fail, so its lease lapses
          const partitioned: Store.IdempotencyStore["Service"] = {
            ...store,
            heartbeat: (lease) =>
              Effect.fail(
                new ExecutionError.StoreUnavailable({
                  keyHash: lease.key,
                  operation: "heartbeat",
                  reason: "ConnectionError",
                  code: null,
                  retryable: true
                })
              )
          }
          const executor = yield* ToolExecutor.make(Crm, {
            CreateTask: {
              recovery: "reexecute",
              run: (_, ctx) =>
                Effect.gen(function*() {
                  const n = ++runs
                  keys.push(ctx.downstreamKey)
                  if (n === 1) {
                    yield* Deferred.succeed(started, undefined)
                    yield* Deferred.await(gate)
                  }
                  return { taskId: `run-${n}`, n }
                })
            }
          }, { leaseMs: 150 }).pipe(Effect.provideService(IdempotencyStore, partitioned))
          const scope = { tenant: "acme", turn: `stale-${Math.random()}` }
          const call = callOf({ dealId: "D-9", title: "stale" }, "call_a")
          const slow = yield* Effect.forkChild(Effect.exit(executor.execute(call, { scope })), {
            startImmediately: true
          })
          yield* Deferred.await(started)
          yield* Effect.sleep("250 millis")
          const taker = yield* executor.execute({ ...call, id: "call_b" }, { scope })
          assert.strictEqual(taker._tag, "Executed")
          if (taker._tag === "Executed") {
            assert.strictEqual(taker.attempt, 2)
          }
          yield* Deferred.succeed(gate, undefined)
          const stale = yield* Fiber.join(slow)
          assert.isTrue(Exit.isFailure(stale))
          if (Exit.isFailure(stale)) {
            const error = stale.cause.reasons.find((r) =>
              r._tag === "Fail"
            )
            assert.strictEqual(error?._tag === "Fail" ? (error.error as { _tag: string })._tag : undefined, "LeaseLost")
          }
          assert.strictEqual(runs, 2)
          assert.strictEqual(keys[0], keys[1])
          const replay = yield* executor.execute({ ...call, id: "call_c" }, { scope })
          assert.strictEqual(replay._tag, "Replayed")
          assert.deepStrictEqual(replay.value, { taskId: "run-2", n: 2 })
          if (replay._tag === "Replayed") {
            const journal = yield* store.journalOf({ scope: "acme", key: replay.key })
            assert.strictEqual(journal.length, 1)
            assert.strictEqual(journal[0].outcome, "lease_lost")
            assert.deepStrictEqual(journal[0].detail, { taskId: "run-1", n: 1 })
          }
        }),
      { timeout: 30_000 }
    )

    it.effect("executor: a replay returns the result's JSON text byte for byte as the execution produced it", () =>
      Effect.gen(function*() {
        let runs = 0
        const executor = yield* ToolExecutor.make(Desk, {
          Report: {
            recovery: "reexecute",
            run: (params) =>
              Effect.sync(() => ({
                zeta: `z-${params.id}-${++runs} é ☃ \u2028`,
                alpha: 1.5e-7,
                mid: { bb: 2, a: ["y", "x"] },
                b: true
              }))
          },
          Submit: { run: () => Effect.succeed({ ok: true }) }
        })
        const scope = { tenant: "acme", turn: `bytes-${Math.random()}` }
        const first = yield* executor.execute(deliver(Report, { id: "r1" }), { scope })
        const replay = yield* executor.execute(deliver(Report, { id: "r1" }, "call_2"), { scope })
        assert.strictEqual(first._tag, "Executed")
        assert.strictEqual(replay._tag, "Replayed")
        assert.strictEqual(runs, 1)
        assert.strictEqual(first.json, JSON.stringify(first.encoded))
        assert.strictEqual(replay.json, first.json)
        assert.strictEqual(JSON.stringify(replay.encoded), first.json)
        assert.deepStrictEqual(Object.keys(replay.encoded as object), ["zeta", "alpha", "mid", "b"])
        assert.deepStrictEqual(replay.value, first.value)
      }))

    it.effect("executor: options are validated at construction (a 0 ms lease would let a duplicate take over; waits and timeouts must be finite and not negative)", () =>
      Effect.gen(function*() {
        const handlers = { CreateTask: { recovery: "reexecute" as const, run: () => Effect.die("never runs") } }
        const bad: ReadonlyArray<readonly [ToolExecutor.Options, string]> = [
          [{ leaseMs: 0 }, "leaseMs"],
          [{ leaseMs: -30_000 }, "leaseMs"],
          [{ leaseMs: 99 }, "leaseMs"],
          [{ leaseMs: 1_000, heartbeatMs: 1_000 }, "heartbeatMs"],
          [{ leaseMs: 1_000, heartbeatMs: 5_000 }, "heartbeatMs"],
          [{ leaseMs: 1_000, heartbeatMs: 0 }, "heartbeatMs"],
          [{ waitMs: -1 }, "waitMs"],
          [{ waitMs: Number.NaN }, "waitMs"],
          [{ waitMs: Number.POSITIVE_INFINITY }, "waitMs"],
          [{ timeoutMs: -1 }, "timeoutMs"]
        ]
        for (const [given, option] of bad) {
          const error = yield* Effect.flip(ToolExecutor.make(Crm, handlers, given))
          assert.strictEqual(error._tag, "InvalidExecutorOptions")
          assert.strictEqual(error.option, option)
        }
        const executor = yield* ToolExecutor.make(Crm, {
          CreateTask: { recovery: "reexecute", run: () => Effect.succeed({ taskId: "t", n: 1 }) }
        }, { leaseMs: 100, heartbeatMs: 50 })
        const outcome = yield* executor.execute(callOf({ dealId: "D-v", title: "valid" }, "call_v"), {
          scope: { tenant: "acme", turn: `valid-${Math.random()}` }
        })
        assert.strictEqual(outcome._tag, "Executed")
      }))

    it.effect(
      "executor: a failure value over the limit is bounded — terminal: ResultTooLarge, replayed; released: omitted",
      () =>
        Effect.gen(function*() {
          const store = yield* IdempotencyStore
          let runs = 0
          const executor = yield* ToolExecutor.make(Desk, {
            Report: { run: () => Effect.die("unused") },
            Submit: {
              recovery: "reexecute",
              maxAttempts: 2,
              classify: () => "applied",
              run: (params) => {
                runs++
                return Effect.fail(new Rejected({ blob: "é".repeat(params.size) }))
              }
            }
          })
          const scope = { tenant: "acme", turn: `bounded-${Math.random()}` }
          // 1 MiB of UTF-8 in the failure value (the size the issue saw stored whole)
          const big = deliver(Submit, { id: "s1", size: 512 * 1024, applied: true })
          const first = failureOf(yield* Effect.exit(executor.execute(big, { scope })))
          assert.strictEqual(first._tag, "ResultTooLarge")
          if (first._tag === "ResultTooLarge") {
            assert.strictEqual(first.part, "failure")
            assert.isAbove(first.bytes, 1024 * 1024)
            assert.isFalse(first.replayed)
            const record = Option.getOrThrow(yield* store.read({ scope: "acme", key: first.keyHash }))
            assert.strictEqual(record.status, "failed")
            assert.deepStrictEqual(record.error, {
              _tag: "ResultTooLarge",
              part: "failure",
              bytes: first.bytes,
              maxBytes: first.maxBytes
            })
          }
          const replay = failureOf(yield* Effect.exit(executor.execute(big, { scope })))
          assert.isTrue(replay._tag === "ResultTooLarge" && replay.replayed && replay.part === "failure")
          assert.strictEqual(runs, 1)
          // a small terminal failure is stored whole and replayed decoded
          const small = deliver(Submit, { id: "s2", size: 3, applied: true })
          yield* Effect.exit(executor.execute(small, { scope }))
          const smallReplay = failureOf(yield* Effect.exit(executor.execute(small, { scope })))
          assert.isTrue(smallReplay._tag === "ToolExecutionFailed" && smallReplay.replayed)
          if (smallReplay._tag === "ToolExecutionFailed") {
            assert.strictEqual((smallReplay.failure as Rejected).blob, "ééé")
          }

          const released = yield* ToolExecutor.make(Desk, {
            Report: {
              run: () => Effect.die("unused")
            },
            Submit: {
              recovery: "reexecute",
              maxAttempts: 1,
              classify: () => "not_applied",
              run: (params) => Effect.fail(new Rejected({ blob: "x".repeat(params.size) }))
            }
          })
          const notApplied = deliver(Submit, { id: "s3", size: 300_000, applied: false })
          const failed = failureOf(yield* Effect.exit(released.execute(notApplied, { scope })))
          assert.isTrue(failed._tag === "ToolExecutionFailed" && failed.classification === "not_applied")
          if (failed._tag === "ToolExecutionFailed") {
            assert.strictEqual((failed.failure as Rejected).blob.length, 300_000)
          }
          const exhausted = failureOf(yield* Effect.exit(released.execute(notApplied, { scope })))
          assert.strictEqual(exhausted._tag, "AttemptsExhausted")
          if (exhausted._tag === "AttemptsExhausted") {
            const last = exhausted.lastError
            assert.strictEqual(last?._tag, "NotApplied")
            if (last?._tag === "NotApplied") {
              assert.strictEqual(last.failure, null)
              assert.isAbove(last.omittedBytes ?? 0, Store.maxResultBytes)
              assert.strictEqual(last.detail, "the tool reported a failure")
            }
          }
        }),
      { timeout: 30_000 }
    )
  })
