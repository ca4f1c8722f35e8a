/**
 * The outbox conformance suite: the same tests against every store (memory, PGlite, the PostgreSQL
 * server). A call's follow-ups are written by the statement that completes it (or resolves it as
 * applied), fenced with it: a stale worker's completion writes none; failed, released and
 * `unknown` calls write none; the payload is kept byte for byte, keyed `<downstream key>:<ordinal>`.
 */
import { assert, layer } from "@effect/vitest"
import { IdempotencyKey } from "@toolgate/core"
import { FollowUp, IdempotencyStore as Store, Outbox, Records, ToolExecutor } from "@toolgate/runtime"
import { ValidatedCall } from "@toolgate/testing"
import { Effect, Exit, type Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

const { IdempotencyStore } = Store

const base = Date.UTC(2031, 0, 1)
const at = (ms: number): Date => new Date(base + ms)

let counter = 0
const fresh = (label: string): Store.RecordRef => ({
  scope: `outbox-${label}-${++counter}-${Math.random().toString(36).slice(2, 8)}`,
  key: `tg1:sha256:${label}-${++counter}-${Math.random().toString(36).slice(2)}`
})

const request = (ref: Store.RecordRef, over: Partial<Store.ClaimRequest> = {}): Store.ClaimRequest => ({
  ...ref,
  tool: "assign_owner",
  fingerprint: "fp-1",
  owner: `owner-${++counter}`,
  leaseMs: 1_000,
  retentionMs: 60_000,
  maxAttempts: 10,
  recovery: "reexecute",
  now: at(0),
  ...over
})

const claimed = (claim: Store.Claim): Store.Lease => {
  if (claim._tag !== "Claimed") return assert.fail(`expected a won claim, got ${claim.record.status}`)
  return claim.lease
}

const hex64 = () => Array.from({ length: 64 }, () => Math.floor(Math.random() * 16).toString(16)).join("")

/** A payload whose members are in no sorted order (jsonb would reorder them). */
const notify = (lead: string, n: number) =>
  FollowUp.webhook("http://127.0.0.1:9/slack", { z: n, lead, a: [1, "two"] }, { orderingKey: `${lead}/slack` })

const messagesOf = (ref: Store.RecordRef) =>
  Effect.gen(function*() {
    const outbox = yield* Outbox.Outbox
    return yield* outbox.list({ scope: ref.scope, key: ref.key, limit: 1000 })
  })

const encode = (ref: Store.RecordRef, generation: number, followUps: ReadonlyArray<FollowUp.FollowUp>) => {
  const encoded = FollowUp.encodeAll(IdempotencyKey.downstreamKey(ref.key, generation), followUps)
  if (encoded instanceof FollowUp.InvalidFollowUp) return assert.fail(encoded.message)
  return encoded
}

const AssignOwner = Tool.make("assign_owner", {
  parameters: Schema.Struct({ lead: Schema.String, owner_id: Schema.String }),
  success: Schema.Struct({ id: Schema.String }),
  failure: Schema.Struct({ code: Schema.String })
})
const Kit = Toolkit.make(AssignOwner)

/**
 * Registers the suite for one layer providing the store and its outbox. `propertyRuns`: cases of
 * the interleaving property.
 */
export const outboxSuite = (
  name: string,
  stores: Layer.Layer<Store.IdempotencyStore | Outbox.Outbox, unknown>,
  options: { readonly propertyRuns: number } = { propertyRuns: 30 }
) =>
  layer(stores, { timeout: 60_000 })(name, (it) => {
    it.effect("a completion writes its follow-ups in order, payload byte for byte, keyed by downstream key and ordinal", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("complete")
        const lease = claimed(yield* store.claim(request(ref)))
        const followUps = encode(ref, lease.generation, [
          notify("L-1", 1),
          FollowUp.named("ads", { gclid: "G-1", value: 1200 }, { delayMs: 5_000 })
        ])
        yield* store.complete(lease, { result: `{"id":"o-1"}`, retentionMs: 60_000, followUps, now: at(10) })
        const messages = yield* messagesOf(ref)
        assert.strictEqual(messages.length, 2)
        const downstream = IdempotencyKey.downstreamKey(ref.key, lease.generation)
        assert.deepStrictEqual(messages.map((m) => m.deliveryKey), [`${downstream}:0`, `${downstream}:1`])
        assert.strictEqual(messages[0].payload, `{"z":1,"lead":"L-1","a":[1,"two"]}`)
        assert.deepStrictEqual(messages.map((m) => [m.kind, m.destination, m.orderingKey]), [
          ["webhook", "http://127.0.0.1:9/slack", "L-1/slack"],
          ["named", "ads", null]
        ])
        for (const m of messages) {
          assert.strictEqual(m.status, "pending")
          assert.strictEqual(m.attempts, 0)
          assert.strictEqual(m.fence, lease.fence)
          assert.strictEqual(m.createdAt.getTime(), at(10).getTime())
        }
        assert.strictEqual(messages[0].availableAt.getTime(), at(10).getTime())
        assert.strictEqual(messages[1].availableAt.getTime(), at(5_010).getTime())
        assert.isTrue(messages[0].id < messages[1].id)
      }))

    it.effect("a stale worker's completion writes no follow-up; the owner's does", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = fresh("stale")
        const first = claimed(yield* store.claim(request(ref)))
        // the lease expires; another worker takes the call over
        const second = claimed(yield* store.claim(request(ref, { now: at(2_000) })))
        assert.isTrue(second.fence > first.fence)
        const stale = yield* Effect.exit(
          store.complete(first, {
            result: `{"id":"stale"}`,
            retentionMs: 60_000,
            followUps: encode(ref, first.generation, [notify("L-2", 1)]),
            now: at(2_100)
          })
        )
        assert.isTrue(Exit.isFailure(stale))
        assert.deepStrictEqual(yield* messagesOf(ref), [])
        yield* store.complete(second, {
          result: `{"id":"fresh"}`,
          retentionMs: 60_000,
          followUps: encode(ref, second.generation, [notify("L-2", 2)]),
          now: at(2_200)
        })
        const messages = yield* messagesOf(ref)
        assert.strictEqual(messages.length, 1)
        assert.strictEqual(messages[0].fence, second.fence)
        assert.strictEqual(messages[0].payload, `{"z":2,"lead":"L-2","a":[1,"two"]}`)
      }))

    it.effect("resolving unknown as succeeded writes the follow-ups; as released or failed, or stale, none", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const parked = (label: string) =>
          Effect.gen(function*() {
            const ref = fresh(label)
            const lease = claimed(yield* store.claim(request(ref)))
            const fence = yield* store.park(lease, { error: null, now: at(1) })
            return { ref, fence, generation: lease.generation }
          })
        const applied = yield* parked("resolve-applied")
        yield* store.resolve({ ...applied.ref, fence: applied.fence }, {
          _tag: "Succeeded",
          result: `{"id":"o-3"}`,
          followUps: encode(applied.ref, applied.generation, [notify("L-3", 1), notify("L-3", 2)])
        }, { retentionMs: 60_000, now: at(2) })
        assert.strictEqual((yield* messagesOf(applied.ref)).length, 2)

        const audited = yield* parked("resolve-audited")
        yield* store.resolve({ ...audited.ref, fence: audited.fence }, {
          _tag: "Succeeded",
          result: `{"id":"o-4"}`,
          followUps: encode(audited.ref, audited.generation, [notify("L-4", 1)])
        }, { retentionMs: 60_000, now: at(2), audit: { by: "ops@acme", reason: "seen in the CRM" } })
        assert.strictEqual((yield* messagesOf(audited.ref)).length, 1)
        assert.strictEqual((yield* store.resolutions(audited.ref)).length, 1)

        const stale = yield* parked("resolve-stale")
        const exit = yield* Effect.exit(
          store.resolve({ ...stale.ref, fence: stale.fence - 1n }, {
            _tag: "Succeeded",
            result: `{"id":"o-5"}`,
            followUps: encode(stale.ref, stale.generation, [notify("L-5", 1)])
          }, { retentionMs: 60_000, now: at(2), audit: { by: "ops@acme", reason: null } })
        )
        assert.isTrue(Exit.isFailure(exit))
        assert.deepStrictEqual(yield* messagesOf(stale.ref), [])
        assert.strictEqual(
          (yield* store.read(stale.ref)).pipe((r) => r._tag === "Some" ? r.value.status : null),
          "unknown"
        )
      }))

    it.effect("Records.resolve as applied writes the follow-ups it is given, keyed by the record's downstream key", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ref = { scope: fresh("records").scope, key: `tg1:sha256:${hex64()}` }
        const lease = claimed(yield* store.claim(request(ref)))
        yield* store.park(lease, { error: null })
        const resolved = yield* Records.resolve({ key: ref.key, scope: ref.scope }, {
          outcome: { _tag: "Applied", result: `{"id":"o-6"}`, followUps: [notify("L-6", 1)] },
          by: "ops@acme",
          reason: "the CRM shows the owner"
        })
        assert.strictEqual(resolved.record.status, "succeeded")
        const messages = yield* messagesOf(ref)
        assert.deepStrictEqual(messages.map((m) => m.deliveryKey), [
          `${IdempotencyKey.downstreamKey(ref.key, lease.generation)}:0`
        ])
        const refused = yield* Effect.exit(Records.resolve({ key: ref.key, scope: ref.scope }, {
          outcome: { _tag: "Applied", followUps: [FollowUp.webhook("ftp://nowhere", {})] },
          by: "ops@acme"
        }))
        assert.isTrue(Exit.isFailure(refused))
      }))

    it.effect("through the executor: a verified result writes its follow-ups; failed, released and unknown calls none", () =>
      Effect.gen(function*() {
        const executor = yield* ToolExecutor.make(Kit, {
          assign_owner: {
            recovery: "manual",
            classify: () => "applied",
            run: (params) =>
              params.owner_id === "fail"
                ? Effect.fail({ code: "refused" })
                : params.owner_id === "not-applied"
                ? Effect.fail(new ToolExecutor.NotApplied({ detail: "503 before any effect" }))
                : params.owner_id === "ambiguous"
                ? Effect.fail(new ToolExecutor.Ambiguous({ detail: "reset after the request was sent" }))
                : Effect.succeed({ id: `own-${params.lead}` }),
            followUps: (params, result, context) => [
              FollowUp.webhook("http://127.0.0.1:9/slack", { lead: params.lead, owner: result.id }, {
                orderingKey: params.lead
              }),
              FollowUp.named("ads", { lead: params.lead, key: context.downstreamKey })
            ]
          }
        })
        const tenant = `exec-${++counter}-${Math.random().toString(36).slice(2, 8)}`
        const run = (owner: string) =>
          executor.execute(ValidatedCall.make(AssignOwner, { lead: `L-${owner}`, owner_id: owner }), {
            scope: { tenant, turn: "t-1" }
          })
        const outbox = yield* Outbox.Outbox
        const done = yield* run("u-7")
        assert.strictEqual(done._tag, "Executed")
        for (const owner of ["fail", "not-applied", "ambiguous"]) {
          assert.isTrue(Exit.isFailure(yield* Effect.exit(run(owner))))
        }
        const replay = yield* run("u-7")
        assert.strictEqual(replay._tag, "Replayed")
        const messages = yield* outbox.list({ scope: tenant })
        assert.strictEqual(messages.length, 2)
        const downstream = done._tag === "Executed" ? done.downstreamKey : ""
        assert.deepStrictEqual(messages.map((m) => m.deliveryKey), [`${downstream}:0`, `${downstream}:1`])
        assert.strictEqual(messages[0].payload, `{"lead":"L-u-7","owner":"own-L-u-7"}`)
        assert.strictEqual(messages[1].payload, JSON.stringify({ lead: "L-u-7", key: downstream }))
      }))

    it.effect("a follow-up the store cannot take fails the call as applied and writes nothing", () =>
      Effect.gen(function*() {
        const executor = yield* ToolExecutor.make(Kit, {
          assign_owner: {
            run: (params) => Effect.succeed({ id: params.owner_id }),
            followUps: () => [FollowUp.webhook("not a url", {})]
          }
        })
        const tenant = `invalid-${++counter}-${Math.random().toString(36).slice(2, 8)}`
        const exit = yield* Effect.exit(
          executor.execute(ValidatedCall.make(AssignOwner, { lead: "L-8", owner_id: "u-8" }), {
            scope: { tenant, turn: "t-1" }
          })
        )
        assert.isTrue(Exit.isFailure(exit))
        const outbox = yield* Outbox.Outbox
        assert.deepStrictEqual(yield* outbox.list({ scope: tenant }), [])
      }))

    it.effect.prop(
      "any interleaving of stale and current completions: messages exist only for the fence that completed",
      {
        workers: Schema.Int.check(Schema.isBetween({ minimum: 2, maximum: 6 })),
        order: Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 5 }))),
        count: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 4 }))
      },
      ({ count, order, workers }) =>
        Effect.gen(function*() {
          const store = yield* IdempotencyStore
          const ref = fresh("prop")
          // each worker takes the call over after the previous one's lease expired
          const leases: Array<Store.Lease> = []
          for (let w = 0; w < workers; w++) {
            leases.push(claimed(yield* store.claim(request(ref, { now: at(w * 2_000) }))))
          }
          const attempts = order.length === 0 ? [workers - 1] : order.map((i) => i % workers)
          const completed = new Set<number>()
          for (const w of attempts) {
            const exit = yield* Effect.exit(store.complete(leases[w], {
              result: `{"id":"w${w}"}`,
              retentionMs: 60_000,
              followUps: encode(
                ref,
                leases[w].generation,
                Array.from({ length: count }, (_, i) => notify(`L-w${w}`, i))
              ),
              now: at(workers * 2_000)
            }))
            if (Exit.isSuccess(exit)) completed.add(w)
          }
          const messages = yield* messagesOf(ref)
          const last = workers - 1
          assert.isTrue([...completed].every((w) => w === last))
          assert.strictEqual(messages.length, completed.has(last) ? count : 0)
          for (const m of messages) {
            assert.strictEqual(m.fence, leases[last].fence)
            assert.isTrue(m.payload.includes(`"L-w${last}"`))
          }
        }),
      { arbitrary: { runs: options.propertyRuns } }
    )
  })
