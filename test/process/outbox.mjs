/**
 * A process for `test/outbox-processes.test.ts`, on the built `@toolgate/runtime` (dist), on the
 * embedded store or the PostgreSQL server, under `NodeRuntime.runMain`. Reads one JSON argument:
 *
 * - `store`: `{ kind: "embedded", dataDir }` or `{ kind: "postgres", url, schema }`.
 * - `mode: "worker"`, `{ tenant, leads, slack, ads, hangAfter, leaseMs }`: executes `assign_owner`
 *   for each lead in order, one at a time, each call declaring two follow-ups: the rep
 *   notification (`slack`, ordering key `<lead>/slack`) and the conversion import (`ads`). A lead
 *   named `*-ambiguous` fails ambiguous (parked `unknown`), `*-refused` fails (applied, terminal):
 *   neither is a verified mutation. Prints `{ event: "completed", lead, outcome }` after each call;
 *   with `hangAfter: N`, the handler of the call after N completions prints
 *   `{ event: "inside", lead }` and never returns (to be SIGKILLed between the completions it
 *   acknowledged and any delivery: this worker runs no dispatcher). Without it, prints
 *   `{ event: "done" }` and exits. `dispatch: true` runs a dispatcher fiber beside the calls (the
 *   worker's own), until the calls are done and nothing is due.
 * - `mode: "dispatch"`, `{ owner, leaseMs, deliveryTimeoutMs, pollMs }`: prints `{ event: "ready" }`
 *   and runs an `OutboxDispatcher` until SIGTERM (it settles the round in progress, then exits 0),
 *   printing `{ event: "round", … }` per round.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { PgClient } from "@effect/sql-pg"
import { EmbeddedPostgres, FollowUp, IdempotencyStore, Outbox, OutboxDispatcher, ToolExecutor } from "@toolgate/runtime"
import { Cause, Deferred, Effect, Fiber, Layer, Redacted, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import * as FetchHttpClient from "effect/http/FetchHttpClient"

const config = JSON.parse(process.argv[2])

const AssignOwner = Tool.make("assign_owner", {
  parameters: Schema.Struct({ lead: Schema.String, owner_id: Schema.String }),
  success: Schema.Struct({ id: Schema.String }),
  failure: Schema.Struct({ code: Schema.String })
})
const Crm = Toolkit.make(AssignOwner)

const line = (value) => process.stdout.write(`${JSON.stringify(value)}\n`)

const schema = config.store.kind === "embedded" ? {} : { schema: config.store.schema }
const Store = config.store.kind === "embedded"
  ? EmbeddedPostgres.layer({ dataDir: config.store.dataDir })
  : PgClient.layer({ url: Redacted.make(config.store.url), maxConnections: 4 })
const Live = Layer.mergeAll(IdempotencyStore.layerSql(schema), Outbox.layerSql(schema)).pipe(
  Layer.provideMerge(Store),
  Layer.merge(FetchHttpClient.layer)
)

const dispatcherOptions = () => ({
  owner: config.owner ?? `worker-${process.pid}`,
  leaseMs: config.leaseMs ?? 3_000,
  deliveryTimeoutMs: config.deliveryTimeoutMs ?? 2_000,
  pollMs: config.pollMs ?? 100,
  retryBaseMs: 50,
  retryMaxMs: 400,
  maxAttempts: 20
})

const worker = Effect.gen(function*() {
  let completions = 0
  let hung = false
  const executor = yield* ToolExecutor.make(Crm, {
    assign_owner: {
      recovery: "reexecute",
      classify: () => "applied",
      run: (params) =>
        Effect.gen(function*() {
          if (config.hangAfter !== undefined && completions >= config.hangAfter && !hung) {
            hung = true
            line({ event: "inside", lead: params.lead })
            return yield* Effect.never
          }
          if (params.lead.endsWith("-ambiguous")) {
            return yield* new ToolExecutor.Ambiguous({ detail: "the CRM reset the connection after the request" })
          }
          if (params.lead.endsWith("-refused")) return yield* Effect.fail({ code: "no_open_deal" })
          return { id: `own-${params.lead}-${params.owner_id}` }
        }),
      followUps: (params, result) => [
        FollowUp.webhook(config.slack, { event: "assigned", lead: params.lead, owner: result.id }, {
          orderingKey: `${params.lead}/slack`
        }),
        FollowUp.webhook(config.ads, { conversion: "lead_assigned", lead: params.lead })
      ]
    }
  }, { leaseMs: config.leaseMs ?? 1_500, waitMs: 20_000 })
  const stop = yield* Deferred.make()
  const dispatching = config.dispatch === true
    ? yield* Effect.forkChild(
      Effect.flatMap(OutboxDispatcher.make(dispatcherOptions()), (d) => d.run({ stop: Deferred.await(stop) })),
      { startImmediately: true }
    )
    : undefined
  for (const lead of config.leads) {
    const exit = yield* Effect.exit(executor.execute(
      {
        index: 0,
        id: `call_${process.pid}_${lead}`,
        name: "assign_owner",
        tool: AssignOwner,
        params: { lead, owner_id: "usr_7" },
        arguments: { lead, owner_id: "usr_7" },
        argumentsText: JSON.stringify({ lead, owner_id: "usr_7" })
      },
      { scope: { tenant: config.tenant, turn: `turn-${lead}` } }
    ))
    if (exit._tag === "Success") completions++
    line({
      event: "completed",
      lead,
      outcome: exit._tag === "Success" ? exit.value._tag : exit.cause.reasons[0]?.error?._tag ?? "defect"
    })
  }
  if (dispatching !== undefined) {
    const outbox = yield* Outbox.Outbox
    for (;;) {
      const counts = yield* outbox.counts()
      if (counts.pending + counts.delivering === 0) break
      yield* Effect.sleep("50 millis")
    }
    yield* Deferred.succeed(stop, undefined)
    yield* Fiber.join(dispatching)
  }
  line({ event: "done" })
})

const dispatch = Effect.gen(function*() {
  const dispatcher = yield* OutboxDispatcher.make({
    ...dispatcherOptions(),
    onRound: (round) => Effect.sync(() => line({ event: "round", ...round }))
  })
  line({ event: "ready", pid: process.pid })
  const stop = yield* Deferred.make()
  const running = yield* Effect.forkChild(dispatcher.run({ stop: Deferred.await(stop) }), { startImmediately: true })
  // SIGTERM interrupts this fiber: stop leasing, let the round in progress settle
  yield* Fiber.join(running).pipe(
    Effect.onInterrupt(() => Deferred.succeed(stop, undefined).pipe(Effect.andThen(Fiber.await(running))))
  )
})

const program = (config.mode === "dispatch" ? dispatch : worker).pipe(Effect.scoped, Effect.provide(Live))

NodeRuntime.runMain(
  program.pipe(Effect.catchCause((cause) =>
    Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.sync(() => {
      process.stderr.write(`${cause}\n`)
      process.exitCode = 1
    })
  ))
)
