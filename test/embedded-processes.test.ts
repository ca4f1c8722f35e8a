/**
 * Several worker processes on one embedded data directory (and the same runs on the PostgreSQL
 * server): real `node` processes (`test/process/turns.mjs`, on the built dist) handle the same 200
 * turns, each delivered to all 4 of them (a queue that redelivers), with handlers that POST to a
 * fake CRM on 127.0.0.1 which counts mutations by (lead, action) and deduplicates by
 * `Idempotency-Key`. Every run starts at a barrier (every worker reachable before any turn).
 *
 * - 4 × 200: every intent mutates the CRM once; a fresh run afterwards replays every call.
 * - The owner SIGKILLed mid-run: another worker takes the directory over, the others finish,
 *   every intent is applied once.
 * - SIGTERM: each worker ends promptly by itself, mid-run (not hung, not killed); a restart finishes the run.
 * - A SIGKILLed owner loses no acknowledged write (a claim, a completion).
 */
import { assert, describe, it } from "@effect/vitest"
import { EmbeddedPostgres, IdempotencyStore } from "@toolgate/runtime"
import { FakeCrm } from "@toolgate/testing"
import { Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as Pglite from "../packages/runtime/test/support/pglite.js"
import * as Postgres from "./support/postgres.js"
import * as Worker from "./support/worker.js"

const pg = await Postgres.probe()

type Store =
  | { readonly kind: "embedded"; readonly dataDir: string }
  | { readonly kind: "postgres"; readonly url: string; readonly schema: string }

const turns = 200

interface Done {
  readonly executed: number
  readonly replayed: number
  readonly redelivered: number
  readonly failed: ReadonlyArray<string>
}

/** Starts `count` turn workers and waits until every one is ready (its store reachable). */
const startWorkers = (count: number, store: Store, crm: string, prefix: string) =>
  Effect.promise(async () => {
    const workers = Array.from(
      { length: count },
      (_, i) => Worker.start("turns.mjs", { mode: "turns", store, crm, prefix, turns, worker: i + 1 })
    )
    await Promise.all(workers.map((w) => w.event("ready")))
    return workers
  })

const go = (workers: ReadonlyArray<Worker.Worker>) => {
  for (const w of workers) w.child.stdin?.write("go\n")
}

const finish = (workers: ReadonlyArray<Worker.Worker>) =>
  Effect.promise(() =>
    Promise.all(workers.map(async (w) => {
      const { code } = await w.exit
      assert.strictEqual(code, 0, w.stderr())
      return (await w.event("done")) as unknown as Done
    }))
  )

/** Every (lead, action) applied exactly once at the CRM: 2 × `turns` mutations, no duplicate. */
const assertAppliedOnce = (crm: FakeCrm.Server) =>
  Effect.gen(function*() {
    const stats = yield* crm.stats
    assert.strictEqual(stats.duplicates, 0)
    assert.strictEqual(stats.mutations, 2 * turns)
    assert.strictEqual(Object.keys(stats.byKey).length, 2 * turns)
    assert.deepStrictEqual([...new Set(Object.values(stats.byKey))], [1])
    return stats
  })

/** The pid the directory's owner published, `undefined` when there is no owner record. */
const ownerPid = (dataDir: string): number | undefined => {
  try {
    return (JSON.parse(fs.readFileSync(`${dataDir}/toolgate-owner.json`, "utf8")) as { pid: number }).pid
  } catch {
    return undefined
  }
}

/** Turns handled so far by these workers. */
const handled = (workers: ReadonlyArray<Worker.Worker>) =>
  workers.reduce((n, w) => n + w.events().filter((e) => e.event === "turn").length, 0)

/** Polls (20 ms) until `predicate` holds; the test's timeout bounds it. */
const until = (predicate: () => boolean) =>
  Effect.promise(() =>
    new Promise<void>((resolve) => {
      const check = () => (predicate() ? resolve() : setTimeout(check, 20))
      check()
    })
  )

/** The worker that owns the directory (embedded), or the first one (server). */
const victimOf = (store: Store, workers: ReadonlyArray<Worker.Worker>): Worker.Worker => {
  if (store.kind === "postgres") return workers[0]
  const pid = ownerPid(store.dataDir)
  const owner = workers.find((w) => w.child.pid === pid)
  assert.isDefined(owner, `the owner ${pid} is one of the workers`)
  return owner!
}

/** A fresh run of every turn by one worker: everything replays, nothing reaches the CRM. */
const replayAll = (store: Store, crm: FakeCrm.Server, prefix: string) =>
  Effect.gen(function*() {
    const before = (yield* crm.stats).requests
    const [again] = yield* startWorkers(1, store, crm.url, prefix)
    go([again])
    const [done] = yield* finish([again])
    assert.deepStrictEqual(done.failed, [])
    assert.strictEqual(done.executed, 0)
    assert.strictEqual(done.replayed, 2 * turns)
    assert.strictEqual((yield* crm.stats).requests, before)
  })

const scenarios = (name: string, makeStore: () => Promise<Store>) => {
  describe(name, () => {
    it.live(
      "4 workers × 200 redelivered turns: every intent mutates the CRM once; a restart replays them all",
      () =>
        Effect.gen(function*() {
          const store = yield* Effect.promise(makeStore)
          const crm = yield* FakeCrm.make()
          const prefix = `all-${Math.random().toString(36).slice(2)}`
          const workers = yield* startWorkers(4, store, crm.url, prefix)
          go(workers)
          const done = yield* finish(workers)
          for (const d of done) assert.deepStrictEqual(d.failed, [])
          // Every call of every delivery got an outcome. An execution whose answer a worker did not
          // see (fenced off under load, or the store's answer cut by a change of owner) is
          // redelivered and then replayed, so `executed` can fall short of 2 × turns; what the
          // CRM saw is the guarantee, asserted below: every intent once.
          const executed = done.reduce((n, d) => n + d.executed, 0)
          assert.isAtMost(executed, 2 * turns)
          assert.strictEqual(executed + done.reduce((n, d) => n + d.replayed, 0), 4 * 2 * turns)
          // the work was shared: more than one process executed calls
          assert.isAbove(done.filter((d) => d.executed > 0).length, 1)
          yield* assertAppliedOnce(crm)
          yield* replayAll(store, crm, prefix)
        }).pipe(Effect.scoped),
      180_000
    )

    it.live(
      "a worker SIGKILLed mid-run (on the embedded store, the owner): the others finish, every intent applied once",
      () =>
        Effect.gen(function*() {
          const store = yield* Effect.promise(makeStore)
          const crm = yield* FakeCrm.make()
          const prefix = `kill-${Math.random().toString(36).slice(2)}`
          const workers = yield* startWorkers(4, store, crm.url, prefix)
          go(workers)
          yield* until(() => handled(workers) >= 60)
          const victim = victimOf(store, workers)
          victim.child.kill("SIGKILL")
          assert.strictEqual((yield* Effect.promise(() => victim.exit)).signal, "SIGKILL")
          const survivors = workers.filter((w) => w !== victim)
          if (store.kind === "embedded") {
            // a survivor owns the directory now
            yield* until(() => survivors.some((w) => w.child.pid === ownerPid(store.dataDir)))
          }
          const done = yield* finish(survivors)
          for (const d of done) assert.deepStrictEqual(d.failed, [])
          assert.isBelow(handled([victim]), turns)
          yield* assertAppliedOnce(crm)
          yield* replayAll(store, crm, prefix)
        }).pipe(Effect.scoped),
      180_000
    )

    it.live(
      "SIGTERM ends each worker promptly, mid-run; a restart finishes the run",
      () =>
        Effect.gen(function*() {
          const store = yield* Effect.promise(makeStore)
          const crm = yield* FakeCrm.make()
          const prefix = `term-${Math.random().toString(36).slice(2)}`
          const workers = yield* startWorkers(4, store, crm.url, prefix)
          go(workers)
          yield* until(() => handled(workers) >= 60)
          const ended = yield* Effect.promise(() =>
            Promise.all(workers.map(async (w) => {
              const sent = performance.now()
              w.child.kill("SIGTERM")
              const exit = await w.exit
              return { ...exit, ms: performance.now() - sent, stderr: w.stderr() }
            }))
          )
          for (const e of ended) {
            // it ended itself (an exit code, not the signal's default action), closing its store
            assert.isNull(e.signal, e.stderr)
            // promptly, not hung: a generous bound (a loaded machine delays any exit); speed is not
            // what this asserts
            assert.isAtMost(e.ms, 10_000, `ended ${Math.round(e.ms)} ms after SIGTERM`)
          }
          assert.isBelow(handled(workers), 4 * turns)
          if (store.kind === "embedded") assert.isUndefined(ownerPid(store.dataDir))
          const restarted = yield* startWorkers(4, store, crm.url, prefix)
          go(restarted)
          const done = yield* finish(restarted)
          for (const d of done) assert.deepStrictEqual(d.failed, [])
          yield* assertAppliedOnce(crm)
          yield* replayAll(store, crm, prefix)
        }).pipe(Effect.scoped),
      180_000
    )
  })
}

describe("a SIGKILLed owner of an embedded data dir", () => {
  const readBack = (dataDir: string, key: string) =>
    Effect.gen(function*() {
      const store = yield* IdempotencyStore.IdempotencyStore
      return Option.getOrThrow(yield* store.read({ scope: "acme", key }))
    }).pipe(
      Effect.provide(IdempotencyStore.layerSql().pipe(Layer.provide(EmbeddedPostgres.layer({ dataDir }))))
    )

  it.live("loses no acknowledged write: the claim of a running call, a completion", () =>
    Effect.gen(function*() {
      const crm = yield* FakeCrm.make()
      const dataDir = yield* Effect.promise(Pglite.freshDir)
      const store = { kind: "embedded", dataDir }
      const claimer = Worker.start("turns.mjs", { mode: "ack", stage: "claim", store, crm: crm.url, prefix: "ack-1" })
      const claimed = yield* Effect.promise(() => claimer.event("claimed"))
      claimer.child.kill("SIGKILL")
      yield* Effect.promise(() => claimer.exit)
      const running = yield* readBack(dataDir, String(claimed.key))
      assert.strictEqual(running.status, "in_progress")
      assert.strictEqual(running.fence.toString(), claimed.fence)

      const completer = Worker.start("turns.mjs", {
        mode: "ack",
        stage: "complete",
        store,
        crm: crm.url,
        prefix: "ack-2"
      })
      const completed = yield* Effect.promise(() => completer.event("completed"))
      completer.child.kill("SIGKILL")
      yield* Effect.promise(() => completer.exit)
      assert.strictEqual(completed.status, "succeeded")
      const record = yield* readBack(dataDir, String(completed.key))
      assert.strictEqual(record.status, "succeeded")
      assert.strictEqual(record.resultText, completed.json)
    }).pipe(Effect.scoped), 120_000)
})

scenarios("4 worker processes on one embedded data dir", async () => ({
  kind: "embedded",
  dataDir: await Pglite.freshDir()
}))

Postgres.describeServer(pg, "4 worker processes on the PostgreSQL server", () => {
  scenarios(
    "the same runs",
    () => Promise.resolve({ kind: "postgres", url: Postgres.url, schema: Postgres.uniqueSchema("tg_turns") })
  )
})
