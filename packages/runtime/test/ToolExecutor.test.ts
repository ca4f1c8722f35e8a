import { assert, describe, it } from "@effect/vitest"
import { IdempotencyKey } from "@toolgate/core"
import { ExecutionMetrics, IdempotencyStore as Store, ToolExecutor } from "@toolgate/runtime"
import { ValidatedCall } from "@toolgate/testing"
import { Cause, Deferred, Effect, Exit, Fiber, Metric, Option, Schema, Tracer } from "effect"
import { Tool, Toolkit } from "effect/ai"

const { IdempotencyStore } = Store

class DealMissing extends Schema.TaggedError<DealMissing>()("DealMissing", { dealId: Schema.String }) {}
class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", { retryAfterMs: Schema.Int }) {}

const CreateTask = Tool.make("CreateTask", {
  parameters: Schema.Struct({ dealId: Schema.String, title: Schema.String, due: Schema.optionalKey(Schema.String) }),
  success: Schema.Struct({ taskId: Schema.String, createdAt: Schema.Date }),
  failure: Schema.Union([DealMissing, RateLimited])
})
const UpdateStage = Tool.make("UpdateStage", {
  parameters: Schema.Struct({ dealId: Schema.String, stage: Schema.String, note: Schema.String }),
  success: Schema.Struct({ ok: Schema.Boolean })
}).annotate(IdempotencyKey.KeyFields, ["dealId", "stage"])
const Export = Tool.make("Export", {
  parameters: Schema.Struct({ size: Schema.Int }),
  success: Schema.String
})
const Crm = Toolkit.make(CreateTask, UpdateStage, Export)

const call = <T extends Tool.Any>(tool: T, args: Record<string, unknown>, id?: string) =>
  ValidatedCall.make(tool, args, { id })

const turn = () => ({ tenant: "acme", turn: `conv-1/msg-${Math.random()}` })

/** Counts handler runs and lets tests script their behaviour. */
const harness = (overrides: Partial<ToolExecutor.Handlers<typeof Crm.tools>> = {}, options?: ToolExecutor.Options) =>
  Effect.gen(function*() {
    const runs = { CreateTask: 0, UpdateStage: 0, Export: 0 }
    const contexts: Array<ToolExecutor.HandlerContext> = []
    const executor = yield* ToolExecutor.make(Crm, {
      CreateTask: {
        recovery: "reexecute",
        run: (params, ctx) =>
          Effect.sync(() => {
            runs.CreateTask++
            contexts.push(ctx)
            return { taskId: `T-${params.dealId}-${runs.CreateTask}`, createdAt: new Date(Date.UTC(2030, 0, 2)) }
          })
      },
      UpdateStage: {
        recovery: "manual",
        run: (_, ctx) =>
          Effect.sync(() => {
            runs.UpdateStage++
            contexts.push(ctx)
            return { ok: true }
          })
      },
      Export: {
        run: (params) =>
          Effect.sync(() => {
            runs.Export++
            return "x".repeat(params.size)
          })
      },
      ...overrides
    } as ToolExecutor.Handlers<typeof Crm.tools>, options)
    return { executor, runs, contexts, store: yield* IdempotencyStore }
  })

const countOf = (outcome: ExecutionMetrics.Outcome) =>
  Metric.value(Metric.withAttributes(ExecutionMetrics.executions, { outcome })).pipe(Effect.map((s) => s.count))

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) assert.fail("expected a failure")
  const found = Cause.findErrorOption(exit.cause)
  if (Option.isNone(found)) assert.fail(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return found.value
}

describe("ToolExecutor (memory store)", () => {
  it.live("executes once; a retried stream (new provider ids) replays the decoded result with the same key", () =>
    Effect.gen(function*() {
      const { contexts, executor, runs } = yield* harness()
      const scope = turn()
      const first = yield* executor.execute(call(CreateTask, { dealId: "D1", title: "Call back" }, "call_aaa"), {
        scope
      })
      const retry = yield* executor.execute(call(CreateTask, { title: "Call back", dealId: "D1" }, "call_bbb"), {
        scope
      })
      assert.strictEqual(first._tag, "Executed")
      assert.strictEqual(retry._tag, "Replayed")
      assert.strictEqual(runs.CreateTask, 1)
      assert.strictEqual(retry.key, first.key)
      assert.instanceOf(retry.value.createdAt, Date)
      assert.deepStrictEqual(retry.value, first.value)
      assert.deepStrictEqual(retry.encoded, { taskId: "T-D1-1", createdAt: "2030-01-02T00:00:00.000Z" })
      assert.strictEqual(contexts[0].downstreamKey, IdempotencyKey.downstreamKey(first.key, 1))
      assert.strictEqual(contexts[0].attempt, 1)
      assert.isFalse(contexts[0].takeover)
      assert.strictEqual(contexts[0].toolCallId, "call_aaa")
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("the same key with other arguments fails with IdempotencyKeyReused and never executes", () =>
    Effect.gen(function*() {
      const { executor, runs } = yield* harness()
      const scope = turn()
      yield* executor.execute(call(UpdateStage, { dealId: "D1", stage: "won", note: "closed" }), { scope })
      const exit = yield* Effect.exit(
        executor.execute(call(UpdateStage, { dealId: "D1", stage: "won", note: "secret-note-text" }), { scope })
      )
      const error = failureOf(exit)
      assert.strictEqual(error._tag, "IdempotencyKeyReused")
      assert.notInclude(error.message, "secret-note-text")
      assert.match(error.message, /tg1:sha256:[0-9a-f]{64}/)
      assert.strictEqual(runs.UpdateStage, 1)
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("not applied: the record is released, the call may run again, attempts are capped", () =>
    Effect.gen(function*() {
      let n = 0
      const { executor } = yield* harness({
        CreateTask: {
          recovery: "reexecute",
          maxAttempts: 2,
          run: () => {
            n++
            return Effect.fail(new ToolExecutor.NotApplied({ detail: "connection refused" }))
          }
        }
      })
      const scope = turn()
      const c = call(CreateTask, { dealId: "D2", title: "t" })
      const first = failureOf(yield* Effect.exit(executor.execute(c, { scope })))
      assert.strictEqual(first._tag, "ToolExecutionFailed")
      if (first._tag === "ToolExecutionFailed") {
        assert.strictEqual(first.classification, "not_applied")
        assert.isTrue(first.retryable)
      }
      const second = failureOf(yield* Effect.exit(executor.execute(c, { scope })))
      assert.isTrue(second._tag === "ToolExecutionFailed" && !second.retryable)
      const third = failureOf(yield* Effect.exit(executor.execute(c, { scope })))
      assert.strictEqual(third._tag, "AttemptsExhausted")
      if (third._tag === "AttemptsExhausted") {
        assert.strictEqual(third.attempts, 2)
        assert.deepStrictEqual(third.lastError, { _tag: "NotApplied", failure: null, detail: "connection refused" })
      }
      assert.strictEqual(n, 2)
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("a tool failure is terminal by default: cached, replayed decoded, never re-run; classify can release it", () =>
    Effect.gen(function*() {
      let n = 0
      const { executor } = yield* harness({
        CreateTask: {
          recovery: "reexecute",
          classify: (f) => f._tag === "RateLimited" ? "not_applied" : "applied",
          run: (params) => {
            n++
            return params.dealId === "gone"
              ? Effect.fail(new DealMissing({ dealId: params.dealId }))
              : Effect.fail(new RateLimited({ retryAfterMs: 100 }))
          }
        }
      })
      const scope = turn()
      const gone = call(CreateTask, { dealId: "gone", title: "t" })
      const first = failureOf(yield* Effect.exit(executor.execute(gone, { scope })))
      const replay = failureOf(yield* Effect.exit(executor.execute(gone, { scope })))
      assert.strictEqual(n, 1)
      assert.isTrue(first._tag === "ToolExecutionFailed" && !first.replayed && first.classification === "applied")
      assert.isTrue(replay._tag === "ToolExecutionFailed" && replay.replayed)
      if (replay._tag === "ToolExecutionFailed") {
        assert.instanceOf(replay.failure, DealMissing)
        assert.strictEqual((replay.failure as DealMissing).dealId, "gone")
      }
      const limited = failureOf(
        yield* Effect.exit(executor.execute(call(CreateTask, { dealId: "x", title: "t" }), { scope }))
      )
      assert.isTrue(
        limited._tag === "ToolExecutionFailed" && limited.classification === "not_applied" && limited.retryable
      )
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("ambiguous failures and defects park the record unknown; reexecute takes it over with the same downstream key", () =>
    Effect.gen(function*() {
      let n = 0
      const { contexts, executor } = yield* harness({
        CreateTask: {
          recovery: "reexecute",
          run: (params, ctx) =>
            Effect.suspend(() => {
              n++
              contexts.push(ctx)
              if (n === 1) return Effect.fail(new ToolExecutor.Ambiguous({ detail: "read timeout after send" }))
              if (n === 2) return Effect.die(new Error("bug in handler"))
              return Effect.succeed({ taskId: `T-${params.dealId}`, createdAt: new Date(0) })
            })
        }
      })
      const scope = turn()
      const c = call(CreateTask, { dealId: "D3", title: "t" })
      const first = failureOf(yield* Effect.exit(executor.execute(c, { scope })))
      assert.isTrue(first._tag === "OutcomeUnknown" && first.reason === "ambiguous_failure")
      const second = failureOf(yield* Effect.exit(executor.execute(c, { scope })))
      assert.isTrue(second._tag === "OutcomeUnknown" && second.reason === "defect")
      const third = yield* executor.execute(c, { scope })
      assert.strictEqual(third._tag, "Executed")
      assert.strictEqual(n, 3)
      assert.deepStrictEqual(contexts.map((x) => x.attempt), [1, 2, 3])
      assert.deepStrictEqual(contexts.map((x) => x.takeover), [false, true, true])
      assert.strictEqual(new Set(contexts.map((x) => x.downstreamKey)).size, 1)
      assert.isTrue(contexts[1].fence > contexts[0].fence && contexts[2].fence > contexts[1].fence)
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("a timeout is ExecutionTimeout: record unknown, signal aborted; manual recovery never re-runs it", () =>
    Effect.gen(function*() {
      let aborted = false
      let n = 0
      const { executor, store } = yield* harness({
        UpdateStage: {
          recovery: "manual",
          timeoutMs: 50,
          run: (_, ctx) =>
            Effect.suspend(() => {
              n++
              ctx.signal.addEventListener("abort", () => {
                aborted = true
              })
              return Effect.never
            })
        }
      })
      const scope = turn()
      const c = call(UpdateStage, { dealId: "D4", stage: "won", note: "n" })
      const error = failureOf(yield* Effect.exit(executor.execute(c, { scope })))
      assert.strictEqual(error._tag, "ExecutionTimeout")
      assert.isTrue(aborted)
      if (error._tag === "ExecutionTimeout") {
        const record = Option.getOrThrow(yield* store.read({ scope: "acme", key: error.keyHash }))
        assert.strictEqual(record.status, "unknown")
        assert.deepStrictEqual(record.error, { _tag: "ExecutionTimeout", timeoutMs: 50 })
        assert.match(error.message, /tgk1-/)
      }
      const again = failureOf(yield* Effect.exit(executor.execute(c, { scope })))
      assert.strictEqual(again._tag, "OutcomeUnknown")
      assert.strictEqual(n, 1)
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("reconcile: a takeover probes the downstream by key first; found means no second run", () =>
    Effect.gen(function*() {
      const downstream = new Map<string, { taskId: string; createdAt: Date }>()
      let n = 0
      let probes = 0
      const { executor } = yield* harness({
        CreateTask: {
          recovery: "reconcile",
          timeoutMs: 50,
          probe: (_, ctx) =>
            Effect.sync(() => {
              probes++
              return Option.fromNullishOr(downstream.get(ctx.downstreamKey))
            }),
          run: (params, ctx) =>
            Effect.suspend(() => {
              n++
              // the CRM commits the task, then the response is lost (timeout)
              downstream.set(ctx.downstreamKey, { taskId: `T-${params.dealId}`, createdAt: new Date(0) })
              return n === 1 ? Effect.never : Effect.die(new Error("must not run twice"))
            })
        }
      })
      const scope = turn()
      const c = call(CreateTask, { dealId: "D5", title: "t" })
      assert.strictEqual(failureOf(yield* Effect.exit(executor.execute(c, { scope })))._tag, "ExecutionTimeout")
      const outcome = yield* executor.execute(c, { scope })
      assert.strictEqual(outcome._tag, "Executed")
      if (outcome._tag === "Executed") assert.isTrue(outcome.reconciled)
      assert.strictEqual(outcome.value.taskId, "T-D5")
      assert.strictEqual(n, 1)
      assert.strictEqual(probes, 1)
      assert.strictEqual((yield* executor.execute(c, { scope }))._tag, "Replayed")
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("a result over the limit is ResultTooLarge before completion; the record is settled and replays the error", () =>
    Effect.gen(function*() {
      const { executor, runs } = yield* harness({}, { maxResultBytes: 1_000 })
      const scope = turn()
      const ok = yield* executor.execute(call(Export, { size: 990 }), { scope })
      assert.strictEqual(ok._tag, "Executed")
      const big = call(Export, { size: 5_000 })
      const first = failureOf(yield* Effect.exit(executor.execute(big, { scope })))
      assert.isTrue(
        first._tag === "ResultTooLarge" && first.bytes === 5_002 && first.maxBytes === 1_000 && !first.replayed
      )
      const replay = failureOf(yield* Effect.exit(executor.execute(big, { scope })))
      assert.isTrue(replay._tag === "ResultTooLarge" && replay.replayed)
      assert.strictEqual(runs.Export, 2)
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("a live lease elsewhere: bounded wait, then ExecutionInProgress; the heartbeat keeps a slow handler's lease", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const { executor, runs } = yield* harness({
        CreateTask: {
          recovery: "reexecute",
          run: (params) =>
            Effect.gen(function*() {
              runs.CreateTask++
              yield* Deferred.succeed(started, undefined)
              yield* Deferred.await(gate)
              return { taskId: `T-${params.dealId}`, createdAt: new Date(0) }
            })
        }
      }, { leaseMs: 120, waitMs: 200 })
      const scope = turn()
      const c = call(CreateTask, { dealId: "D6", title: "t" })
      const holder = yield* Effect.forkChild(executor.execute(c, { scope }), { startImmediately: true })
      yield* Deferred.await(started)
      const busy = failureOf(yield* Effect.exit(executor.execute(c, { scope })))
      assert.strictEqual(busy._tag, "ExecutionInProgress")
      if (busy._tag === "ExecutionInProgress") {
        assert.isAtLeast(busy.waitedMs, 150)
        assert.isAbove(busy.retryAfterMs, 0)
      }
      // three lease lengths later the holder still holds: heartbeats extended it
      yield* Effect.sleep("250 millis")
      const waiter = yield* Effect.forkChild(executor.execute(c, { scope }), { startImmediately: true })
      yield* Effect.sleep("30 millis")
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual((yield* Fiber.join(holder))._tag, "Executed")
      const waited = yield* Fiber.join(waiter)
      assert.isTrue(waited._tag === "Replayed" && waited.waited)
      assert.strictEqual(runs.CreateTask, 1)
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("on effect's clock the watch's alarm is one timer, set while a handler is watched and gone after the last", () =>
    Effect.gen(function*() {
      // Node's active timers: the alarm is one of them while a handler is watched, none after
      const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length
      const gates = [yield* Deferred.make<void>(), yield* Deferred.make<void>()]
      const started = [yield* Deferred.make<string>(), yield* Deferred.make<string>()]
      let running = 0
      const { executor, store } = yield* harness({
        CreateTask: {
          recovery: "reexecute",
          run: (params, ctx) =>
            Effect.gen(function*() {
              const i = running++
              yield* Deferred.succeed(started[i]!, ctx.key)
              yield* Deferred.await(gates[i]!)
              return { taskId: `T-${params.dealId}`, createdAt: new Date(0) }
            })
        }
      }, { leaseMs: 120 })
      const before = timers()
      const scope = turn()
      const execute = (dealId: string) =>
        Effect.forkChild(executor.execute(call(CreateTask, { dealId, title: "t" }), { scope }), {
          startImmediately: true
        })
      const first = yield* execute("A1")
      yield* Deferred.await(started[0]!)
      assert.strictEqual(timers(), before + 1, "one alarm while the first handler runs")
      const second = yield* execute("A2")
      const key = yield* Deferred.await(started[1]!)
      assert.strictEqual(timers(), before + 1, "still one alarm for two handlers")
      yield* Deferred.succeed(gates[0]!, undefined)
      assert.strictEqual((yield* Fiber.join(first))._tag, "Executed")
      assert.strictEqual(timers(), before + 1, "the alarm stays for the handler still running")
      // two and a half lease lengths after its start, the second handler's lease is still live: beats go on
      yield* Effect.sleep("300 millis")
      const record = yield* store.read({ scope: scope.tenant, key })
      assert.isTrue(Option.isSome(record) && record.value.status === "in_progress" && !record.value.leaseExpired)
      yield* Deferred.succeed(gates[1]!, undefined)
      assert.strictEqual((yield* Fiber.join(second))._tag, "Executed")
      assert.strictEqual(timers(), before, "no alarm after the last handler")
      assert.strictEqual(running, 2)
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("a store whose heartbeat throws fails that beat only: the watch goes on and the handler times out", () =>
    Effect.gen(function*() {
      const store = yield* IdempotencyStore
      const throwing: Store.Service = {
        ...store,
        heartbeat: () => {
          throw new Error("a store bug: heartbeat threw")
        }
      }
      const executor = yield* ToolExecutor.make(Crm, {
        CreateTask: { recovery: "reexecute", timeoutMs: 250, run: () => Effect.never },
        UpdateStage: { recovery: "manual", run: () => Effect.succeed({ ok: true }) },
        Export: { run: () => Effect.succeed("") }
      }, { leaseMs: 300 }).pipe(Effect.provideService(IdempotencyStore, throwing))
      const exit = yield* Effect.exit(
        executor.execute(call(CreateTask, { dealId: "D9", title: "t" }), { scope: turn() })
      )
      assert.strictEqual(failureOf(exit)._tag, "ExecutionTimeout")
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("a lease lost while the handler runs interrupts it (signal aborted): LeaseLost, journalled", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<ToolExecutor.HandlerContext>()
      let aborted = false
      const { executor, store } = yield* harness({
        CreateTask: {
          recovery: "reexecute",
          run: (_, ctx) =>
            Effect.gen(function*() {
              ctx.signal.addEventListener("abort", () => {
                aborted = true
              })
              yield* Deferred.succeed(started, ctx)
              return yield* Effect.never
            })
        }
      }, { leaseMs: 100, heartbeatMs: 30 })
      const scope = turn()
      const running = yield* Effect.forkChild(
        Effect.exit(executor.execute(call(CreateTask, { dealId: "D7", title: "t" }), { scope })),
        { startImmediately: true }
      )
      const ctx = yield* Deferred.await(started)
      // an operator (or the reaper) parks the record under the running handler
      yield* store.park({ scope: "acme", key: ctx.key, fence: ctx.fence }, { error: null })
      const error = failureOf(yield* Fiber.join(running))
      assert.strictEqual(error._tag, "LeaseLost")
      assert.isTrue(aborted)
      const journal = yield* store.journalOf({ scope: "acme", key: ctx.key })
      assert.strictEqual(journal[0]?.outcome, "lease_lost")
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("a caller that interrupts a running handler leaves the record unknown, not in progress", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<ToolExecutor.HandlerContext>()
      const { executor, store } = yield* harness({
        CreateTask: {
          recovery: "manual",
          run: (_, ctx) => Deferred.succeed(started, ctx).pipe(Effect.andThen(Effect.never))
        }
      })
      const fiber = yield* Effect.forkChild(
        executor.execute(call(CreateTask, { dealId: "D8", title: "t" }), { scope: turn() }),
        {
          startImmediately: true
        }
      )
      const ctx = yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      const record = Option.getOrThrow(yield* store.read({ scope: "acme", key: ctx.key }))
      assert.strictEqual(record.status, "unknown")
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("executeAll: identical calls of a turn get ordinals 0, 1 and both run; a retried turn replays all; order kept", () =>
    Effect.gen(function*() {
      let active = 0
      let peak = 0
      let n = 0
      const { executor } = yield* harness({
        CreateTask: {
          recovery: "reexecute",
          run: (params) =>
            Effect.gen(function*() {
              active++
              peak = Math.max(peak, active)
              yield* Effect.sleep("15 millis")
              active--
              return { taskId: `T-${params.dealId}-${++n}`, createdAt: new Date(0) }
            })
        }
      })
      const scope = turn()
      const calls = [
        call(CreateTask, { dealId: "A", title: "same" }),
        call(CreateTask, { dealId: "A", title: "same" }),
        call(CreateTask, { dealId: "B", title: "other" }),
        { ...call(CreateTask, { dealId: "E", title: "t" }), params: { dealId: "E", title: "lone \ud800" } },
        call(CreateTask, { dealId: "C", title: "x" }),
        call(CreateTask, { dealId: "D", title: "x" })
      ]
      const results = yield* executor.executeAll(calls, { scope, concurrency: 2 })
      assert.deepStrictEqual(results.map((r) => r._tag), [
        "Success",
        "Success",
        "Success",
        "Failure",
        "Success",
        "Success"
      ])
      assert.strictEqual(n, 5)
      assert.strictEqual(peak, 2)
      const again = yield* executor.executeAll(calls.map((c) => ({ ...c, id: `${c.id}-retry` })), { scope })
      assert.strictEqual(n, 5)
      assert.deepStrictEqual(
        again.filter((r) => r._tag === "Success").map((r) => r._tag === "Success" && r.success._tag),
        ["Replayed", "Replayed", "Replayed", "Replayed", "Replayed"]
      )
      const values = results.map((r) => r._tag === "Success" ? (r.success.value as { taskId: string }).taskId : null)
      assert.strictEqual(new Set(values.slice(0, 2)).size, 2)
      const unkeyable = results[3]
      assert.isTrue(unkeyable._tag === "Failure" && unkeyable.failure._tag === "UnkeyableArguments")
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("arguments that do not hash deterministically fail with UnkeyableArguments before any claim", () =>
    Effect.gen(function*() {
      const { executor, runs } = yield* harness()
      const c = { ...call(CreateTask, { dealId: "A", title: "t" }), params: { dealId: "A", title: "t\ud800" } }
      const error = failureOf(yield* Effect.exit(executor.execute(c, { scope: turn() })))
      assert.strictEqual(error._tag, "UnkeyableArguments")
      assert.strictEqual(runs.CreateTask, 0)
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("metrics count outcomes; the execute span carries the key hash and no argument values", () =>
    Effect.gen(function*() {
      const spans: Array<Tracer.Span> = []
      const tracer = Tracer.make({
        span(options) {
          const span = Tracer.nativeTracer.span(options)
          spans.push(span)
          return span
        }
      })
      const { executor } = yield* harness()
      const scope = turn()
      const c = call(UpdateStage, { dealId: "D9", stage: "won", note: "private-words" })
      const first = yield* executor.execute(c, { scope }).pipe(Effect.withTracer(tracer))
      yield* executor.execute(c, { scope })
      yield* Effect.exit(executor.execute(call(UpdateStage, { dealId: "D9", stage: "won", note: "other" }), { scope }))
      assert.strictEqual(yield* countOf("executed"), 1)
      assert.strictEqual(yield* countOf("replayed"), 1)
      assert.strictEqual(yield* countOf("mismatch"), 1)
      const span = spans.find((s) => s.name === "ToolExecutor.execute")
      assert.isDefined(span)
      assert.strictEqual(span?.attributes.get("toolgate.key"), first.key)
      for (const s of spans) for (const v of s.attributes.values()) assert.notInclude(String(v), "private-words")
      assert.isTrue(spans.some((s) => s.name === "IdempotencyStore.claim"))
    }).pipe(
      Effect.provide(Store.layerMemory),
      Effect.provideService(Metric.MetricRegistry, new Map())
    ))

  it.live("with effect's native tracer (no backend) the executor and the store open no span: the handler runs in its caller's span", () =>
    Effect.gen(function*() {
      const seen: Array<string | undefined> = []
      const spans: Array<string> = []
      const recording = Tracer.make({
        span(options) {
          spans.push(options.name)
          return Tracer.nativeTracer.span(options)
        }
      })
      const { executor } = yield* harness({
        CreateTask: {
          recovery: "reexecute",
          run: (params) =>
            Effect.map(
              Effect.option(Effect.currentSpan),
              (
                span
              ) => (seen.push(Option.getOrUndefined(span)?.name),
                { taskId: `T-${params.dealId}`, createdAt: new Date(Date.UTC(2030, 0, 2)) })
            )
        }
      })
      const scope = turn()
      // no backend: only the caller's own span is current inside the handler
      yield* executor.execute(call(CreateTask, { dealId: "S1", title: "t" }), { scope }).pipe(
        Effect.withSpan("caller")
      )
      // a tracer installed: the execution's span is, and the store's spans are opened too
      yield* executor.execute(call(CreateTask, { dealId: "S2", title: "t" }), { scope }).pipe(
        Effect.withSpan("caller"),
        Effect.withTracer(recording)
      )
      assert.deepStrictEqual(seen, ["caller", "ToolExecutor.execute"])
      assert.includeMembers(spans, [
        "caller",
        "ToolExecutor.execute",
        "IdempotencyStore.claim",
        "IdempotencyStore.complete"
      ])
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("the node:crypto digest the executor uses agrees with core's Web Crypto digest", () =>
    Effect.gen(function*() {
      const { executor } = yield* harness()
      const scope = { tenant: "acme", turn: "conv-42/msg-7" }
      const c = call(CreateTask, { title: "Call back", dealId: "D-1" })
      const outcome = yield* executor.execute(c, { scope })
      const core = yield* IdempotencyKey.forCall(c, { scope })
      assert.strictEqual(outcome.key, core.key)
      assert.strictEqual(outcome.key, "tg1:sha256:0ec1a22bf8a9f3886f00213cf6e37f3d57190bc66fed86e9f62b303f76e5bb4c")
    }).pipe(Effect.provide(Store.layerMemory)))
})
