/**
 * The server connection killed (`pg_terminate_backend`) in the middle of a claim and of a
 * completion. To catch the statement in flight, another transaction holds the record's row lock
 * (`SELECT … FOR UPDATE`), so the store's statement waits on it; the test finds the waiting backend
 * in `pg_stat_activity` and terminates it.
 */
import { assert, layer } from "@effect/vitest"
import { IdempotencyKey } from "@toolgate/core"
import { IdempotencyStore as Store, ToolExecutor } from "@toolgate/runtime"
import { ValidatedCall } from "@toolgate/testing"
import { Deferred, Effect, Exit, Fiber, Layer, Option, Schedule, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { SqlClient } from "effect/sql"
import * as Postgres from "../../../test/support/postgres.js"

const { IdempotencyStore } = Store
const pg = await Postgres.probe()
const schema = Postgres.uniqueSchema("tg_fault")
const table = `"${schema}"."idem_record"`

const Ping = Tool.make("Ping", {
  parameters: Schema.Struct({ target: Schema.String }),
  success: Schema.Struct({ pong: Schema.String })
})
const Kit = Toolkit.make(Ping)
const ping = (target: string) => ValidatedCall.make(Ping, { target }, { id: "call_1" })

/** Holds the row lock of `ref` in a transaction until `release` completes. */
const holdRowLock = (ref: Store.RecordRef) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const locked = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const fiber = yield* Effect.forkChild(
      sql.withTransaction(Effect.gen(function*() {
        yield* sql.unsafe(`SELECT 1 FROM ${table} WHERE scope = $1 AND idem_key = $2 FOR UPDATE`, [ref.scope, ref.key])
        yield* Deferred.succeed(locked, undefined)
        yield* Deferred.await(release)
      })),
      { startImmediately: true }
    )
    yield* Deferred.await(locked)
    return { release: Deferred.succeed(release, undefined).pipe(Effect.andThen(Fiber.join(fiber))) }
  })

/** Terminates the backend waiting on a lock while running a statement that contains `marker`. */
const terminateWaiter = (marker: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid()
         AND wait_event_type = 'Lock' AND position($1 in query) > 0`,
      [marker]
    ).pipe(
      Effect.flatMap((found) => found.length > 0 ? Effect.succeed(found) : Effect.fail("not waiting yet" as const)),
      Effect.retry({ schedule: Schedule.spaced("20 millis"), times: 250 })
    )
    yield* sql.unsafe(`SELECT pg_terminate_backend($1)`, [rows[0].pid])
    return rows[0].pid
  })

const claimMarker = `INSERT INTO ${table}`
const completeMarker = `SET status = 'succeeded'`

const request = (ref: Store.RecordRef, owner: string): Store.ClaimRequest => ({
  ...ref,
  tool: "Ping",
  fingerprint: "fp",
  owner,
  leaseMs: 30_000,
  retentionMs: 60_000,
  maxAttempts: 5,
  recovery: "reexecute"
})

const Live = Store.layerSql({ schema }).pipe(
  Layer.provideMerge(Postgres.dropSchemaOnRelease(schema)),
  Layer.provideMerge(Postgres.client(8))
)

Postgres.describeServer(pg, "PostgreSQL server: connection killed mid-statement", () => {
  layer(Live, { timeout: "60 seconds", excludeTestServices: true })((it) => {
    it.effect("mid-claim: a typed, retryable StoreUnavailable; the record is unchanged; the retried claim wins", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = { scope: "acme", key: `tg1:sha256:claim-${Math.random()}` }
        const first = yield* store.claim(request(ref, "w1"))
        if (first._tag !== "Claimed") return assert.fail("setup claim lost")
        yield* store.release(first.lease, { error: null })
        const before = Option.getOrThrow(yield* store.read(ref))
        const lock = yield* holdRowLock(ref)
        const claim = yield* Effect.forkChild(Effect.exit(store.claim(request(ref, "w2"))), { startImmediately: true })
        yield* terminateWaiter(claimMarker)
        const exit = yield* Fiber.join(claim)
        yield* lock.release
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) {
          const error = exit.cause.reasons.find((r) => r._tag === "Fail")
          const e = error?._tag === "Fail" ? error.error : undefined
          assert.strictEqual(e?._tag, "StoreUnavailable")
          if (e?._tag === "StoreUnavailable") {
            assert.isTrue(e.retryable)
            assert.strictEqual(e.operation, "claim")
            assert.strictEqual(e.keyHash, ref.key)
          }
        }
        const after = Option.getOrThrow(yield* store.read(ref))
        assert.strictEqual(after.status, "released")
        assert.strictEqual(after.fence, before.fence)
        assert.strictEqual(after.attempt, 1)
        const retried = yield* store.claim(request(ref, "w2"))
        assert.strictEqual(retried._tag, "Claimed")
        if (retried._tag === "Claimed") {
          assert.strictEqual(retried.lease.kind, "RetryAfterRelease")
          assert.strictEqual(retried.lease.attempt, 2)
        }
      }))

    it.effect("mid-complete: a typed StoreUnavailable; nothing lost (still leased, same fence); the retry completes", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = { scope: "acme", key: `tg1:sha256:complete-${Math.random()}` }
        const claim = yield* store.claim(request(ref, "w1"))
        if (claim._tag !== "Claimed") return assert.fail("setup claim lost")
        const lock = yield* holdRowLock(ref)
        const complete = yield* Effect.forkChild(
          Effect.exit(store.complete(claim.lease, { result: `{"pong":"a"}`, retentionMs: 60_000 })),
          { startImmediately: true }
        )
        yield* terminateWaiter(completeMarker)
        const exit = yield* Fiber.join(complete)
        yield* lock.release
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) {
          const error = exit.cause.reasons.find((r) => r._tag === "Fail")
          assert.strictEqual(
            error?._tag === "Fail" ? (error.error as { _tag: string })._tag : undefined,
            "StoreUnavailable"
          )
        }
        const pending = Option.getOrThrow(yield* store.read(ref))
        assert.strictEqual(pending.status, "in_progress")
        assert.strictEqual(pending.fence, claim.lease.fence)
        yield* store.complete(claim.lease, { result: `{"pong":"a"}`, retentionMs: 60_000 })
        const done = Option.getOrThrow(yield* store.read(ref))
        assert.strictEqual(done.status, "succeeded")
        assert.deepStrictEqual(done.result, { pong: "a" })
        assert.strictEqual(done.attempt, 1)
      }))

    it.effect("through the executor: a killed completion is retried with the same fence; the handler runs once", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        let runs = 0
        const started = yield* Deferred.make<void>()
        const gate = yield* Deferred.make<void>()
        const executor = yield* ToolExecutor.make(Kit, {
          Ping: {
            recovery: "reexecute",
            run: (params) =>
              Deferred.succeed(started, undefined).pipe(
                Effect.andThen(Deferred.await(gate)),
                Effect.andThen(Effect.sync(() => ({ pong: `${params.target}#${++runs}` })))
              )
          }
        })
        const scope = { tenant: "acme", turn: `faults-${Math.random()}` }
        const call = ping("complete-kill")
        const { key } = yield* IdempotencyKey.forCall(call, { scope })
        const running = yield* Effect.forkChild(executor.execute(call, { scope }), { startImmediately: true })
        yield* Deferred.await(started)
        const lock = yield* holdRowLock({ scope: "acme", key })
        yield* Deferred.succeed(gate, undefined)
        yield* terminateWaiter(completeMarker)
        yield* Effect.sleep("100 millis")
        yield* lock.release
        const outcome = yield* Fiber.join(running)
        assert.strictEqual(outcome._tag, "Executed")
        assert.strictEqual(runs, 1)
        const record = Option.getOrThrow(yield* store.read({ scope: "acme", key }))
        assert.strictEqual(record.status, "succeeded")
        assert.strictEqual(record.attempt, 1)
        assert.strictEqual((yield* executor.execute(call, { scope }))._tag, "Replayed")
        assert.strictEqual(runs, 1)
      }))

    it.effect("through the executor: a killed claim is retried by the same owner; the handler runs once", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        let runs = 0
        const executor = yield* ToolExecutor.make(Kit, {
          Ping: { recovery: "reexecute", run: (params) => Effect.sync(() => ({ pong: `${params.target}#${++runs}` })) }
        })
        const scope = { tenant: "acme", turn: `faults-${Math.random()}` }
        const call = ping("claim-kill")
        const { fingerprint, key } = yield* IdempotencyKey.forCall(call, { scope })
        // a released first attempt, so the claim has a row to wait on
        const seed = yield* store.claim({ ...request({ scope: "acme", key }, "seed"), fingerprint })
        if (seed._tag !== "Claimed") return assert.fail("setup claim lost")
        yield* store.release(seed.lease, { error: null })
        const lock = yield* holdRowLock({ scope: "acme", key })
        const running = yield* Effect.forkChild(executor.execute(call, { scope }), { startImmediately: true })
        yield* terminateWaiter(claimMarker)
        yield* Effect.sleep("100 millis")
        yield* lock.release
        const outcome = yield* Fiber.join(running)
        assert.strictEqual(outcome._tag, "Executed")
        if (outcome._tag === "Executed") assert.strictEqual(outcome.attempt, 2)
        assert.strictEqual(runs, 1)
        assert.strictEqual(Option.getOrThrow(yield* store.read({ scope: "acme", key })).status, "succeeded")
      }))
  })
})
