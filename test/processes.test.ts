/**
 * Exactly-once across OS processes on the PostgreSQL server. The workers are real `node`
 * processes running the built `@toolgate/runtime` (`packages/runtime/dist`, from `npx tsc -b`;
 * `npm test` builds first) through `test/process/worker.mjs`; this file runs the same code from
 * source in-process.
 *
 * - 4 processes race the same 100 keys: every handler runs once (counted in a table the handler
 *   writes, like a downstream system would); and again as model steps of 4 calls through
 *   `executeAll`, whose calls are claimed in one statement per step.
 * - Batch claims (`executeAll` steps) racing single claims of the same keys, with a batch worker
 *   SIGKILLed mid-step: every key runs; the survivors run each key at most once between them and
 *   take over the victim's leases (same downstream key) once they expire.
 * - A worker SIGKILLed inside its handler: no second run while its lease lasts; after it expires,
 *   exactly one takeover, with the same downstream key — or `unknown` under `manual` recovery.
 * - A worker SIGKILLed while its shared complete statement (group commit, `idem_complete_many`)
 *   waits for a row lock, having updated the records before it: the statement's completes are
 *   written all or none, and each lease then ends exactly once (replayed, or taken over).
 */
import { assert, layer } from "@effect/vitest"
import { IdempotencyStore as Store, ToolExecutor } from "@toolgate/runtime"
import { ValidatedCall } from "@toolgate/testing"
import { Deferred, Effect, Exit, Fiber, Layer, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Postgres from "./support/postgres.js"
import * as Worker from "./support/worker.js"

const root = fileURLToPath(new URL("..", import.meta.url))

/**
 * The workers run the built dist: fail with a clear message when it is missing. (`npm test` runs
 * `tsc -b` first; modification times are not compared, because an incremental build leaves the
 * output of an unchanged source untouched.)
 */
const staleBuild = (): string | undefined => {
  for (const pkg of ["core", "runtime"]) {
    const src = path.join(root, "packages", pkg, "src")
    const files = fs.readdirSync(src, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"))
    for (const file of files) {
      const built = path.join(root, "packages", pkg, "dist", file.replace(/\.ts$/, ".js"))
      if (!fs.existsSync(built)) {
        return `packages/${pkg}/dist has no build of ${file}: run \`npx tsc -b\` first`
      }
    }
  }
  return undefined
}

const pg = await Postgres.probe()
const schema = Postgres.uniqueSchema("tg_proc")

const RecordVisit = Tool.make("RecordVisit", {
  parameters: Schema.Struct({ leadId: Schema.String }),
  success: Schema.Struct({ visit: Schema.String })
})
const Kit = Toolkit.make(RecordVisit)
const visit = (leadId: string) => ValidatedCall.make(RecordVisit, { leadId })

const start = (config: Record<string, unknown>): Worker.Worker =>
  Worker.start("worker.mjs", { url: Postgres.url, schema, ...config })

const Live = Store.layerSql({ schema }).pipe(
  Layer.provideMerge(Layer.effectDiscard(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`)
    yield* sql.unsafe(
      `CREATE TABLE IF NOT EXISTS "${schema}".runs (lead text NOT NULL, worker int NOT NULL, downstream_key text NOT NULL)`
    )
  }))),
  Layer.provideMerge(Postgres.dropSchemaOnRelease(schema)),
  Layer.provideMerge(Postgres.client(6))
)

Postgres.describeServer(pg, "worker processes on the PostgreSQL server", () => {
  layer(Live, { timeout: "60 seconds", excludeTestServices: true })((it) => {
    it.effect("the built dist exists (the workers run it)", () =>
      Effect.sync(() => {
        const stale = staleBuild()
        assert.isUndefined(stale, stale)
      }))

    it.effect("4 processes race the same 100 keys: each handler runs exactly once", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const turn = `race-${Math.random()}`
        const workers = [1, 2, 3, 4].map((n) => start({ mode: "race", worker: n, keys: 100, turn }))
        yield* Effect.promise(() => Promise.all(workers.map((w) => w.line((l) => l.includes(`"ready"`)))))
        for (const w of workers) w.child.stdin?.end("go\n")
        const codes = yield* Effect.promise(() => Promise.all(workers.map((w) => w.exit.then((e) => e.code))))
        assert.deepStrictEqual(codes, [0, 0, 0, 0])
        const tallies = workers.map((w) =>
          JSON.parse(w.lines.at(-1) ?? "{}") as { executed: number; replayed: number; failed: Array<string> }
        )
        for (const t of tallies) assert.deepStrictEqual(t.failed, [])
        assert.strictEqual(tallies.reduce((n, t) => n + t.executed, 0), 100)
        assert.strictEqual(tallies.reduce((n, t) => n + t.replayed, 0), 300)
        const runs = yield* sql.unsafe<{ lead: string; n: number }>(
          `SELECT lead, count(*)::int AS n FROM "${schema}".runs GROUP BY lead`
        )
        assert.strictEqual(runs.length, 100)
        assert.deepStrictEqual([...new Set(runs.map((r) => r.n))], [1])
        // the work really was shared: more than one process executed handlers
        assert.isAbove(tallies.filter((t) => t.executed > 0).length, 1)
      }), { timeout: 60_000 })

    it.effect(
      "4 processes run the same 100 keys as steps of 4 calls (executeAll, batch claims): each handler once",
      () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const turn = `steps-${Math.random()}`
          const workers = [1, 2, 3, 4].map((n) => start({ mode: "steps", worker: n, keys: 100, turn, prefix: "step" }))
          yield* Effect.promise(() => Promise.all(workers.map((w) => w.line((l) => l.includes(`"ready"`)))))
          for (const w of workers) w.child.stdin?.end("go\n")
          const codes = yield* Effect.promise(() => Promise.all(workers.map((w) => w.exit.then((e) => e.code))))
          assert.deepStrictEqual(codes, [0, 0, 0, 0])
          const tallies = workers.map((w) =>
            JSON.parse(w.lines.at(-1) ?? "{}") as { executed: number; replayed: number; failed: Array<string> }
          )
          for (const t of tallies) assert.deepStrictEqual(t.failed, [])
          assert.strictEqual(tallies.reduce((n, t) => n + t.executed, 0), 100)
          assert.strictEqual(tallies.reduce((n, t) => n + t.replayed, 0), 300)
          const runs = yield* sql.unsafe<{ lead: string; n: number }>(
            `SELECT lead, count(*)::int AS n FROM "${schema}".runs WHERE lead LIKE 'step-%' GROUP BY lead`
          )
          assert.strictEqual(runs.length, 100)
          assert.deepStrictEqual([...new Set(runs.map((r) => r.n))], [1])
          assert.isAbove(tallies.filter((t) => t.executed > 0).length, 1)
        }),
      { timeout: 60_000 }
    )

    it.effect(
      "batch and single claims race the same keys; a batch worker SIGKILLed mid-step: every key runs, survivors once each",
      () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const turn = `mixed-${Math.random()}`
          const prefix = `mixed-${Math.random().toString(36).slice(2)}`
          const common = { keys: 60, turn, prefix }
          const victim = start({ mode: "steps", worker: 9, leaseMs: 1_500, slowMs: 150, ...common })
          const survivors = [
            start({ mode: "steps", worker: 1, ...common }),
            start({ mode: "race", worker: 2, ...common }),
            start({ mode: "race", worker: 3, ...common })
          ]
          const all = [victim, ...survivors]
          yield* Effect.promise(() => Promise.all(all.map((w) => w.line((l) => l.includes(`"ready"`)))))
          for (const w of all) w.child.stdin?.end("go\n")
          // kill the victim once it has run a handler: it holds the leases of its two steps in flight
          const victimRuns = () =>
            sql.unsafe<{ n: number }>(
              `SELECT count(*)::int AS n FROM "${schema}".runs WHERE worker = 9 AND lead LIKE $1`,
              [
                `${prefix}-%`
              ]
            ).pipe(Effect.map((rows) => rows[0].n))
          while ((yield* victimRuns()) < 1) yield* Effect.sleep("5 millis")
          victim.child.kill("SIGKILL")
          assert.strictEqual((yield* Effect.promise(() => victim.exit)).signal, "SIGKILL")
          const codes = yield* Effect.promise(() => Promise.all(survivors.map((w) => w.exit.then((e) => e.code))))
          assert.deepStrictEqual(codes, [0, 0, 0], survivors.map((w) => w.stderr()).join("\n"))
          const tallies = survivors.map((w) =>
            JSON.parse(w.lines.at(-1) ?? "{}") as { executed: number; replayed: number; failed: Array<string> }
          )
          for (const t of tallies) assert.deepStrictEqual(t.failed, [])
          const rows = yield* sql.unsafe<{ lead: string; worker: number; downstream_key: string }>(
            `SELECT lead, worker, downstream_key FROM "${schema}".runs WHERE lead LIKE $1`,
            [`${prefix}-%`]
          )
          const byLead = new Map<string, Array<{ worker: number; downstream_key: string }>>()
          for (const row of rows) byLead.set(row.lead, [...(byLead.get(row.lead) ?? []), row])
          assert.strictEqual(byLead.size, 60)
          let survivorRuns = 0
          for (const [lead, runs] of byLead) {
            const bySurvivors = runs.filter((r) => r.worker !== 9)
            survivorRuns += bySurvivors.length
            assert.isAtMost(bySurvivors.length, 1, `${lead} ran ${bySurvivors.length} times in the survivors`)
            // a second run only takes over the victim's lease: the downstream key it was given
            if (runs.length > 1) assert.strictEqual(new Set(runs.map((r) => r.downstream_key)).size, 1, lead)
          }
          assert.strictEqual(tallies.reduce((n, t) => n + t.executed, 0), survivorRuns)
          assert.strictEqual(tallies.reduce((n, t) => n + t.executed + t.replayed, 0), 3 * 60)
        }),
      { timeout: 60_000 }
    )

    it.effect(
      "a worker SIGKILLed in its handler: no second run before its lease expires, then one takeover with the same downstream key",
      () =>
        Effect.gen(function*() {
          const store = yield* Store.IdempotencyStore
          const turn = `kill-${Math.random()}`
          const leaseMs = 1_500
          const victim = start({ mode: "hang", turn, recovery: "reexecute", leaseMs })
          const inside = JSON.parse(
            yield* Effect.promise(() => victim.line((l) => l.includes(`"inside"`)))
          ) as { key: string; downstreamKey: string; fence: string }
          victim.child.kill("SIGKILL")
          yield* Effect.promise(() => victim.exit)
          const runs: Array<ToolExecutor.HandlerContext> = []
          const make = (waitMs: number) =>
            ToolExecutor.make(Kit, {
              RecordVisit: {
                recovery: "reexecute",
                run: (params, ctx) => Effect.sync(() => (runs.push(ctx), { visit: `${params.leadId}@parent` }))
              }
            }, { leaseMs, waitMs })
          const impatient = yield* make(200)
          const early = yield* Effect.exit(impatient.execute(visit("lead-hang"), { scope: { tenant: "acme", turn } }))
          assert.isTrue(Exit.isFailure(early))
          if (Exit.isFailure(early)) {
            const reason = early.cause.reasons.find((r) => r._tag === "Fail")
            assert.strictEqual(
              reason?._tag === "Fail" ? (reason.error as { _tag: string })._tag : "",
              "ExecutionInProgress"
            )
          }
          assert.strictEqual(runs.length, 0)
          // now wait out the lease: ten callers at once, one takeover
          const patient = yield* make(10_000)
          const outcomes = yield* Effect.all(
            Array.from({ length: 10 }, () => patient.execute(visit("lead-hang"), { scope: { tenant: "acme", turn } })),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(runs.length, 1)
          assert.strictEqual(runs[0].downstreamKey, inside.downstreamKey)
          assert.strictEqual(runs[0].key, inside.key)
          assert.isTrue(runs[0].takeover)
          assert.strictEqual(runs[0].attempt, 2)
          assert.isTrue(runs[0].fence > BigInt(inside.fence))
          assert.strictEqual(outcomes.filter((o) => o._tag === "Executed").length, 1)
          assert.strictEqual(outcomes.filter((o) => o._tag === "Replayed").length, 9)
          const record = Option.getOrThrow(yield* store.read({ scope: "acme", key: inside.key }))
          assert.strictEqual(record.status, "succeeded")
        }),
      { timeout: 30_000 }
    )

    /**
     * A worker SIGKILLed while its shared complete statement waits for a row lock; then the lock is
     * released (the backend, which already has the statement, ends it) or, with `terminate`, its
     * backend is terminated first (the statement rolls back). The statement's records.
     */
    const killedMidComplete = (terminate: boolean) =>
      Effect.gen(function*() {
        const store = yield* Store.IdempotencyStore
        const sql = yield* SqlClient.SqlClient
        const scope = `complete-kill-${Math.random().toString(36).slice(2)}`
        // in key order: k-0 goes alone, k-1…k-8 wait and share a statement, which updates k-1…k-7
        // and then waits for the row lock of k-8
        const keys = Array.from({ length: 9 }, (_, i) => `k-${i}`)
        const leaseMs = 1_000
        const victim = start({ mode: "complete", scope, keys, leaseMs })
        const claimed = yield* Effect.promise(() => victim.event("claimed"))
        const fences = claimed.fences as Record<string, string>
        const locking = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const holder = yield* Effect.forkChild(sql.withTransaction(
          sql.unsafe(`SELECT 1 FROM "${schema}".idem_record WHERE scope = $1 AND idem_key = $2 FOR UPDATE`, [
            scope,
            "k-8"
          ]).pipe(Effect.andThen(Deferred.succeed(locking, undefined)), Effect.andThen(Deferred.await(release)))
        ))
        yield* Deferred.await(locking)
        victim.child.stdin?.end("go\n")
        const sharedStatement = (waiting: boolean) =>
          sql.unsafe<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1
               AND ($2::boolean IS FALSE OR wait_event_type = 'Lock')`,
            [`%"${schema}"."idem_complete_many"%`, waiting]
          )
        for (let i = 0; (yield* sharedStatement(true)).length === 0; i++) {
          if (i > 500) return assert.fail("the shared complete statement never waited for the row lock")
          yield* Effect.sleep("10 millis")
        }
        victim.child.kill("SIGKILL")
        assert.strictEqual((yield* Effect.promise(() => victim.exit)).signal, "SIGKILL")
        if (terminate) {
          for (const { pid } of yield* sharedStatement(true)) {
            yield* sql.unsafe(`SELECT pg_terminate_backend($1)`, [pid])
          }
        }
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        // the victim's backend ends its statement (committed or rolled back) once it has the lock
        for (let i = 0; (yield* sharedStatement(false)).length > 0; i++) {
          if (i > 500) return assert.fail("the victim's shared complete statement never ended")
          yield* Effect.sleep("10 millis")
        }
        const statusOf = (key: string) => Effect.map(store.read({ scope, key }), (r) => Option.getOrThrow(r))
        const first = yield* statusOf("k-0")
        assert.deepStrictEqual([first.status, first.fence.toString()], ["succeeded", fences["k-0"]])
        const shared = yield* Effect.forEach(keys.slice(1), statusOf)
        const statuses = new Set(shared.map((r) => r.status))
        assert.strictEqual(statuses.size, 1, `the shared statement's records: ${[...statuses].join(", ")}`)
        for (const record of shared) {
          assert.strictEqual(record.fence.toString(), fences[record.key], record.key)
          if (record.status === "succeeded") {
            assert.strictEqual(record.resultText, JSON.stringify({ by: victim.child.pid }))
          }
        }
        // once the victim's leases expire, each record ends once: replayed if written, else taken over
        yield* Effect.sleep(`${leaseMs + 100} millis`)
        for (const record of shared) {
          const claim = yield* store.claim({
            scope,
            key: record.key,
            tool: "RecordVisit",
            fingerprint: "fp",
            owner: "parent",
            leaseMs: 60_000,
            retentionMs: 600_000,
            maxAttempts: 3,
            recovery: "reexecute"
          })
          if (record.status === "succeeded") {
            assert.strictEqual(claim._tag, "Existing", record.key)
          } else {
            assert.isTrue(claim._tag === "Claimed" && claim.lease.attempt === 2, record.key)
            if (claim._tag === "Claimed") {
              yield* store.complete(claim.lease, { result: "{}", retentionMs: 600_000 })
            }
          }
        }
        return [...statuses]
      })

    it.effect(
      "a worker SIGKILLed while its shared complete statement waits for a row lock: its completes are written all or none",
      () => Effect.map(killedMidComplete(false), (statuses) => assert.strictEqual(statuses.length, 1)),
      { timeout: 30_000 }
    )

    it.effect(
      "a worker SIGKILLed while its shared complete statement waits, its backend terminated: none is written, each is taken over once",
      () => Effect.map(killedMidComplete(true), (statuses) => assert.deepStrictEqual(statuses, ["in_progress"])),
      { timeout: 30_000 }
    )

    it.effect(
      "a worker SIGKILLed in a manual-recovery handler: after its lease the record is unknown, never re-run",
      () =>
        Effect.gen(function*() {
          const store = yield* Store.IdempotencyStore
          const turn = `kill-manual-${Math.random()}`
          const leaseMs = 1_000
          const victim = start({ mode: "hang", turn, recovery: "manual", leaseMs })
          const inside = JSON.parse(yield* Effect.promise(() => victim.line((l) => l.includes(`"inside"`)))) as {
            key: string
            downstreamKey: string
          }
          victim.child.kill("SIGKILL")
          yield* Effect.promise(() => victim.exit)
          let runs = 0
          const executor = yield* ToolExecutor.make(Kit, {
            RecordVisit: {
              recovery: "manual",
              run: () => Effect.sync(() => ({ visit: `run-${++runs}` }))
            }
          }, { leaseMs, waitMs: 5_000 })
          const exit = yield* Effect.exit(executor.execute(visit("lead-hang"), { scope: { tenant: "acme", turn } }))
          assert.isTrue(Exit.isFailure(exit))
          if (Exit.isFailure(exit)) {
            const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
            const error = reason?._tag === "Fail"
              ? (reason.error as { _tag: string; downstreamKey?: string })
              : undefined
            assert.strictEqual(error?._tag, "OutcomeUnknown")
            assert.strictEqual(error?.downstreamKey, inside.downstreamKey)
          }
          assert.strictEqual(runs, 0)
          assert.strictEqual(Option.getOrThrow(yield* store.read({ scope: "acme", key: inside.key })).status, "unknown")
        }),
      { timeout: 30_000 }
    )
  })
})
