/**
 * The executor's clock is effect's `Clock`: under `TestClock` no handler timeout, heartbeat or
 * wait happens until the test moves the clock, and all of them happen when it does (no wall time
 * passes; the memory store reads the same clock).
 */
import { assert, describe, it } from "@effect/vitest"
import { ExecutionError, IdempotencyStore as Store, ToolExecutor } from "@toolgate/runtime"
import { ValidatedCall } from "@toolgate/testing"
import { Cause, Clock, Deferred, Duration, Effect, Exit, Fiber, Option, Schema, Tracer } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"

const Slow = Tool.make("Slow", {
  parameters: Schema.Struct({ id: Schema.String }),
  success: Schema.Struct({ ok: Schema.Boolean })
})
const Quick = Tool.make("Quick", {
  parameters: Schema.Struct({ id: Schema.String }),
  success: Schema.Struct({ ok: Schema.Boolean })
})
const Kit = Toolkit.make(Slow)
const Both = Toolkit.make(Slow, Quick)
const call = (id: string) => ValidatedCall.make(Slow, { id })
const scope = { tenant: "acme", turn: "conv-1/msg-1" }

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) return assert.fail("expected a failure")
  return Option.getOrThrow(Cause.findErrorOption(exit.cause))
}

/** Moves the test clock `ms` forward in `step`s, letting woken fibers run between steps. */
const advance = (ms: number, step: number) =>
  Effect.gen(function*() {
    for (let t = 0; t < ms; t += step) {
      yield* TestClock.adjust(Duration.millis(Math.min(step, ms - t)))
      yield* Effect.yieldNow
    }
  })

describe("ToolExecutor on the TestClock", () => {
  it.effect("each heartbeat is a root span of its own call (key and tool), not a child of the call that started the timer", () =>
    Effect.gen(function*() {
      const spans: Array<Tracer.Span> = []
      const tracer = Tracer.make({
        span(options) {
          const span = Tracer.nativeTracer.span(options)
          spans.push(span)
          return span
        }
      })
      const gate = yield* Deferred.make<void>()
      const keys: Array<string> = []
      const executor = yield* ToolExecutor.make(Kit, {
        Slow: {
          recovery: "reexecute",
          timeoutMs: 600_000,
          run: (_, ctx) =>
            Effect.sync(() => keys.push(ctx.key)).pipe(Effect.andThen(Deferred.await(gate)), Effect.as({ ok: true }))
        }
      }, { leaseMs: 1_000 })
      const first = yield* Effect.forkChild(executor.execute(call("s1"), { scope }).pipe(Effect.withTracer(tracer)), {
        startImmediately: true
      })
      const second = yield* Effect.forkChild(executor.execute(call("s2"), { scope }).pipe(Effect.withTracer(tracer)), {
        startImmediately: true
      })
      yield* advance(3_000, 100)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(second)
      const beats = spans.filter((s) => s.name === "ToolExecutor.heartbeat")
      assert.strictEqual(keys.length, 2)
      for (const key of keys) {
        const own = beats.filter((s) => s.attributes.get("toolgate.key") === key)
        assert.isAtLeast(own.length, 2, "each running call is heartbeaten under its own key")
        for (const span of own) {
          assert.isTrue(Option.isNone(span.parent), "a heartbeat span has no parent")
          assert.strictEqual(span.attributes.get("toolgate.tool"), "Slow")
        }
      }
      assert.isTrue(spans.some((s) => s.name === "IdempotencyStore.heartbeat"))
    }).pipe(Effect.provide(Store.layerMemory)))

  it.effect("a handler's timeout elapses on the executor's clock, exactly at timeoutMs", () =>
    Effect.gen(function*() {
      const executor = yield* ToolExecutor.make(Kit, {
        Slow: { recovery: "manual", timeoutMs: 60_000, run: () => Effect.never }
      })
      const running = yield* Effect.forkChild(Effect.exit(executor.execute(call("a"), { scope })), {
        startImmediately: true
      })
      yield* advance(59_999, 1_000)
      assert.isUndefined(running.pollUnsafe())
      yield* advance(1, 1)
      const error = failureOf(yield* Fiber.join(running))
      assert.strictEqual(error._tag, "ExecutionTimeout")
      if (error._tag === "ExecutionTimeout") assert.strictEqual(error.timeoutMs, 60_000)
    }).pipe(Effect.provide(Store.layerMemory)))

  it.effect("heartbeats on the executor's clock keep a slow handler's lease for ten lease lengths", () =>
    Effect.gen(function*() {
      const store = yield* Store.IdempotencyStore
      const gate = yield* Deferred.make<void>()
      const started = yield* Deferred.make<ToolExecutor.HandlerContext>()
      const executor = yield* ToolExecutor.make(Kit, {
        Slow: {
          recovery: "reexecute",
          timeoutMs: 600_000,
          run: (_, ctx) =>
            Deferred.succeed(started, ctx).pipe(Effect.andThen(Deferred.await(gate)), Effect.as({ ok: true }))
        }
      }, { leaseMs: 1_000 })
      const running = yield* Effect.forkChild(executor.execute(call("b"), { scope }), { startImmediately: true })
      const ctx = yield* Deferred.await(started)
      yield* advance(10_000, 100)
      const record = Option.getOrThrow(yield* store.read({ scope: "acme", key: ctx.key }))
      assert.strictEqual(record.status, "in_progress")
      assert.isFalse(record.leaseExpired)
      assert.strictEqual(record.fence, ctx.fence)
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual((yield* Fiber.join(running))._tag, "Executed")
    }).pipe(Effect.provide(Store.layerMemory)))

  it.effect("one executor's running handlers share its timer: each times out at its own deadline, beats go on", () =>
    Effect.gen(function*() {
      const store = yield* Store.IdempotencyStore
      const started = yield* Deferred.make<ToolExecutor.HandlerContext>()
      const executor = yield* ToolExecutor.make(Both, {
        Slow: {
          recovery: "manual",
          timeoutMs: 60_000,
          run: (_, ctx) => Effect.andThen(Deferred.succeed(started, ctx), Effect.never)
        },
        Quick: { recovery: "manual", timeoutMs: 5_000, run: () => Effect.never }
      })
      const start = (tool: "Slow" | "Quick", id: string) =>
        Effect.forkChild(
          Effect.exit(
            tool === "Slow"
              ? executor.execute(call(id), { scope })
              : executor.execute(ValidatedCall.make(Quick, { id }), { scope })
          ),
          { startImmediately: true }
        )
      const slow = yield* start("Slow", "s")
      const ctx = yield* Deferred.await(started)
      yield* advance(10_000, 1_000)
      // its deadline (15 s) comes before the timer's next wake (the slow one's beat at 20 s)
      const quick = yield* start("Quick", "q1")
      yield* advance(4_999, 1_000)
      assert.isUndefined(quick.pollUnsafe())
      yield* advance(1, 1)
      assert.strictEqual(failureOf(yield* Fiber.join(quick))._tag, "ExecutionTimeout")
      assert.isUndefined(slow.pollUnsafe())
      // past a lease length (30 s) since it started: the beats kept its lease
      yield* advance(30_000, 1_000)
      const record = Option.getOrThrow(yield* store.read({ scope: "acme", key: ctx.key }))
      assert.strictEqual(record.status, "in_progress")
      assert.isFalse(record.leaseExpired)
      yield* advance(14_999, 1_000)
      assert.isUndefined(slow.pollUnsafe())
      yield* advance(1, 1)
      assert.strictEqual(failureOf(yield* Fiber.join(slow))._tag, "ExecutionTimeout")
      // nothing runs now; a later handler starts the timer again
      const again = yield* start("Quick", "q2")
      yield* advance(4_999, 1_000)
      assert.isUndefined(again.pollUnsafe())
      yield* advance(1, 1)
      assert.strictEqual(failureOf(yield* Fiber.join(again))._tag, "ExecutionTimeout")
    }).pipe(Effect.provide(Store.layerMemory)))

  it.effect("the wait for another worker's lease is measured and bounded on the executor's clock", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const executor = yield* ToolExecutor.make(Kit, {
        Slow: {
          recovery: "reexecute",
          timeoutMs: 600_000,
          run: () =>
            Deferred.succeed(started, undefined).pipe(Effect.andThen(Deferred.await(gate)), Effect.as({ ok: true }))
        }
      }, { waitMs: 5_000 })
      const holder = yield* Effect.forkChild(executor.execute(call("c"), { scope }), { startImmediately: true })
      yield* Deferred.await(started)
      const waiter = yield* Effect.forkChild(Effect.exit(executor.execute(call("c"), { scope })), {
        startImmediately: true
      })
      yield* advance(4_000, 50)
      assert.isUndefined(waiter.pollUnsafe())
      yield* advance(2_000, 50)
      const busy = failureOf(yield* Fiber.join(waiter))
      assert.strictEqual(busy._tag, "ExecutionInProgress")
      if (busy._tag === "ExecutionInProgress") {
        assert.isAtLeast(busy.waitedMs, 4_000)
        assert.isAtMost(busy.waitedMs, 6_000)
        assert.isAbove(busy.retryAfterMs, 20_000)
      }
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual((yield* Fiber.join(holder))._tag, "Executed")
    }).pipe(Effect.provide(Store.layerMemory)))
  it.effect("a call started the moment a heartbeat is fenced off keeps its own deadline (the alarm set again before the beats)", () =>
    Effect.gen(function*() {
      // a beat of the memory store answers at once: the fenced-off call ends, and the next one
      // starts, inside the alarm's own ring
      const store = yield* Store.IdempotencyStore
      const started = yield* Deferred.make<ToolExecutor.HandlerContext>()
      const quick = { start: -1, aborted: -1 }
      const executor = yield* ToolExecutor.make(Both, {
        Slow: {
          recovery: "reexecute",
          leaseMs: 6_000,
          timeoutMs: 600_000,
          run: (_, ctx) => Deferred.succeed(started, ctx).pipe(Effect.andThen(Effect.never))
        },
        Quick: {
          recovery: "reexecute",
          leaseMs: 300,
          timeoutMs: 150,
          run: (_, ctx) =>
            Effect.clockWith((clock) =>
              Effect.sync(() => {
                quick.start = clock.currentTimeMillisUnsafe()
                ctx.signal.addEventListener("abort", () => (quick.aborted = clock.currentTimeMillisUnsafe()))
              })
            ).pipe(Effect.andThen(Effect.never))
        }
      })
      const running = yield* Effect.forkChild(
        executor.executeAll([call("s"), ValidatedCall.make(Quick, { id: "q" })], { scope, concurrency: 1 }),
        { startImmediately: true }
      )
      const ctx = yield* Deferred.await(started)
      // the slow call's lease is taken from under it: its first heartbeat (at 2,000 ms) is fenced off
      yield* store.park({ scope: scope.tenant, key: ctx.key, fence: ctx.fence }, { error: null })
      yield* advance(2_500, 50)
      const [slow, quickOutcome] = yield* Fiber.join(running)
      assert.strictEqual(slow._tag === "Failure" ? slow.failure._tag : slow._tag, "LeaseLost")
      assert.strictEqual(
        quickOutcome._tag === "Failure" ? quickOutcome.failure._tag : quickOutcome._tag,
        "ExecutionTimeout"
      )
      // at its own deadline, not at the slow call's next beat (4,000 ms)
      assert.deepStrictEqual([quick.start, quick.aborted - quick.start], [2_000, 150])
    }).pipe(Effect.provide(Store.layerMemory)))
  it.effect("an alarm that rings as it is set (a takeover whose probe outlasted a heartbeat) leaves no sleep behind", () =>
    Effect.gen(function*() {
      const store = yield* Store.IdempotencyStore
      // the test clock, counting the sleeps in progress on it
      const test = yield* Clock.clockWith(Effect.succeed)
      let sleeping = 0
      const counting: Clock.Clock = {
        currentTimeMillisUnsafe: () => test.currentTimeMillisUnsafe(),
        currentTimeMillis: Effect.sync(() => test.currentTimeMillisUnsafe()),
        currentTimeNanosUnsafe: () => test.currentTimeNanosUnsafe(),
        currentTimeNanos: test.currentTimeNanos,
        monotonicTimeNanosUnsafe: () => test.monotonicTimeNanosUnsafe(),
        monotonicTimeNanos: test.monotonicTimeNanos,
        sleep: (duration) =>
          Effect.suspend(() => {
            sleeping++
            return test.sleep(duration)
          }).pipe(Effect.ensuring(Effect.sync(() => sleeping--)))
      }
      // worker X cannot reach the store for its heartbeats: its lease lapses
      const unreachable: Store.Service = {
        ...store,
        heartbeat: () =>
          Effect.fail(
            new ExecutionError.StoreUnavailable({
              keyHash: null,
              operation: "heartbeat",
              reason: "ConnectionError",
              code: null,
              retryable: true
            })
          )
      }
      const startedX = yield* Deferred.make<void>()
      const x = yield* ToolExecutor.make(Kit, {
        Slow: {
          recovery: "reconcile",
          leaseMs: 300,
          timeoutMs: 600_000,
          probe: () => Effect.succeed(Option.none()),
          run: () => Deferred.succeed(startedX, undefined).pipe(Effect.andThen(Effect.never))
        }
      }).pipe(Effect.provideService(Store.IdempotencyStore, unreachable))
      // worker Y takes the lapsed lease over; its probe outlasts its heartbeat interval (1,000 ms), so
      // its handler's first beat is due when the handler starts
      const y = yield* ToolExecutor.make(Kit, {
        Slow: {
          recovery: "reconcile",
          leaseMs: 3_000,
          timeoutMs: 600_000,
          probe: () => Effect.sleep("1100 millis").pipe(Effect.as(Option.none())),
          run: () => Effect.sleep("50 millis").pipe(Effect.as({ ok: true }))
        }
      })
      const onX = yield* Effect.forkChild(Effect.exit(x.execute(call("1"), { scope })), { startImmediately: true })
      yield* Deferred.await(startedX)
      yield* TestClock.adjust("400 millis")
      const onY = yield* Effect.forkChild(
        Effect.exit(y.execute(call("1"), { scope })).pipe(Effect.provideService(Clock.Clock, counting)),
        { startImmediately: true }
      )
      while (onY.pollUnsafe() === undefined) yield* advance(10, 10)
      const done = yield* Fiber.join(onY)
      yield* Fiber.interrupt(onX)
      assert.isTrue(Exit.isSuccess(done) && done.value._tag === "Executed")
      assert.strictEqual(sleeping, 0, "no alarm left sleeping on Y's clock after its handler ended")
    }).pipe(Effect.provide(Store.layerMemory)))
})
