/**
 * Same-process A/B of the executor's CPU per call: two builds of `@toolgate/runtime` (this
 * checkout's, and another built copy given by `EXEC_AB_OTHER`, a path to its `dist/index.js`),
 * each with a handler that returns at once (`sync`) and one that suspends once (`async`), over the
 * memory store (executor and store JS only, no I/O) or the PostgreSQL server (`EXEC_AB_STORE=pg`,
 * `TOOLGATE_PG_URL`, in schema `tg_execab_<pid>`, dropped at the end). Slices of
 * `EXEC_AB_SLICE` s (default 0.5; with `EXEC_AB_CALLS`, of that many calls per fiber instead)
 * rotate over the sides for `EXEC_AB_ROUNDS` rounds (default 5) at each of 1, 8, 32 fibers (after a
 * warm-up of every side: 0.4 s at 8 fibers, then `EXEC_AB_WARM_CALLS` calls one at a time); each
 * side reports calls/s and process CPU (user + system, all threads) per call in µs, and the least
 * and the median of its slices' CPU per call (on a shared host the least slice is the steadiest
 * figure: interference only adds). On PostgreSQL a `floor`
 * side runs the same claim and complete statements through the same client without the executor
 * (as in `bench/execution.ts`). Timings on a shared machine are noisy: compare sides of one run.
 *
 * Run: `npx tsc -b bench && npx node bench/dist/executorCpu.js` (add `--cpu-prof` to profile).
 */
import { PgClient } from "@effect/sql-pg"
import * as Here from "@toolgate/runtime"
import { Effect, Layer, Metric, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { pathToFileURL } from "node:url"
import { callOf, floorCall, handlers, Kit, Touch, TouchAsync } from "./execution.js"
import { median } from "./measure.js"

type Runtime = typeof Here
let n = 0

const next = (tool: typeof Touch | typeof TouchAsync) => callOf(tool, `lead-${process.pid}-${n++}`, "c")

/** The sync and async sides of one runtime build, over its own store layer. */
const sidesOf = (runtime: Runtime, storeLayer: Layer.Layer<Here.IdempotencyStore.IdempotencyStore, unknown, never>) =>
  Effect.gen(function*() {
    const executor = yield* runtime.ToolExecutor.make(Kit, handlers)
    const scope = { tenant: "ab", turn: "t" }
    return {
      sync: () => executor.execute(next(Touch), { scope }),
      async: () => executor.execute(next(TouchAsync), { scope })
    }
  }).pipe(Effect.provide(storeLayer as Layer.Layer<never, unknown, never>))

/**
 * CPU time of the whole machine (every process: this one, the database's, the kernel's), in µs:
 * the busy jiffies of `/proc/stat`'s first line (user, nice, system, irq, softirq, steal), 0 where
 * there is no `/proc/stat`.
 */
const machineCpuUs = (): number => {
  try {
    const fields = readFileSync("/proc/stat", "utf8").split("\n", 1)[0].trim().split(/\s+/).slice(1).map(Number)
    const [user, nice, system, , , irq, softirq, steal] = fields
    return ((user + nice + system + irq + softirq + (steal ?? 0)) * 1_000_000) / 100
  } catch {
    return 0
  }
}

/**
 * One slice of a side: `fibers` fibers calling it for `seconds`, or, with `EXEC_AB_CALLS` set, for that
 * many calls each (no clock read between calls).
 */
const slice = (fibers: number, seconds: number, op: () => Effect.Effect<unknown, unknown>) =>
  Effect.gen(function*() {
    let ops = 0
    const deadline = performance.now() + seconds * 1000
    const calls = Number(process.env.EXEC_AB_CALLS ?? 0)
    const loop = calls > 0
      ? Effect.gen(function*() {
        for (let i = 0; i < calls; i++) {
          ops++
          yield* op()
        }
      })
      : Effect.suspend(() => (ops++, op())).pipe(Effect.repeat({ while: () => performance.now() < deadline }))
    const m0 = machineCpuUs()
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    yield* Effect.all(Array.from({ length: fibers }, () => loop), { concurrency: "unbounded", discard: true })
    const cpu = process.cpuUsage(c0)
    return {
      ops,
      seconds: (performance.now() - t0) / 1000,
      cpuUs: cpu.user + cpu.system,
      machineUs: machineCpuUs() - m0
    }
  })

const main = Effect.gen(function*() {
  const other = process.env.EXEC_AB_OTHER
  const seconds = Number(process.env.EXEC_AB_SLICE ?? 0.5)
  const rounds = Number(process.env.EXEC_AB_ROUNDS ?? 5)
  const pg = process.env.EXEC_AB_STORE === "pg"
  const schema = `tg_execab_${process.pid}`
  const runtimes: Array<[string, Runtime]> = [["branch", Here]]
  if (other !== undefined) runtimes.unshift(["other", (yield* Effect.promise(() => import(other))) as Runtime])
  const sides: Record<string, () => Effect.Effect<unknown, unknown>> = {}
  for (const [name, runtime] of runtimes) {
    // EXEC_AB_GC: group commit settings to compare on PostgreSQL ("off" or an in-flight limit each, comma-separated)
    for (const gc of pg ? (process.env.EXEC_AB_GC ?? "default").split(",") : ["memory"]) {
      // "2": in flight 2; "2:50": and wait at most 50 ms ("2:inf": no bound)
      const [inFlight, wait] = gc.split(":")
      const groupCommit = gc === "off" ? false as const : gc === "default" || gc === "memory" ? undefined : {
        inFlight: Number(inFlight),
        ...(wait === undefined ? {} : { maxWaitMs: wait === "inf" ? Infinity : Number(wait) })
      }
      const store = pg
        ? runtime.IdempotencyStore.layerSql({ schema, groupCommit } as never)
        : runtime.IdempotencyStore.layerMemory
      const made = yield* sidesOf(runtime, store as never)
      const label = gc === "default" || gc === "memory" ? name : `${name} gc=${gc}`
      sides[`${label} sync`] = made.sync
      sides[`${label} async`] = made.async
    }
  }
  if (pg) {
    const sql = yield* SqlClient.SqlClient
    const statements = Here.IdempotencyStore.sqlStatements(schema)
    sides.floor = () => floorCall(sql, statements, "ab", String(n++))
    if (process.env.EXEC_AB_FLOOR_YIELD === "1") {
      sides["floor+yield"] = () => floorCall(sql, statements, "ab", String(n++), Effect.yieldNow)
    }
  }
  if (pg && process.env.EXEC_AB_STORE_SIDE === "1") {
    const store = yield* Effect.provide(
      Effect.gen(function*() {
        return yield* Here.IdempotencyStore.IdempotencyStore
      }),
      Here.IdempotencyStore.layerSql({ schema })
    )
    sides.store = () =>
      Effect.gen(function*() {
        const i = n++
        const key = `tg1:sha256:${createHash("sha256").update(`store-${process.pid}-${i}`).digest("hex")}`
        const claim = yield* store.claim({
          scope: "ab",
          key,
          tool: "Touch",
          fingerprint: `tg1:sha256:${createHash("sha256").update(key).digest("hex")}`,
          arguments: `{"leadId":"lead-${i}"}`,
          owner: `store:${i}`,
          leaseMs: 30_000,
          retentionMs: 86_400_000,
          maxAttempts: 3,
          recovery: "reexecute"
        })
        if (claim._tag !== "Claimed") return yield* Effect.die("not claimed")
        yield* store.complete(claim.lease, { result: "{\"ok\":true}", retentionMs: 86_400_000 })
      })
  }
  const only = process.env.EXEC_AB_ONLY
  const names = Object.keys(sides).filter((k) => only === undefined || k === only)
  // warm-up: every path at 8 fibers, then `EXEC_AB_WARM_CALLS` calls one at a time (default 3000;
  // a lone call's path needs a few thousand calls before V8 has optimized it, see bench/execution.ts)
  const warmCalls = Number(process.env.EXEC_AB_WARM_CALLS ?? 3000)
  for (const name of names) {
    yield* slice(8, 0.4, sides[name])
    for (let i = 0; i < warmCalls; i++) yield* sides[name]()
  }
  for (const fibers of (process.env.EXEC_AB_FIBERS ?? "1,8,32").split(",").map(Number)) {
    const total = Object.fromEntries(names.map((k) => [k, { ops: 0, seconds: 0, cpuUs: 0, machineUs: 0 }]))
    const slices = Object.fromEntries(names.map((k) => [k, [] as Array<number>]))
    for (let round = 0; round < rounds; round++) {
      for (let j = 0; j < names.length; j++) {
        const name = names[(j + round) % names.length]
        const done = yield* slice(fibers, seconds, sides[name])
        total[name].ops += done.ops
        total[name].seconds += done.seconds
        total[name].cpuUs += done.cpuUs
        total[name].machineUs += done.machineUs
        if (done.ops > 0) slices[name].push(done.cpuUs / done.ops)
      }
    }
    for (const name of names) {
      const t = total[name]
      process.stdout.write(
        `${String(fibers).padStart(2)} fibers  ${name.padEnd(20)} ${
          (t.ops / t.seconds).toFixed(0).padStart(7)
        } calls/s  ${(t.cpuUs / t.ops).toFixed(1).padStart(6)} µs CPU/call  ${
          (t.machineUs / t.ops).toFixed(0).padStart(5)
        } µs machine CPU/call  slices: least ${Math.min(...slices[name]).toFixed(1)}, median ${
          median(slices[name]).toFixed(1)
        } µs CPU/call\n`
      )
    }
  }
}).pipe(
  Effect.ensuring(
    process.env.EXEC_AB_STORE === "pg"
      ? Effect.ignore(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`DROP SCHEMA IF EXISTS "tg_execab_${process.pid}" CASCADE`)
      }))
      : Effect.void
  ),
  Effect.provide(
    PgClient.layer({
      url: Redacted.make(process.env.TOOLGATE_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test"),
      maxConnections: 32
    })
  ),
  Effect.provideService(Metric.MetricRegistry, new Map())
)

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await Effect.runPromise(main as Effect.Effect<void, unknown, never>)
}
