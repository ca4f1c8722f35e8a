import { assert, describe, it } from "@effect/vitest"
import { IdempotencyStore as Store, ToolExecutor } from "@toolgate/runtime"
import { ValidatedCall } from "@toolgate/testing"
import { Cause, Effect, Exit, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

const { IdempotencyStore } = Store

class Boom extends Schema.TaggedError<Boom>()("Boom", { n: Schema.Int }) {}

const Act = Tool.make("Act", {
  parameters: Schema.Struct({ id: Schema.String }),
  success: Schema.Struct({ ref: Schema.String }),
  failure: Boom
})
const Kit = Toolkit.make(Act)

const call = (args: { readonly id: string }) => ValidatedCall.make(Act, args)

const scope = () => ({ tenant: "acme", turn: `t-${Math.random()}` })

const typed = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) return assert.fail("expected a failure")
  const found = Cause.findErrorOption(exit.cause)
  if (Option.isNone(found)) return assert.fail(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return found.value
}

const statusOf = (key: string, tenant: string) =>
  IdempotencyStore.use((s) => s.read({ scope: tenant, key })).pipe(
    Effect.map((r) => Option.getOrThrow(r).status)
  )

const keyOf = (e: unknown): string => (e as { keyHash: string }).keyHash

describe("ToolExecutor break: user code that throws instead of failing", () => {
  it.live("a handler whose run throws synchronously: typed OutcomeUnknown, record parked, never in_progress", () =>
    Effect.gen(function*() {
      let runs = 0
      const executor = yield* ToolExecutor.make(Kit, {
        Act: {
          recovery: "manual",
          run: (): Effect.Effect<{ readonly ref: string }> => {
            runs++
            throw new Error("sync throw before returning an effect")
          }
        }
      })
      const s = scope()
      const error = typed(yield* Effect.exit(executor.execute(call({ id: "a" }), { scope: s })))
      assert.strictEqual(error._tag, "OutcomeUnknown")
      assert.strictEqual(yield* statusOf(keyOf(error), s.tenant), "unknown")
      const again = typed(yield* Effect.exit(executor.execute(call({ id: "a" }), { scope: s })))
      assert.strictEqual(again._tag, "OutcomeUnknown")
      assert.strictEqual(runs, 1)
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("a reconcile probe that throws synchronously on a takeover: typed, parked", () =>
    Effect.gen(function*() {
      const executor = yield* ToolExecutor.make(Kit, {
        Act: {
          recovery: "reconcile",
          probe: (): Effect.Effect<Option.Option<{ readonly ref: string }>> => {
            throw new Error("probe throws")
          },
          run: () => Effect.succeed({ ref: "r" })
        }
      })
      const s = scope()
      const store = yield* IdempotencyStore
      // a first attempt that vanished: claim with a short lease, let it expire
      const first = typed(
        yield* Effect.exit(
          ToolExecutor.make(Kit, {
            Act: { recovery: "reconcile", probe: () => Effect.succeed(Option.none()), run: () => Effect.die("x") }
          }).pipe(Effect.flatMap((e) => e.execute(call({ id: "p" }), { scope: s })))
        )
      )
      assert.strictEqual(first._tag, "OutcomeUnknown")
      const error = typed(yield* Effect.exit(executor.execute(call({ id: "p" }), { scope: s })))
      assert.strictEqual(error._tag, "OutcomeUnknown")
      const record = Option.getOrThrow(yield* store.read({ scope: s.tenant, key: keyOf(error) }))
      assert.strictEqual(record.status, "unknown")
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("an externalRef that throws after the effect happened: the result is still recorded, never left in_progress", () =>
    Effect.gen(function*() {
      let runs = 0
      const executor = yield* ToolExecutor.make(Kit, {
        Act: {
          recovery: "reexecute",
          externalRef: () => {
            throw new Error("externalRef throws")
          },
          run: () => Effect.sync(() => ({ ref: `r${++runs}` }))
        }
      })
      const s = scope()
      const exit = yield* Effect.exit(executor.execute(call({ id: "e" }), { scope: s }))
      if (Exit.isFailure(exit)) return assert.fail(Cause.pretty(exit.cause))
      assert.strictEqual(exit.value._tag, "Executed")
      assert.strictEqual(yield* statusOf(exit.value.key, s.tenant), "succeeded")
      const replay = yield* executor.execute(call({ id: "e" }), { scope: s })
      assert.strictEqual(replay._tag, "Replayed")
      assert.strictEqual(runs, 1)
    }).pipe(Effect.provide(Store.layerMemory)))

  it.live("a classify that throws on the tool's own failure: typed OutcomeUnknown, record parked", () =>
    Effect.gen(function*() {
      const executor = yield* ToolExecutor.make(Kit, {
        Act: {
          recovery: "manual",
          classify: () => {
            throw new Error("classify throws")
          },
          run: () => Effect.fail(new Boom({ n: 1 }))
        }
      })
      const s = scope()
      const error = typed(yield* Effect.exit(executor.execute(call({ id: "c" }), { scope: s })))
      assert.strictEqual(error._tag, "OutcomeUnknown")
      assert.strictEqual(yield* statusOf(keyOf(error), s.tenant), "unknown")
    }).pipe(Effect.provide(Store.layerMemory)))
})
