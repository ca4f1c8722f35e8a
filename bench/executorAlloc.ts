/**
 * Where one execution allocates: V8's sampling heap profiler (every object, including those the
 * GC collected, one sample per 64 bytes on average) over `count` executions one at a time, after
 * 3,000 untimed ones, and the bytes per execution of each allocating function (its own
 * allocations, not its callees'), largest first. `side` is `service` (`ToolExecutor.execute` over
 * the SQL store on the PostgreSQL server, a handler that returns at once), `async` (the same with a
 * handler that suspends once, so it runs watched by the heartbeat and timeout), `floor` (the same claim
 * and complete statements through the same client, `bench/execution.ts`'s floor) or `memory` (the
 * executor over the memory store, no I/O). With `EXEC_ALLOC_PROFILE=0`, no profiler: wall and
 * process CPU per execution only. The server is `TOOLGATE_PG_URL` (default
 * `postgres://postgres@127.0.0.1:5432/test`), in schema `tg_alloc_<pid>`, dropped at the end.
 *
 *   npx tsc -b bench && npx node bench/dist/executorAlloc.js [count] [side] [rows]
 *
 * Defaults: 5,000 executions, `service`, 40 rows.
 */
import { PgClient } from "@effect/sql-pg"
import { IdempotencyStore, ToolExecutor } from "@toolgate/runtime"
import { Effect, Metric, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { Session } from "node:inspector/promises"
import { callOf, floorCall, handlers, Kit, Touch, TouchAsync } from "./execution.js"

const [count = 5000, side = "service", rows = 40] = [
  Number(process.argv[2] ?? 5000),
  process.argv[3] ?? "service",
  Number(process.argv[4] ?? 40)
]
const schema = `tg_alloc_${process.pid}`
let n = 0
const next = (tool: typeof Touch | typeof TouchAsync) => callOf(tool, `lead-${process.pid}-${n++}`, "c")

interface ProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<ProfileNode>
}

/** Bytes per allocating function (its name, file and line) over the whole profile. */
const bySite = (head: ProfileNode) => {
  const sites = new Map<string, number>()
  const walk = (node: ProfileNode) => {
    const { functionName, lineNumber, url } = node.callFrame
    const site = `${functionName || "(anonymous)"} ${url.split("/").slice(-2).join("/")}:${lineNumber + 1}`
    if (node.selfSize > 0) sites.set(site, (sites.get(site) ?? 0) + node.selfSize)
    for (const child of node.children) walk(child)
  }
  walk(head)
  return sites
}

const main = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const statements = IdempotencyStore.sqlStatements(schema)
  const executor = yield* ToolExecutor.make(Kit, handlers)
    .pipe(Effect.provide(side === "memory" ? IdempotencyStore.layerMemory : IdempotencyStore.layerSql({ schema })))
  const scope = { tenant: "alloc", turn: "t" }
  const one = side === "floor"
    ? Effect.suspend(() => floorCall(sql, statements, "alloc", String(n++)))
    : side === "async"
    ? Effect.suspend(() => executor.execute(next(TouchAsync), { scope }))
    : Effect.suspend(() => executor.execute(next(Touch), { scope }))
  for (let i = 0; i < 3000; i++) yield* one
  const profiled = process.env.EXEC_ALLOC_PROFILE !== "0"
  const session = new Session()
  if (profiled) {
    session.connect()
    yield* Effect.promise(() =>
      session.post("HeapProfiler.startSampling", {
        samplingInterval: 64,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true
      })
    )
  }
  const cpu = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < count; i++) yield* one
  const us = ((performance.now() - t0) * 1000) / count
  const used = process.cpuUsage(cpu)
  if (!profiled) {
    process.stdout.write(
      `${side}: ${count} executions, ${us.toFixed(1)} µs/execution wall, ${
        ((used.user + used.system) / count).toFixed(1)
      } µs CPU\n`
    )
    return
  }
  const { profile } = yield* Effect.promise(() => session.post("HeapProfiler.stopSampling"))
  const sites = bySite(profile.head as unknown as ProfileNode)
  const total = [...sites.values()].reduce((a, b) => a + b, 0)
  process.stdout.write(`${side}: ${count} executions, ${(total / count).toFixed(0)} B/execution sampled\n`)
  for (const [site, bytes] of [...sites].toSorted((a, b) => b[1] - a[1]).slice(0, rows)) {
    process.stdout.write(`${(bytes / count).toFixed(0).padStart(7)} ${site}\n`)
  }
}).pipe(
  Effect.ensuring(
    Effect.ignore(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)))
  ),
  Effect.provide(PgClient.layer({
    url: Redacted.make(process.env.TOOLGATE_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test"),
    maxConnections: 4
  })),
  Effect.provideService(Metric.MetricRegistry, new Map())
)

await Effect.runPromise(main)
