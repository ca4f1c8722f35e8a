/**
 * How many calls the executor takes to warm up: one call at a time on the PostgreSQL server, in
 * blocks of `WARMUP_BLOCK` calls (default 500) for `WARMUP_BLOCKS` blocks (default 16), a block of
 * the floor (the store's claim and complete statements through the same client, as in
 * `bench/execution.ts`) then a block of the service (`ToolExecutor.execute`, a handler that returns
 * at once), each with its wall time and process CPU (user + system) per call. The first blocks show
 * V8 optimizing each side's code; the execution benchmark warms every side up before it measures
 * (`BENCH_WARM_CALLS`) on what this shows.
 *
 * Run: `npx tsc -b bench && npx node bench/dist/warmup.js` (server: `TOOLGATE_PG_URL`, default
 * `postgres://postgres@127.0.0.1:5432/test`; schema `tg_warmup_<pid>`, dropped at the end).
 */
import { PgClient } from "@effect/sql-pg"
import type { ToolCall } from "@toolgate/core"
import { IdempotencyStore, ToolExecutor } from "@toolgate/runtime"
import { Effect, Layer, Metric, Redacted } from "effect"
import { Toolkit } from "effect/ai"
import { SqlClient } from "effect/sql"
import { floorCall, Touch } from "./execution.js"

const Kit = Toolkit.make(Touch)

const block = Number(process.env.WARMUP_BLOCK ?? 500)
const blocks = Number(process.env.WARMUP_BLOCKS ?? 16)
const schema = `tg_warmup_${process.pid}`
let n = 0

const program = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const statements = IdempotencyStore.sqlStatements(schema)
  const executor = yield* ToolExecutor.make(Kit, {
    Touch: { recovery: "reexecute", run: () => Effect.succeed({ ok: true }) }
  })
  const scope = { tenant: "warmup", turn: "turn" }
  const sides: Record<"floor" | "service", () => Effect.Effect<unknown, unknown>> = {
    floor: () => floorCall(sql, statements, "warmup", String(n++)),
    service: () => {
      const leadId = `lead-${n++}`
      const call: ToolCall.ValidatedToolCall<typeof Touch> = {
        index: 0,
        id: "call",
        name: "Touch",
        tool: Touch,
        params: { leadId },
        arguments: { leadId },
        argumentsText: ""
      }
      return executor.execute(call, { scope })
    }
  }
  process.stdout.write(`block (${block} calls each)  floor µs/call wall, CPU  service µs/call wall, CPU\n`)
  for (let b = 0; b < blocks; b++) {
    const cells: Array<string> = []
    for (const side of ["floor", "service"] as const) {
      const t0 = performance.now()
      const c0 = process.cpuUsage()
      for (let i = 0; i < block; i++) yield* sides[side]()
      const cpu = process.cpuUsage(c0)
      const wall = (performance.now() - t0) * 1000 / block
      cells.push(`${wall.toFixed(0).padStart(6)} ${((cpu.user + cpu.system) / block).toFixed(0).padStart(5)}`)
    }
    process.stdout.write(`${String(b + 1).padStart(5)}  ${cells.join("       ")}\n`)
  }
}).pipe(
  Effect.ensuring(Effect.ignore(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  }))),
  Effect.provide(
    IdempotencyStore.layerSql({ schema }).pipe(
      Layer.provideMerge(
        PgClient.layer({
          url: Redacted.make(process.env.TOOLGATE_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test"),
          maxConnections: 32
        })
      )
    )
  ),
  Effect.provideService(Metric.MetricRegistry, new Map())
)

await Effect.runPromise(program)
