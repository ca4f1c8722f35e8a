/**
 * `executeAll` (its first calls claimed in one `claimMany`) against the same calls executed one by
 * one (`execute`, each with the ordinal `executeAll` gives it), over a step whose keys meet every
 * kind of record: new, completed, reused with other arguments (`IdempotencyKeyReused`), parked
 * `unknown`, leased by another live execution, a recorded tool failure, and the same call twice.
 * Both worlds are seeded the same way; their answers must match call for call.
 */
import { assert, describe, it } from "@effect/vitest"
import { IdempotencyKey } from "@toolgate/core"
import { IdempotencyStore as Store, ToolExecutor } from "@toolgate/runtime"
import { ValidatedCall } from "@toolgate/testing"
import { Deferred, Effect, Fiber, Layer, Result, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import * as Pglite from "./support/pglite.js"

class NotApplied extends Schema.TaggedError<NotApplied>()("NotApplied", { dealId: Schema.String }) {}

const Stage = Tool.make("Stage", {
  parameters: Schema.Struct({ dealId: Schema.String, stage: Schema.String, note: Schema.String }),
  success: Schema.Struct({ dealId: Schema.String, note: Schema.String }),
  failure: NotApplied
}).annotate(IdempotencyKey.KeyFields, ["dealId", "stage"])
const Crm = Toolkit.make(Stage)

const stage = (dealId: string, note: string) => ValidatedCall.make(Stage, { dealId, stage: "won", note })

/** One world: an executor whose handler dies on "boom", fails on its first "refused", blocks on "held". */
const world = Effect.gen(function*() {
  const held = yield* Deferred.make<void>()
  let refusals = 0
  const executor = yield* ToolExecutor.make(Crm, {
    Stage: {
      recovery: "manual",
      run: (params) =>
        params.dealId === "boom"
          ? Effect.die("handler crashed")
          : params.dealId === "held"
          ? Effect.as(Deferred.await(held), params)
          : params.dealId === "refused" && refusals++ === 0
          ? Effect.fail(new NotApplied({ dealId: params.dealId }))
          : Effect.succeed({ dealId: params.dealId, note: params.note })
    }
  }, { waitMs: 150 })
  const scope = { tenant: "acme", turn: `batch-${Math.random()}` }
  // the seeds: completed, completed under other arguments, parked unknown, refused, a live lease
  for (const seed of [stage("done", "n"), stage("reused", "first"), stage("boom", "n"), stage("refused", "first")]) {
    yield* Effect.result(executor.execute(seed, { scope }))
  }
  const holder = yield* Effect.forkChild(executor.execute(stage("held", "n"), { scope }))
  yield* Effect.sleep("20 millis")
  return { executor, scope, holder }
})

const step = [
  stage("done", "n"),
  stage("reused", "second"),
  stage("fresh", "n"),
  stage("boom", "n"),
  stage("held", "n"),
  stage("refused", "first"),
  stage("twice", "n"),
  stage("twice", "n")
]

const answer = (result: Result.Result<ToolExecutor.Outcome<unknown>, { readonly _tag: string }>) =>
  Result.isSuccess(result) ? { ok: result.success._tag, value: result.success.value } : { failed: result.failure._tag }

const suite = (name: string, store: Layer.Layer<Store.IdempotencyStore, unknown>) =>
  describe(name, () => {
    it.live("a step over every kind of record answers as its calls executed one by one", () =>
      Effect.gen(function*() {
        const batch = yield* world
        const together = (yield* batch.executor.executeAll(step, { scope: batch.scope, concurrency: 8 })).map(answer)
        yield* Fiber.interrupt(batch.holder)

        const single = yield* world
        const occurrences = new IdempotencyKey.Occurrences()
        const alone: Array<ReturnType<typeof answer>> = []
        for (const call of step) {
          const material = IdempotencyKey.materialOf(call, undefined)
          const ordinal = Result.isSuccess(material) ? occurrences.next(material.success) : 0
          alone.push(answer(yield* Effect.result(single.executor.execute(call, { scope: single.scope, ordinal }))))
        }
        yield* Fiber.interrupt(single.holder)
        assert.deepStrictEqual(together, alone)
        // the step reaches every kind of answer it was built for
        assert.includeMembers(together.map((a) => "ok" in a ? a.ok : a.failed), [
          "Executed",
          "Replayed",
          "IdempotencyKeyReused",
          "OutcomeUnknown",
          "ExecutionInProgress",
          "ToolExecutionFailed"
        ])
      }).pipe(Effect.provide(store)), { timeout: 30_000 })
  })

suite("executeAll vs execute: memory", Store.layerMemory)
suite("executeAll vs execute: PGlite", Store.layerSql().pipe(Layer.provide(Pglite.layer)))
