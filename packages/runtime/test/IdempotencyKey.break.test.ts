import { assert, describe, it } from "@effect/vitest"
import { IdempotencyKey, type ToolCall } from "@toolgate/core"
import { IdempotencyStore as Store, ToolExecutor } from "@toolgate/runtime"
import { Effect, Result, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

const Blob = Tool.make("Blob", { parameters: Schema.Struct({ data: Schema.Unknown }), success: Schema.String })
const Kit = Toolkit.make(Blob)

/** Arguments as a provider would send them: JSON text, parsed (JSON.parse handles any depth). */
const nested = (depth: number) => {
  const text = `{"data":${"[".repeat(depth)}1${"]".repeat(depth)}}`
  const params = JSON.parse(text)
  return {
    index: 0,
    id: "call_deep",
    name: Blob.name,
    tool: Blob,
    params,
    arguments: params,
    argumentsText: text
  } as unknown as ToolCall.ValidatedToolCall<typeof Blob>
}

describe("IdempotencyKey break: deeply nested arguments", () => {
  it("20,000 levels: UnkeyableArguments, not a stack overflow", () => {
    const keyed = IdempotencyKey.materialOf(nested(20_000))
    assert.isTrue(Result.isFailure(keyed))
    if (Result.isFailure(keyed)) {
      assert.strictEqual(keyed.failure._tag, "UnkeyableArguments")
      if (keyed.failure._tag === "UnkeyableArguments") assert.match(keyed.failure.reason, /nested deeper/)
    }
    const direct = IdempotencyKey.canonical(JSON.parse(`${"[".repeat(20_000)}1${"]".repeat(20_000)}`))
    assert.isTrue(Result.isFailure(direct))
  })

  it("moderate nesting is still keyed", () => {
    assert.isTrue(Result.isSuccess(IdempotencyKey.materialOf(nested(100))))
  })

  it.live("executeAll answers the deep call with a typed error and runs the handler never", () =>
    Effect.gen(function*() {
      let runs = 0
      const executor = yield* ToolExecutor.make(Kit, { Blob: { run: () => Effect.sync(() => String(++runs)) } })
      const results = yield* executor.executeAll([nested(20_000)], { scope: { tenant: "acme", turn: "t-deep" } })
      assert.strictEqual(results.length, 1)
      const r = results[0]!
      assert.isTrue(Result.isFailure(r))
      if (Result.isFailure(r)) assert.strictEqual(r.failure._tag, "UnkeyableArguments")
      assert.strictEqual(runs, 0)
    }).pipe(Effect.provide(Store.layerMemory)))
})
