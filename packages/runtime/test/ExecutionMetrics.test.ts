/**
 * The metric of execution outcomes: every `execute` is counted once, by its final exit. Reads the
 * metric registry of each test.
 */
import { assert, describe, it } from "@effect/vitest"
import { IdempotencyKey, type ToolCall } from "@toolgate/core"
import { ExecutionError, ExecutionMetrics, IdempotencyStore as Store, ToolExecutor } from "@toolgate/runtime"
import { ValidatedCall } from "@toolgate/testing"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Metric, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

const Slow = Tool.make("Slow", {
  parameters: Schema.Struct({ id: Schema.String }),
  success: Schema.Struct({ ok: Schema.Boolean })
})
/** Keyed by `id` alone: another `note` under the same key is a mismatch. */
const Note = Tool.make("Note", {
  parameters: Schema.Struct({ id: Schema.String, note: Schema.String }),
  success: Schema.Struct({ ok: Schema.Boolean })
}).annotate(IdempotencyKey.KeyFields, ["id"])
const Kit = Toolkit.make(Slow)
const Desk = Toolkit.make(Slow, Note)

const countOf = (outcome: ExecutionMetrics.Outcome) =>
  Metric.value(Metric.withAttributes(ExecutionMetrics.executions, { outcome })).pipe(Effect.map((s) => s.count))

/** The final outcomes: each execution ends in exactly one of them. */
const finals: ReadonlyArray<ExecutionMetrics.Outcome> = [
  "executed",
  "replayed",
  "in_progress",
  "mismatch",
  "failed",
  "lease_lost",
  "unknown",
  "store_unavailable",
  "unkeyable",
  "exhausted"
]

const totalOf = Effect.forEach(finals, (outcome) => countOf(outcome)).pipe(
  Effect.map((counts) => counts.reduce((a, b) => a + b, 0))
)
const call = (id: string) => ValidatedCall.make(Slow, { id }, { id: `call_${id}` })

const unavailable = (operation: ExecutionError.StoreOperation) =>
  new ExecutionError.StoreUnavailable({
    keyHash: null,
    operation,
    reason: "ConnectionError",
    code: "08006",
    retryable: false
  })

/** The memory store, with `park` failing as an unreachable database would. */
const parkFails = Layer.effect(
  Store.IdempotencyStore,
  Effect.gen(function*() {
    const store = yield* Store.IdempotencyStore
    return { ...store, park: () => Effect.fail(unavailable("park")) }
  })
).pipe(Layer.provide(Store.layerMemory))

describe("ExecutionMetrics: one tap for execution outcomes", () => {
  it.live("a timed-out handler whose park hits an unreachable store is not counted as lease_lost", () =>
    Effect.gen(function*() {
      const executor = yield* ToolExecutor.make(Kit, {
        Slow: { recovery: "manual", timeoutMs: 50, run: () => Effect.never }
      })
      const exit = yield* Effect.exit(executor.execute(call("a"), { scope: { tenant: "acme", turn: "t-1" } }))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const error = Option.getOrThrow(Cause.findErrorOption(exit.cause))
        assert.strictEqual(error._tag, "StoreUnavailable")
      }
      assert.strictEqual(yield* countOf("lease_lost"), 0)
      assert.strictEqual(yield* countOf("store_unavailable"), 1)
      assert.strictEqual(yield* totalOf, 1)
    }).pipe(Effect.provide(parkFails), Effect.provideService(Metric.MetricRegistry, new Map())))

  it.live("every execution is counted once, by how it ended", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<ToolExecutor.HandlerContext>()
      const executor = yield* ToolExecutor.make(Desk, {
        Note: { run: () => Effect.succeed({ ok: true }) },
        Slow: {
          recovery: "reexecute",
          timeoutMs: 50,
          maxAttempts: 2,
          run: (params, ctx) => {
            switch (params.id) {
              case "ok":
                return Effect.succeed({ ok: true })
              case "not-applied":
                return Effect.fail(new ToolExecutor.NotApplied({ detail: "refused" }))
              case "ambiguous":
                return Effect.fail(new ToolExecutor.Ambiguous({ detail: "reset after send" }))
              case "lost":
                return Deferred.succeed(started, ctx).pipe(Effect.andThen(Effect.never))
              default:
                return Effect.never
            }
          }
        }
      })
      const store = yield* Store.IdempotencyStore
      const scope = { tenant: "acme", turn: `t-${Math.random()}` }
      const run = (id: string, args?: Record<string, unknown>) =>
        Effect.exit(executor.execute(args === undefined ? call(id) : { ...call(id), params: args as never }, { scope }))
      yield* run("ok") // executed
      yield* run("ok") // replayed
      yield* run("not-applied") // failed (released)
      yield* run("not-applied") // failed, last attempt
      yield* run("not-applied") // exhausted
      yield* run("ambiguous") // unknown (parked; reexecute takes it over next time)
      yield* run("slow") // unknown (timeout)
      const note = (text: string): ToolCall.ValidatedToolCall<typeof Note> => ({
        index: 0,
        id: "call_note",
        name: "Note",
        tool: Note,
        params: { id: "n-1", note: text },
        arguments: { id: "n-1", note: text },
        argumentsText: ""
      })
      yield* executor.execute(note("first"), { scope }) // executed
      yield* Effect.exit(executor.execute(note("other words"), { scope })) // mismatch
      yield* run("x", { id: "lone \ud800" }) // unkeyable
      const lost = yield* Effect.forkChild(run("lost"), { startImmediately: true })
      const ctx = yield* Deferred.await(started)
      yield* store.park({ scope: "acme", key: ctx.key, fence: ctx.fence }, { error: null })
      yield* Fiber.join(lost) // lease_lost
      assert.deepStrictEqual(yield* Effect.forEach(finals, countOf), [2, 1, 0, 1, 2, 1, 2, 0, 1, 1])
      assert.strictEqual(yield* totalOf, 11)
    }).pipe(Effect.provide(Store.layerMemory), Effect.provideService(Metric.MetricRegistry, new Map())))
})
