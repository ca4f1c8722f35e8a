import { assert, describe, it } from "@effect/vitest"
import type { ToolCall } from "@toolgate/core"
import { ExecutionError, ExecutionMetrics, IdempotencyStore as Store, ToolExecutor } from "@toolgate/runtime"
import { Cause, Effect, Exit, Layer, Metric, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

const Slow = Tool.make("Slow", {
  parameters: Schema.Struct({ id: Schema.String }),
  success: Schema.Struct({ ok: Schema.Boolean })
})
const Kit = Toolkit.make(Slow)
const call = (id: string): ToolCall.ValidatedToolCall<typeof Slow> => ({
  index: 0,
  id: `call_${id}`,
  name: "Slow",
  tool: Slow,
  params: { id },
  arguments: { id },
  argumentsText: JSON.stringify({ id })
})

const countOf = (outcome: ExecutionMetrics.Outcome) =>
  Metric.value(Metric.withAttributes(ExecutionMetrics.executions, { outcome })).pipe(Effect.map((s) => s.count))

const unavailable = (operation: string) =>
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
    }).pipe(Effect.provide(parkFails), Effect.provideService(Metric.MetricRegistry, new Map())))
})
