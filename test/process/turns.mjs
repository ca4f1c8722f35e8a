/**
 * A worker process for `test/embedded-processes.test.ts`: a queue consumer that handles redelivered
 * turns with the built `@toolgate/runtime` (dist), on the embedded store or the PostgreSQL server,
 * under `NodeRuntime.runMain` (SIGINT/SIGTERM interrupt it; its layers close on the way out).
 * Reads one JSON argument:
 *
 * - `store`: `{ kind: "embedded", dataDir }` or `{ kind: "postgres", url, schema }`.
 * - `mode: "turns"`, `{ turns, prefix, crm, worker, leaseMs }`: prints `{ event: "ready", pid }`
 *   once its store is reachable, waits for a line on stdin (the start barrier), then handles turns
 *   0..turns-1 in a shuffled order, 8 at a time. Turn `n` (scope `acme/<prefix>-<n>`) makes two
 *   calls, `create_task` and `assign_owner` for lead `lead-<n>`, whose handlers POST to the fake
 *   CRM at `crm` with the downstream key as `Idempotency-Key`. A turn whose calls failed with a
 *   retryable error (`ExecutionInProgress`, `StoreUnavailable`, `LeaseLost`) is redelivered after 100 ms, at
 *   most 50 times. Prints `{ event: "turn", n }` per handled turn and finally
 *   `{ event: "done", executed, replayed, redelivered, failed }`.
 * - `mode: "ack"`, `{ prefix, crm, stage }`: executes one call; with `stage: "claim"` prints
 *   `{ event: "claimed", key, fence }` from inside the handler (the claim is acknowledged) and
 *   never returns; with `stage: "complete"` prints `{ event: "completed", key, json }` once the
 *   completion is acknowledged and then idles. The parent SIGKILLs it.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { PgClient } from "@effect/sql-pg"
import { EmbeddedPostgres, IdempotencyStore, ToolExecutor } from "@toolgate/runtime"
import { Effect, Layer, Redacted, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

const config = JSON.parse(process.argv[2])

const CreateTask = Tool.make("create_task", {
  parameters: Schema.Struct({ lead: Schema.String, title: Schema.String }),
  success: Schema.Struct({ id: Schema.String })
})
const AssignOwner = Tool.make("assign_owner", {
  parameters: Schema.Struct({ lead: Schema.String, owner_id: Schema.String }),
  success: Schema.Struct({ id: Schema.String })
})
const Crm = Toolkit.make(CreateTask, AssignOwner)

const callOf = (tool, params, index) => ({
  index,
  id: `call_${process.pid}_${Math.random().toString(36).slice(2)}`,
  name: tool.name,
  tool,
  params,
  arguments: params,
  argumentsText: JSON.stringify(params)
})

const line = (value) => process.stdout.write(`${JSON.stringify(value)}\n`)

/** POSTs one mutation to the fake CRM with the downstream key; its answer is the result. */
const post = (action) => (params, ctx) =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(`${config.crm}/tools/${action}`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": ctx.downstreamKey },
        body: JSON.stringify({ action, ...params }),
        signal
      })
      const body = await response.json()
      if (response.status !== 200) throw new Error(`CRM answered ${response.status}`)
      return { id: body.id }
    },
    catch: (cause) => cause
  }).pipe(Effect.orDie)

const Store = config.store.kind === "embedded"
  ? EmbeddedPostgres.layer({ dataDir: config.store.dataDir })
  : PgClient.layer({ url: Redacted.make(config.store.url), maxConnections: 4 })
const Live = IdempotencyStore.layerSql(config.store.kind === "embedded" ? {} : { schema: config.store.schema }).pipe(
  Layer.provide(Store)
)

// LeaseLost: this worker was fenced off (its lease lapsed while the machine was loaded and another
// worker took the call over); a redelivery replays the other worker's outcome
const retryable = new Set(["ExecutionInProgress", "StoreUnavailable", "LeaseLost"])

const turns = Effect.gen(function*() {
  const executor = yield* ToolExecutor.make(Crm, {
    create_task: { recovery: "reexecute", run: post("create_task") },
    assign_owner: { recovery: "reexecute", run: post("assign_owner") }
  }, { leaseMs: config.leaseMs ?? 2_000, waitMs: 10_000 })
  line({ event: "ready", pid: process.pid })
  yield* Effect.callback((resume) => {
    process.stdin.once("data", () => {
      // stdin would keep the process alive after its work
      process.stdin.destroy()
      resume(Effect.void)
    })
  })
  const order = Array.from({ length: config.turns }, (_, i) => i)
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[order[i], order[j]] = [order[j], order[i]]
  }
  const tally = { executed: 0, replayed: 0, redelivered: 0, failed: [] }
  yield* Effect.forEach(order, (n) =>
    Effect.gen(function*() {
      const lead = `lead-${n}`
      for (let delivery = 1;; delivery++) {
        const results = yield* executor.executeAll([
          callOf(CreateTask, { lead, title: `Call back ${lead}` }, 0),
          callOf(AssignOwner, { lead, owner_id: `usr_${n % 7}` }, 1)
        ], { scope: { tenant: "acme", turn: `${config.prefix}-${n}` } })
        const failures = results.filter((r) => r._tag === "Failure").map((r) => r.failure._tag)
        if (failures.length > 0 && failures.every((tag) => retryable.has(tag)) && delivery < 50) {
          tally.redelivered++
          yield* Effect.sleep("100 millis")
          continue
        }
        for (const r of results) {
          if (r._tag === "Failure") tally.failed.push(r.failure._tag)
          else if (r.success._tag === "Executed") tally.executed++
          else tally.replayed++
        }
        line({ event: "turn", n })
        return
      }
    }), { concurrency: 8, discard: true })
  line({ event: "done", ...tally })
})

const ack = Effect.gen(function*() {
  const store = yield* IdempotencyStore.IdempotencyStore
  const executor = yield* ToolExecutor.make(Crm, {
    create_task: {
      recovery: "reexecute",
      run: (params, ctx) =>
        config.stage === "claim"
          ? Effect.sync(() => line({ event: "claimed", key: ctx.key, fence: ctx.fence.toString() })).pipe(
            Effect.andThen(Effect.never)
          )
          : post("create_task")(params, ctx)
    },
    assign_owner: { recovery: "reexecute", run: post("assign_owner") }
  })
  const outcome = yield* executor.execute(callOf(CreateTask, { lead: "lead-ack", title: "ack" }, 0), {
    scope: { tenant: "acme", turn: config.prefix }
  })
  const record = yield* store.read({ scope: "acme", key: outcome.key })
  line({
    event: "completed",
    key: outcome.key,
    json: outcome.json,
    status: record._tag === "Some" ? record.value.status : null
  })
  yield* Effect.never
})

const program = (config.mode === "ack" ? ack : turns).pipe(Effect.provide(Live))

NodeRuntime.runMain(
  program.pipe(Effect.catchCause((cause) =>
    Effect.sync(() => {
      process.stderr.write(`${cause}\n`)
      process.exitCode = 1
    })
  ))
)
