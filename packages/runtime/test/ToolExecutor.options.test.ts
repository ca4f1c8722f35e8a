/**
 * Executor options and handler overrides are checked when the executor is built: each rule of
 * `ToolExecutor.Options`, its edge accepted, one step past it refused with
 * `InvalidExecutorOptions` naming the option and the tool.
 */
import { assert, describe, it } from "@effect/vitest"
import { IdempotencyStore as Store, ToolExecutor } from "@toolgate/runtime"
import { Effect, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

const Ping = Tool.make("Ping", {
  parameters: Schema.Struct({ id: Schema.String }),
  success: Schema.Struct({ ok: Schema.Boolean })
})
const Kit = Toolkit.make(Ping)
const ping = { recovery: "reexecute" as const, run: () => Effect.succeed({ ok: true }) }

const refused: ReadonlyArray<
  readonly [string, ToolExecutor.Options, Partial<ToolExecutor.Handler<typeof Ping>>, string, string | null]
> = [
  ["a lease of 0 ms", { leaseMs: 0 }, {}, "leaseMs", null],
  ["a negative lease", { leaseMs: -1 }, {}, "leaseMs", null],
  ["a lease under 100 ms", { leaseMs: 99.9 }, {}, "leaseMs", null],
  ["an infinite lease", { leaseMs: Number.POSITIVE_INFINITY }, {}, "leaseMs", null],
  ["a NaN lease", { leaseMs: Number.NaN }, {}, "leaseMs", null],
  ["a handler's lease of 0 ms", {}, { leaseMs: 0 }, "leaseMs", "Ping"],
  ["a heartbeat as long as the lease", { leaseMs: 1_000, heartbeatMs: 1_000 }, {}, "heartbeatMs", "Ping"],
  ["a heartbeat over half the lease", { leaseMs: 1_000, heartbeatMs: 501 }, {}, "heartbeatMs", "Ping"],
  [
    "a heartbeat over half a handler's shorter lease",
    { heartbeatMs: 1_000 },
    { leaseMs: 1_500 },
    "heartbeatMs",
    "Ping"
  ],
  ["a heartbeat under 10 ms", { heartbeatMs: 9 }, {}, "heartbeatMs", null],
  ["a heartbeat of 0 ms", { heartbeatMs: 0 }, {}, "heartbeatMs", null],
  ["a timeout of 0 ms", { timeoutMs: 0 }, {}, "timeoutMs", null],
  ["a handler's negative timeout", {}, { timeoutMs: -5 }, "timeoutMs", "Ping"],
  ["a retention of 0 ms", { retentionMs: 0 }, {}, "retentionMs", null],
  ["an infinite retention", { retentionMs: Number.POSITIVE_INFINITY }, {}, "retentionMs", null],
  ["0 attempts", { maxAttempts: 0 }, {}, "maxAttempts", null],
  ["a fractional attempt limit on a handler", {}, { maxAttempts: 2.5 }, "maxAttempts", "Ping"],
  ["a result limit of 0 bytes", { maxResultBytes: 0 }, {}, "maxResultBytes", null],
  ["a negative wait", { waitMs: -1 }, {}, "waitMs", null],
  ["negative store retries", { storeRetries: -1 }, {}, "storeRetries", null],
  ["a concurrency of 0", { concurrency: 0 }, {}, "concurrency", null]
]

describe("ToolExecutor options: validated at construction", () => {
  for (const [name, options, override, option, tool] of refused) {
    it.effect(`refused: ${name}`, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(
          ToolExecutor.make(Kit, { Ping: { ...ping, ...override } as ToolExecutor.Handler<typeof Ping> }, options)
        )
        assert.strictEqual(error._tag, "InvalidExecutorOptions")
        assert.strictEqual(error.option, option)
        assert.strictEqual(error.tool, tool)
        assert.include(error.message, option)
        assert.notInclude(error.message, "\n")
      }).pipe(Effect.provide(Store.layerMemory)))
  }

  it.effect("the edges are accepted: a 100 ms lease, a heartbeat of half the lease, no timeout, 0 wait", () =>
    Effect.gen(function*() {
      for (
        const options of [
          { leaseMs: 100 },
          { leaseMs: 1_000, heartbeatMs: 500 },
          { heartbeatMs: 10 },
          { timeoutMs: Number.POSITIVE_INFINITY },
          { waitMs: 0, storeRetries: 0, maxAttempts: 1, maxResultBytes: 1_000_000, concurrency: 1 }
        ] satisfies ReadonlyArray<ToolExecutor.Options>
      ) {
        const executor = yield* ToolExecutor.make(Kit, { Ping: ping }, options)
        const call = {
          index: 0,
          id: "call_1",
          name: "Ping",
          tool: Ping,
          params: { id: "edge" },
          arguments: { id: "edge" },
          argumentsText: `{"id":"edge"}`
        } as const
        const outcome = yield* executor.execute(call, { scope: { tenant: "acme", turn: `edge-${Math.random()}` } })
        assert.strictEqual(outcome._tag, "Executed")
      }
    }).pipe(Effect.provide(Store.layerMemory)))

  it.effect("a tool without a handler, or reconcile without a probe, is refused too", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(ToolExecutor.make(Kit, {} as never))
      assert.strictEqual(missing.option, "handlers")
      assert.strictEqual(missing.tool, "Ping")
      const noProbe = yield* Effect.flip(
        ToolExecutor.make(Kit, { Ping: { recovery: "reconcile", run: ping.run } } as never)
      )
      assert.strictEqual(noProbe.option, "probe")
      const probed = yield* ToolExecutor.make(Kit, {
        Ping: { recovery: "reconcile", probe: () => Effect.succeed(Option.none()), run: ping.run }
      })
      assert.isFunction(probed.execute)
    }).pipe(Effect.provide(Store.layerMemory)))

  it.effect("the layer fails the same way", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.provide(
          ToolExecutor.ToolExecutor.use(() => Effect.void),
          ToolExecutor.layer(Kit, { Ping: ping }, { leaseMs: 0 })
        )
      )
      assert.strictEqual(error._tag, "InvalidExecutorOptions")
    }).pipe(Effect.provide(Store.layerMemory)))
})
