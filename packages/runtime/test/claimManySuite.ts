/**
 * The batch claim's conformance (`IdempotencyStore.claimMany`, and `ToolExecutor.executeAll`
 * over it) against every store layer: each request of a batch is answered as a single claim
 * would answer it, in request order; concurrent batches of overlapping keys win each key once;
 * concurrent `executeAll` steps of overlapping calls run each handler once.
 */
import { assert, layer } from "@effect/vitest"
import { ExecutionError, IdempotencyStore as Store, ToolExecutor } from "@toolgate/runtime"
import { ValidatedCall } from "@toolgate/testing"
import { Effect, type Layer, Result, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

import { at, fresh, request } from "./storeRequests.js"

const { IdempotencyStore } = Store

/** A claim's answer without its instants and fences (what two equivalent histories share). */
const shape = (claim: Store.Claim) =>
  claim._tag === "Claimed"
    ? { _tag: claim._tag, key: claim.lease.key, kind: claim.lease.kind, attempt: claim.lease.attempt }
    : { _tag: claim._tag, key: claim.record.key, status: claim.record.status, attempt: claim.record.attempt }

const CreateTask = Tool.make("CreateTask", {
  parameters: Schema.Struct({ dealId: Schema.String }),
  success: Schema.Struct({ taskId: Schema.String })
})
const Crm = Toolkit.make(CreateTask)

/** A seeded history of one record: what a claim of it meets. */
const Seed = Schema.Literals([
  "none",
  "live",
  "expired",
  "succeeded",
  "failed",
  "released",
  "unknown",
  "otherFingerprint"
])

/**
 * Registers the batch-claim suite for one store layer; `propertyRuns` is how many cases the
 * equivalence property draws.
 */
export const claimManyConformance = (
  name: string,
  storeLayer: Layer.Layer<Store.IdempotencyStore, unknown>,
  options: { readonly propertyRuns: number }
): void =>
  layer(storeLayer, { timeout: "120 seconds", excludeTestServices: true })(name, (it) => {
    /** Brings `ref` to `seed` at instant 0 (on `store`). */
    const seeded = (store: Store.IdempotencyStore["Service"], ref: Store.RecordRef, seed: typeof Seed.Type) =>
      Effect.gen(function*() {
        if (seed === "none") return
        const claim = yield* store.claim(
          request(ref, {
            fingerprint: seed === "otherFingerprint" ? "fp-2" : "fp-1",
            leaseMs: seed === "expired" ? 1 : 1_000
          })
        )
        if (claim._tag !== "Claimed") return assert.fail("the seed claim lost")
        const lease = claim.lease
        if (seed === "succeeded") {
          yield* store.complete(lease, { result: "{\"ok\":true}", retentionMs: 60_000, now: at(1) })
        }
        if (seed === "released") {
          yield* store.release(lease, { error: null, now: at(1) })
        }
        if (seed === "failed") {
          yield* store.fail(lease, { error: "{\"refused\":true}", retentionMs: 60_000, now: at(1) })
        }
        if (seed === "unknown") yield* store.park(lease, { error: null, now: at(1) })
      })

    it.effect.prop(
      "any batch over seeded records (repeats included) answers as the same claims made one by one",
      {
        seeds: Schema.Array(Seed).check(Schema.isMinLength(1), Schema.isMaxLength(5)),
        picks: Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 4 }))).check(
          Schema.isMinLength(1),
          Schema.isMaxLength(8)
        )
      },
      ({ picks, seeds }) =>
        Effect.gen(function*() {
          const store = yield* IdempotencyStore
          const batchRefs = seeds.map(() => fresh("batch"))
          const singleRefs = seeds.map(() => fresh("single"))
          for (let i = 0; i < seeds.length; i++) {
            yield* seeded(store, batchRefs[i], seeds[i])
            yield* seeded(store, singleRefs[i], seeds[i])
          }
          const chosen = picks.map((p) => p % seeds.length)
          const batch = yield* store.claimMany(chosen.map((i) => request(batchRefs[i], { now: at(2) })))
          const singles: Array<Store.Claim> = []
          for (const i of chosen) singles.push(yield* store.claim(request(singleRefs[i], { now: at(2) })))
          assert.strictEqual(batch.length, chosen.length)
          const rename = (claim: Store.Claim, i: number) => ({ ...shape(claim), key: chosen[i] })
          assert.deepStrictEqual(batch.map(rename), singles.map(rename))
          for (const [i, claim] of batch.entries()) {
            if (claim._tag === "Claimed") assert.strictEqual(claim.lease.scope, batchRefs[chosen[i]].scope)
          }
        }),
      { arbitrary: { runs: options.propertyRuns } }
    )

    it.effect("a repeat that brings a later now of its own is decided at the batch's clock: the key is won once", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("clock")
        // at(5_000) the batch's own 1 s lease would have expired: claimed alone then, the repeat takes it over
        const batch = yield* store.claimMany([request(ref, { now: at(2) }), request(ref, { now: at(5_000) })])
        assert.deepStrictEqual(batch.map(shape).map(({ _tag }) => _tag), ["Claimed", "Existing"])
      }))

    it.effect("a batch whose first request names no now is decided at the store's clock for every request", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("clockless")
        const batch = yield* store.claimMany([
          request(ref, { now: undefined }),
          request(ref, { now: new Date(Date.now() + 3_600_000) })
        ])
        assert.deepStrictEqual(batch.map(shape).map(({ _tag }) => _tag), ["Claimed", "Existing"])
      }))

    it.effect("text with a lone surrogate (a tenant, a tool, an owner) is claimed in a batch as a single claim takes it", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const odd = (ref: Store.RecordRef) => ({ ...ref, scope: `${ref.scope}-\ud800` })
        const overs = [{}, { tool: "Create\udc00Task" }, { owner: "owner-\ud83d" }]
        const singles: Array<Store.Claim> = []
        for (const over of overs) singles.push(yield* store.claim(request(odd(fresh("surrogate")), over)))
        const refs = overs.map(() => odd(fresh("surrogate")))
        const batch = yield* store.claimMany([...overs.map((over, i) => request(refs[i], over)), request(refs[0])])
        const tags = (claims: ReadonlyArray<Store.Claim>) => claims.map((c) => c._tag)
        assert.deepStrictEqual(tags(batch), [...tags(singles), "Existing"])
        for (const [i, claim] of batch.slice(0, overs.length).entries()) {
          assert.strictEqual(claim._tag === "Claimed" ? claim.lease.scope : "", refs[i].scope)
        }
      }))

    it.effect("a batch the store refuses for one request's arguments (over 256 KiB) writes none of its records", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ok = fresh("oversized")
        const big = fresh("oversized")
        const refused = yield* Effect.result(
          store.claimMany([request(ok), request(big, { arguments: JSON.stringify({ a: "x".repeat(300_000) }) })])
        )
        const failure = Result.isFailure(refused) ? refused.failure : undefined
        assert.strictEqual(failure?._tag === "StoreUnavailable" ? failure.reason : failure?._tag, "ConstraintError")
        // nothing is held: the first record is claimable at once, not in progress until its lease expires
        assert.isTrue((yield* store.read(ok))._tag === "None")
        assert.isTrue((yield* store.read(big))._tag === "None")
      }))

    it.effect("a batch with an impossible request is refused whole; nothing is written", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ok = fresh("refused")
        const refused = yield* Effect.result(store.claimMany([request(ok), request(fresh("refused"), { leaseMs: 0 })]))
        assert.isTrue(Result.isFailure(refused) && refused.failure._tag === "InvalidStoreRequest")
        assert.isTrue((yield* store.read(ok))._tag === "None")
      }))

    it.effect("12 fibers claim overlapping batches of 6 keys in shuffled orders: each key is won once", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const refs = Array.from({ length: 6 }, () => fresh("overlap"))
        const batches = Array.from({ length: 12 }, (_unused, f) => {
          // every batch holds 4 of the 6 keys, starting at a different one, in alternating directions
          const picked = Array.from({ length: 4 }, (_, j) => refs[(f + j) % refs.length])
          return f % 2 === 0 ? picked : picked.toReversed()
        })
        const answers = yield* Effect.all(
          batches.map((batch) => store.claimMany(batch.map((ref) => request(ref)))),
          { concurrency: "unbounded" }
        )
        for (const ref of refs) {
          const won = answers.flat().filter((c) => c._tag === "Claimed" && c.lease.key === ref.key)
          assert.strictEqual(won.length, 1, `key ${ref.key} won ${won.length} times`)
        }
        for (const claim of answers.flat()) {
          if (claim._tag === "Existing") assert.strictEqual(claim.record.status, "in_progress")
        }
      }))

    it.effect("executeAll: a batch claim the store fails fails each of its calls; a call beyond the batch claims alone", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const down = new ExecutionError.StoreUnavailable({
          keyHash: null,
          operation: "claim",
          reason: "ConnectionError",
          code: null,
          retryable: false
        })
        let batches = 0
        const failing: Store.IdempotencyStore["Service"] = {
          ...store,
          claimMany: () => Effect.sync(() => batches++).pipe(Effect.andThen(Effect.fail(down)))
        }
        let runs = 0
        const executor = yield* ToolExecutor.make(Crm, {
          CreateTask: { recovery: "reexecute", run: (params) => Effect.sync(() => (runs++, { taskId: params.dealId })) }
        }).pipe(Effect.provideService(IdempotencyStore, failing))
        const scope = { tenant: "acme", turn: `down-${Math.random()}` }
        const calls = ["A", "B", "C"].map((d) => ValidatedCall.make(CreateTask, { dealId: d }, { id: `call_${d}` }))
        const results = yield* executor.executeAll(calls, { scope, concurrency: 2 })
        assert.strictEqual(batches, 1)
        assert.deepStrictEqual(results.map((r) => Result.isFailure(r) ? r.failure._tag : r.success._tag), [
          "StoreUnavailable",
          "StoreUnavailable",
          "Executed"
        ])
        assert.strictEqual(runs, 1)
      }))

    it.effect("8 fibers run the same step of 5 calls through executeAll: each handler once, the rest replay", () =>
      Effect.gen(function*() {
        const runs = new Map<string, number>()
        const executor = yield* ToolExecutor.make(Crm, {
          CreateTask: {
            recovery: "reexecute",
            run: (params) =>
              Effect.sleep("5 millis").pipe(
                Effect.map(() => {
                  runs.set(params.dealId, (runs.get(params.dealId) ?? 0) + 1)
                  return { taskId: `task-${params.dealId}` }
                })
              )
          }
        }, { waitMs: 20_000 })
        const scope = { tenant: "acme", turn: `step-${Math.random()}` }
        const step = (worker: number) =>
          Array.from(
            { length: 5 },
            (_, i) =>
              ValidatedCall.make(CreateTask, { dealId: `D-${i}` }, { id: `call_${worker}_${i}` })
          )
        const results = yield* Effect.all(
          Array.from({ length: 8 }, (_, w) => executor.executeAll(step(w), { scope })),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual([...runs.entries()].toSorted(), Array.from({ length: 5 }, (_, i) => [`D-${i}`, 1]))
        const outcomes = results.flat().map((r) => Result.getOrThrow(r))
        assert.strictEqual(outcomes.filter((o) => o._tag === "Executed").length, 5)
        assert.strictEqual(outcomes.filter((o) => o._tag === "Replayed").length, 35)
        for (const [w, result] of results.entries()) {
          result.forEach((r, i) =>
            assert.deepStrictEqual(Result.getOrThrow(r).value, { taskId: `task-D-${i}` }, `${w}`)
          )
        }
      }), { timeout: 60_000 })
  })
