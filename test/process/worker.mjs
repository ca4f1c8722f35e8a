/**
 * A worker process for `test/processes.test.ts`: runs the built `@toolgate/runtime` (dist) against
 * the PostgreSQL server. Reads one JSON argument:
 *
 * - `{ mode: "race", url, schema, worker, keys, turn }`: executes `RecordVisit` for keys
 *   0..keys-1 in a shuffled order, 8 at a time, once the parent writes a line to its stdin (it
 *   prints `{ event: "ready" }` when connected); the handler inserts one row per run into
 *   `<schema>.runs` (the "downstream"), so the parent can count runs across processes. Prints one
 *   JSON line `{ executed, replayed, failed }`.
 * - `{ mode: "steps", …, prefix }`: keys `<prefix>-i` as model steps of 4 calls through `executeAll` (each
 *   step's calls claimed in one statement), two steps at a time.
 * - In both: `leaseMs` (the executor's lease) and `slowMs` (the handler's extra sleep) when given.
 * - `{ mode: "hang", url, schema, turn, recovery, leaseMs }`: executes one call whose handler
 *   prints `{ event: "inside", key, downstreamKey, fence }` and never returns, to be SIGKILLed.
 * - `{ mode: "complete", url, schema, scope, keys, leaseMs }`: claims each of `keys` in `scope` and
 *   prints `{ event: "claimed", fences }`; once the parent writes a line to its stdin, completes
 *   them all at once (group commit: the first goes alone, the others wait and share a statement)
 *   and prints `{ event: "completed", answers }`.
 */
import { PgClient } from "@effect/sql-pg"
import { IdempotencyStore, ToolExecutor } from "@toolgate/runtime"
import { Effect, Layer, Redacted, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { SqlClient } from "effect/sql"

const config = JSON.parse(process.argv[2])

const RecordVisit = Tool.make("RecordVisit", {
  parameters: Schema.Struct({ leadId: Schema.String }),
  success: Schema.Struct({ visit: Schema.String })
})
const Kit = Toolkit.make(RecordVisit)

const callOf = (leadId) => ({
  index: 0,
  id: `call_${process.pid}_${leadId}`,
  name: "RecordVisit",
  tool: RecordVisit,
  params: { leadId },
  arguments: { leadId },
  argumentsText: JSON.stringify({ leadId })
})

const Sql = PgClient.layer({ url: Redacted.make(config.url), maxConnections: 4 })
const Live = IdempotencyStore.layerSql({ schema: config.schema }).pipe(Layer.provideMerge(Sql))

const race = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const executor = yield* ToolExecutor.make(Kit, {
    RecordVisit: {
      recovery: "reexecute",
      run: (params, ctx) =>
        Effect.gen(function*() {
          yield* Effect.sleep(`${(config.slowMs ?? 0) + 2 + Math.floor(Math.random() * 6)} millis`)
          yield* sql.unsafe(`INSERT INTO "${config.schema}".runs (lead, worker, downstream_key) VALUES ($1, $2, $3)`, [
            params.leadId,
            config.worker,
            ctx.downstreamKey
          ])
          return { visit: `${params.leadId}@${config.worker}` }
        }).pipe(Effect.orDie)
    }
  }, { waitMs: 30_000, ...(config.leaseMs === undefined ? {} : { leaseMs: config.leaseMs }) })
  // A barrier: the parent says go once every worker is connected, so the race is a race and not
  // a relay (a worker that started late would find every key done).
  yield* sql`SELECT 1`
  process.stdout.write(`${JSON.stringify({ event: "ready" })}\n`)
  yield* Effect.callback((resume) => {
    process.stdin.once("data", () => resume(Effect.void))
  })
  const order = Array.from({ length: config.keys }, (_, i) => `${config.prefix ?? "lead"}-${i}`)
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[order[i], order[j]] = [order[j], order[i]]
  }
  const scope = { tenant: "acme", turn: config.turn }
  const steps = []
  for (let i = 0; i < order.length; i += 4) steps.push(order.slice(i, i + 4).map(callOf))
  const results = config.mode === "steps"
    ? (yield* Effect.forEach(steps, (calls) => executor.executeAll(calls, { scope }), { concurrency: 2 })).flat()
    : yield* Effect.forEach(
      order,
      (leadId) => Effect.result(executor.execute(callOf(leadId), { scope })),
      { concurrency: 8 }
    )
  const tally = { executed: 0, replayed: 0, failed: [] }
  for (const r of results) {
    if (r._tag === "Failure") tally.failed.push(r.failure._tag)
    else if (r.success._tag === "Executed") tally.executed++
    else tally.replayed++
  }
  process.stdout.write(`${JSON.stringify(tally)}\n`)
})

const hang = Effect.gen(function*() {
  const executor = yield* ToolExecutor.make(Kit, {
    RecordVisit: {
      recovery: config.recovery,
      run: (_, ctx) =>
        Effect.sync(() => {
          process.stdout.write(
            `${
              JSON.stringify({
                event: "inside",
                key: ctx.key,
                downstreamKey: ctx.downstreamKey,
                fence: ctx.fence.toString()
              })
            }\n`
          )
        }).pipe(Effect.andThen(Effect.never))
    }
  }, { leaseMs: config.leaseMs })
  yield* executor.execute(callOf("lead-hang"), { scope: { tenant: "acme", turn: config.turn } })
})

const completeAll = Effect.gen(function*() {
  const store = yield* IdempotencyStore.IdempotencyStore
  const leases = []
  for (const key of config.keys) {
    const claim = yield* store.claim({
      scope: config.scope,
      key,
      tool: "RecordVisit",
      fingerprint: "fp",
      owner: `worker-${process.pid}`,
      leaseMs: config.leaseMs,
      retentionMs: 600_000,
      maxAttempts: 3,
      recovery: "reexecute"
    })
    if (claim._tag !== "Claimed") return yield* Effect.die(new Error(`${key} was not claimed`))
    leases.push(claim.lease)
  }
  const fences = Object.fromEntries(leases.map((lease) => [lease.key, lease.fence.toString()]))
  process.stdout.write(`${JSON.stringify({ event: "claimed", fences })}\n`)
  yield* Effect.callback((resume) => {
    process.stdin.once("data", () => resume(Effect.void))
  })
  const answers = yield* Effect.forEach(
    leases,
    (lease) =>
      Effect.exit(store.complete(lease, { result: JSON.stringify({ by: process.pid }), retentionMs: 600_000 })).pipe(
        Effect.map((exit) => exit._tag === "Success" ? "done" : String(exit))
      ),
    { concurrency: "unbounded" }
  )
  process.stdout.write(`${JSON.stringify({ event: "completed", answers })}\n`)
})

const modes = { hang, complete: completeAll }
Effect.runPromise((modes[config.mode] ?? race).pipe(Effect.provide(Live))).then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${String(error)}\n`)
    process.exit(1)
  }
)
