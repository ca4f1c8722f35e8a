/**
 * The operator's calls (`Records`, and the store's `list`, `resolutions` and `purge` under them)
 * on one store layer (run on memory, PGlite and the PostgreSQL server): listing with filters,
 * newest first; finding by key prefix; resolving an `unknown` record as applied (it replays the
 * given result) or not applied (its next delivery runs it), fenced and audited; every refusal
 * (not `unknown`, a stale fence, a concurrent resolution) typed and writing nothing; purging by
 * retention, by age and by scope, never a record in progress or `unknown`, keeping the audit.
 */
import { assert, layer } from "@effect/vitest"
import { IdempotencyStore as Store, Records, ToolExecutor } from "@toolgate/runtime"
import { ValidatedCall } from "@toolgate/testing"
import { Cause, Effect, Exit, type Layer, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

const { IdempotencyStore } = Store

const base = Date.UTC(2031, 0, 1)
const at = (ms: number): Date => new Date(base + ms)

let counter = 0
const tenant = (label: string) => `ops-${label}-${++counter}-${Math.random().toString(36).slice(2, 8)}`
const hex = (n: number) => n.toString(16).padStart(8, "0")
/** A key of 64 hex digits starting with `prefix`. */
const keyWith = (prefix: string) => `tg1:sha256:${prefix}${hex(++counter)}${"0".repeat(56 - prefix.length)}`

const claim = (scope: string, key: string, over: Partial<Store.ClaimRequest> = {}) =>
  Effect.gen(function*() {
    const store = yield* IdempotencyStore
    const claimed = yield* store.claim({
      scope,
      key,
      tool: "create_task",
      fingerprint: "fp",
      arguments: `{"lead":"L-1","title":"Call back"}`,
      owner: `owner-${++counter}`,
      leaseMs: 1_000,
      retentionMs: 60_000,
      maxAttempts: 3,
      recovery: "manual",
      now: at(0),
      ...over
    })
    if (claimed._tag !== "Claimed") return assert.fail("expected a won claim")
    return claimed.lease
  })

/** A record parked `unknown` (its attempt's outcome was lost), at `now`. */
const unknownRecord = (scope: string, key: string, now = 0) =>
  Effect.gen(function*() {
    const store = yield* IdempotencyStore
    const lease = yield* claim(scope, key, { now: at(now) })
    const fence = yield* store.park(lease, {
      error: `{"_tag":"Ambiguous","reason":"ambiguous_failure","detail":"the webhook answered 502"}`,
      now: at(now)
    })
    return { scope, key, fence }
  })

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) return assert.fail("expected a failure")
  const found = Cause.findErrorOption(exit.cause)
  if (Option.isNone(found)) return assert.fail(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return found.value
}

const AssignOwner = Tool.make("assign_owner", {
  parameters: Schema.Struct({ lead: Schema.String, owner_id: Schema.String }),
  success: Schema.Struct({ id: Schema.String })
})
const Kit = Toolkit.make(AssignOwner)

/** An executor of a `manual` tool whose first attempt loses its answer (parked `unknown`); later ones succeed. */
const losingFirstAnswer = (detail: string) =>
  Effect.gen(function*() {
    const counted = { runs: 0 }
    const executor = yield* ToolExecutor.make(Kit, {
      assign_owner: {
        recovery: "manual",
        run: () =>
          Effect.suspend(() =>
            ++counted.runs === 1
              ? Effect.fail(new ToolExecutor.Ambiguous({ detail }))
              : Effect.succeed({ id: `own-${counted.runs}` })
          )
      }
    })
    return { counted, executor }
  })

export const recordsSuite = (name: string, storeLayer: Layer.Layer<Store.IdempotencyStore, unknown>): void =>
  layer(storeLayer, { timeout: "120 seconds", excludeTestServices: true })(name, (it) => {
    it.effect("the record keeps the claiming call's arguments; a takeover writes its own", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const scope = tenant("args")
        const key = keyWith("a1")
        const first = yield* claim(scope, key, { recovery: "reexecute" })
        yield* store.release(first, { error: null, now: at(1) })
        yield* claim(scope, key, { arguments: `{"lead":"L-1","title":"Ring back"}`, now: at(2) })
        const record = Option.getOrThrow(yield* store.read({ scope, key }))
        assert.strictEqual(record.argumentsText, `{"lead":"L-1","title":"Ring back"}`)
        const none = keyWith("a2")
        yield* claim(scope, none, { arguments: null })
        assert.isNull(Option.getOrThrow(yield* store.read({ scope, key: none })).argumentsText)
      }))

    it.effect("list: by scope, state, tool and key prefix, newest change first, bounded", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const scope = tenant("list")
        const k1 = keyWith("b1")
        const k2 = keyWith("b2")
        const k3 = keyWith("b3")
        const done = yield* claim(scope, k1, { now: at(0) })
        yield* store.complete(done, { result: `{"id":"T-1"}`, retentionMs: 60_000, now: at(10) })
        yield* unknownRecord(scope, k2, 20)
        yield* claim(scope, k3, { tool: "assign_owner", now: at(30) })
        const all = yield* store.list({ scope })
        assert.deepStrictEqual(all.map((r) => r.key), [k3, k2, k1])
        assert.deepStrictEqual((yield* store.list({ scope, status: ["unknown"] })).map((r) => r.key), [k2])
        assert.deepStrictEqual(
          (yield* store.list({ scope, status: ["unknown", "succeeded"] })).map((r) => r.key),
          [k2, k1]
        )
        assert.deepStrictEqual((yield* store.list({ scope, tool: "assign_owner" })).map((r) => r.key), [k3])
        assert.deepStrictEqual((yield* store.list({ keyPrefix: k2.slice(0, 21) })).map((r) => r.key), [k2])
        assert.deepStrictEqual((yield* store.list({ scope, limit: 2 })).map((r) => r.key), [k3, k2])
        assert.strictEqual((yield* store.list({ scope, limit: 0 })).length, 1, "a limit below 1 is 1")
        const [record] = yield* store.list({ scope, status: ["succeeded"] })
        assert.strictEqual(record.resultText, `{"id":"T-1"}`)
        assert.strictEqual(record.argumentsText, `{"lead":"L-1","title":"Call back"}`)
      }))

    it.effect("find: a key, a unique prefix of 8+ hex digits; refuses an ambiguous prefix, a missing record, a non-key", () =>
      Effect.gen(function*() {
        const scope = tenant("find")
        const prefix = `c${Math.random().toString(16).slice(2, 9)}`
        const k1 = keyWith(prefix)
        const k2 = keyWith(prefix)
        yield* claim(scope, k1)
        yield* claim(scope, k2)
        assert.strictEqual((yield* Records.find({ key: k1 })).key, k1)
        assert.strictEqual((yield* Records.find({ key: k1.slice(11, 11 + 16).toUpperCase(), scope })).key, k1)
        const ambiguous = failureOf(yield* Effect.exit(Records.find({ key: prefix })))
        assert.strictEqual(ambiguous._tag, "AmbiguousKey")
        const missing = failureOf(yield* Effect.exit(Records.find({ key: keyWith("d0") })))
        assert.strictEqual(missing._tag, "RecordNotFound")
        const inOtherScope = failureOf(yield* Effect.exit(Records.find({ key: k1, scope: "nobody" })))
        assert.strictEqual(inOtherScope._tag, "RecordNotFound")
        for (const bad of ["abc", "tg1:sha256:xyz12345", "tg2:sha256:0123456789"]) {
          const error = failureOf(yield* Effect.exit(Records.find({ key: bad })))
          assert.strictEqual(error._tag, "InvalidRecordRequest")
        }
      }))

    it.effect("resolve applied: the unknown record replays the given result, and the audit says who, when, why and what it held", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const { counted, executor } = yield* losingFirstAnswer("the webhook answered 502")
        const scope = { tenant: tenant("applied"), turn: "lead-1/msg-1" }
        const call = () => ValidatedCall.make(AssignOwner, { lead: "L-1", owner_id: "usr_7" })
        const lost = failureOf(yield* Effect.exit(executor.execute(call(), { scope })))
        assert.strictEqual(lost._tag, "OutcomeUnknown")
        const parked = (yield* store.list({ scope: scope.tenant, status: ["unknown"] }))[0]
        const resolved = yield* Records.resolve(
          { key: parked.key },
          { outcome: { _tag: "Applied", result: `{"id":"own-42"}` }, by: "alice", reason: "the CRM shows owner usr_7" }
        )
        assert.strictEqual(resolved.record.status, "succeeded")
        assert.strictEqual(resolved.record.resultText, `{"id":"own-42"}`)
        assert.strictEqual(resolved.audit.by, "alice")
        assert.strictEqual(resolved.audit.reason, "the CRM shows owner usr_7")
        assert.strictEqual(resolved.audit.fence, parked.fence)
        assert.strictEqual(resolved.audit.status, "succeeded")
        assert.deepStrictEqual(resolved.audit.parkedError, {
          _tag: "Ambiguous",
          reason: "ambiguous_failure",
          detail: "the webhook answered 502"
        })
        const replay = yield* executor.execute(call(), { scope })
        assert.strictEqual(replay._tag, "Replayed")
        assert.deepStrictEqual(replay.value, { id: "own-42" })
        assert.strictEqual(counted.runs, 1)
        const detail = yield* Records.show({ key: parked.key })
        assert.strictEqual(detail.resolutions.length, 1)
        assert.strictEqual(detail.record.argumentsText, `{"lead":"L-1","owner_id":"usr_7"}`)
      }))

    it.effect("resolve not applied: the record is released and its next delivery runs the handler", () =>
      Effect.gen(function*() {
        const { counted, executor } = yield* losingFirstAnswer("connection reset")
        const scope = { tenant: tenant("not-applied"), turn: "lead-2/msg-1" }
        const call = () => ValidatedCall.make(AssignOwner, { lead: "L-2", owner_id: "usr_8" })
        const lost = failureOf(yield* Effect.exit(executor.execute(call(), { scope })))
        assert.strictEqual(lost._tag, "OutcomeUnknown")
        const unknownAgain = failureOf(yield* Effect.exit(executor.execute(call(), { scope })))
        assert.strictEqual(unknownAgain._tag, "OutcomeUnknown", "a manual tool's unknown record waits for a person")
        const resolved = yield* Records.resolve({ key: lost._tag === "OutcomeUnknown" ? lost.keyHash : "" }, {
          outcome: { _tag: "NotApplied" },
          by: "bob",
          reason: "no owner change in the CRM audit log"
        })
        assert.strictEqual(resolved.record.status, "released")
        const next = yield* executor.execute(call(), { scope })
        assert.strictEqual(next._tag, "Executed")
        if (next._tag === "Executed") assert.strictEqual(next.attempt, 2)
        assert.strictEqual(counted.runs, 2)
      }))

    it.effect("resolve refuses: another state (named), a stale fence, bad input; and writes nothing", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const scope = tenant("refuse")
        const settled = keyWith("e1")
        const lease = yield* claim(scope, settled)
        yield* store.complete(lease, { result: "{}", retentionMs: 60_000, now: at(1) })
        const notUnknown = failureOf(
          yield* Effect.exit(Records.resolve({ key: settled }, { outcome: { _tag: "Applied" }, by: "alice" }))
        )
        assert.strictEqual(notUnknown._tag, "RecordNotUnknown")
        if (notUnknown._tag === "RecordNotUnknown") {
          assert.strictEqual(notUnknown.status, "succeeded")
          assert.match(notUnknown.message, /is succeeded, not unknown/)
        }
        const held = keyWith("e2")
        yield* claim(scope, held, { leaseMs: 600_000, now: undefined })
        const inProgress = failureOf(
          yield* Effect.exit(Records.resolve({ key: held }, { outcome: { _tag: "Applied" }, by: "alice" }))
        )
        assert.strictEqual(inProgress._tag === "RecordNotUnknown" ? inProgress.status : "", "in_progress")

        const parked = yield* unknownRecord(scope, keyWith("e3"))
        const stale = failureOf(
          yield* Effect.exit(
            Records.resolve({ key: parked.key }, {
              outcome: { _tag: "Applied" },
              by: "alice",
              fence: parked.fence - 1n
            })
          )
        )
        assert.strictEqual(stale._tag, "RecordChanged")
        if (stale._tag === "RecordChanged") {
          assert.strictEqual(stale.status, "unknown")
          assert.strictEqual(stale.currentFence, parked.fence.toString())
        }
        const bad: ReadonlyArray<readonly [Records.Resolution, string]> = [
          [{ outcome: { _tag: "Applied", result: "{not json" }, by: "alice" }, "result"],
          [{ outcome: { _tag: "NotApplied" }, by: "alice" }, "reason"],
          [{ outcome: { _tag: "NotApplied" }, by: "alice", reason: "  " }, "reason"],
          [{ outcome: { _tag: "Applied" }, by: "" }, "by"],
          [{ outcome: { _tag: "Applied" }, by: "x".repeat(201) }, "by"],
          [{ outcome: { _tag: "Applied" }, by: "alice", reason: "r".repeat(2001) }, "reason"]
        ]
        for (const [resolution, field] of bad) {
          const error = failureOf(yield* Effect.exit(Records.resolve({ key: parked.key }, resolution)))
          assert.strictEqual(error._tag, "InvalidRecordRequest")
          if (error._tag === "InvalidRecordRequest") assert.strictEqual(error.field, field)
        }
        const after = Option.getOrThrow(yield* store.read(parked))
        assert.strictEqual(after.status, "unknown")
        assert.strictEqual(after.fence, parked.fence)
        assert.deepStrictEqual(yield* store.resolutions(parked), [])
      }))

    it.effect("two operators resolve the same record at once: one resolution, the other refused, one audit entry", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const parked = yield* unknownRecord(tenant("race"), keyWith("f1"))
        const exits = yield* Effect.all([
          Effect.exit(Records.resolve({ key: parked.key }, { outcome: { _tag: "Applied" }, by: "alice" })),
          Effect.exit(
            Records.resolve({ key: parked.key }, { outcome: { _tag: "NotApplied" }, by: "bob", reason: "not there" })
          )
        ], { concurrency: "unbounded" })
        assert.strictEqual(exits.filter(Exit.isSuccess).length, 1)
        const refused = failureOf(exits.find(Exit.isFailure)!)
        assert.include(["RecordChanged", "RecordNotUnknown"], refused._tag)
        assert.strictEqual((yield* store.resolutions(parked)).length, 1)
      }))

    it.effect("the store's fenced resolve: a stale fence is LeaseLost and audits nothing", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const parked = yield* unknownRecord(tenant("fenced"), keyWith("f2"))
        const lost = failureOf(
          yield* Effect.exit(
            store.resolve({ ...parked, fence: parked.fence + 1000n }, { _tag: "Released" }, {
              retentionMs: 1000,
              audit: { by: "alice", reason: null }
            })
          )
        )
        assert.strictEqual(lost._tag, "LeaseLost")
        assert.deepStrictEqual(yield* store.resolutions(parked), [])
      }))

    it.effect("purge: settled records past retention, or older than a duration, or of one scope; never in progress or unknown; audits kept", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const a = tenant("purge-a")
        const b = tenant("purge-b")
        const settle = (scope: string, key: string, now: number) =>
          Effect.gen(function*() {
            const lease = yield* claim(scope, key, { now: at(now) })
            yield* store.complete(lease, { result: "{}", retentionMs: 60_000, now: at(now) })
          })
        const old = keyWith("90")
        const fresh = keyWith("91")
        const otherScope = keyWith("92")
        yield* settle(a, old, 0)
        yield* settle(a, fresh, 50_000)
        yield* settle(b, otherScope, 0)
        const parked = yield* unknownRecord(a, keyWith("93"), 0)
        yield* store.resolve(parked, { _tag: "Released" }, { retentionMs: 60_000, audit: { by: "carol", reason: "x" } })
        const held = keyWith("94")
        yield* claim(a, held, { now: at(0), leaseMs: 1 })
        const stillUnknown = yield* unknownRecord(a, keyWith("95"), 0)
        // at 70 s: `old`, `otherScope` and the released record are past their 60 s retention
        const byRetention = yield* store.purge({ now: at(70_000), scope: a })
        assert.strictEqual(byRetention, 2)
        const left = (yield* store.list({ scope: a })).map((r) => r.key).toSorted()
        assert.deepStrictEqual(left, [fresh, held, stillUnknown.key].toSorted())
        assert.isTrue(Option.isSome(yield* store.read({ scope: b, key: otherScope })), "another scope is left alone")
        // by age: settled more than 10 s before 70 s, within its retention
        assert.strictEqual(yield* store.purge({ now: at(70_000), olderThanMs: 10_000, scope: a }), 1)
        assert.strictEqual(yield* store.purge({ now: at(70_000), olderThanMs: 0, scope: a }), 0)
        assert.deepStrictEqual(
          (yield* store.list({ scope: a })).map((r) => r.status).toSorted(),
          ["in_progress", "unknown"]
        )
        assert.strictEqual((yield* store.resolutions(parked)).length, 1, "the audit outlives the record")
        // Records.purge: the same, on the store's clock (the record settled in 2031 is not older than now)
        const recent = keyWith("96")
        const lease = yield* claim(b, recent, { now: undefined })
        yield* store.complete(lease, { result: "{}", retentionMs: 60_000 })
        assert.strictEqual(yield* Records.purge({ olderThanMs: 0, scope: b }), 1)
        assert.isTrue(Option.isNone(yield* store.read({ scope: b, key: recent })))
        const bad = failureOf(yield* Effect.exit(Records.purge({ olderThanMs: -1 })))
        assert.strictEqual(bad._tag, "InvalidRecordRequest")
      }))
  })
