/**
 * The dispatcher suite, on one store (memory, PGlite, the PostgreSQL server) and a real receiver on
 * 127.0.0.1 (`FakeReceiver`): each message delivered with its delivery key and payload; 5xx and
 * stalls retried (bounded, jittered), permanent answers and the last attempt dead-lettered; one
 * ordering key delivered in order; a dispatcher that died mid-delivery replaced once its lease
 * expires (its late settlement fenced off); racing dispatchers never both owning a message.
 */
import { assert, layer } from "@effect/vitest"
import { IdempotencyKey } from "@toolgate/core"
import { FollowUp, IdempotencyStore as Store, Outbox, OutboxDispatcher } from "@toolgate/runtime"
import { FakeReceiver } from "@toolgate/testing"
import { Effect, Exit, type Layer, Schema } from "effect"
import type * as HttpClient from "effect/http/HttpClient"

const { IdempotencyStore } = Store

let counter = 0
const hex64 = () => Array.from({ length: 64 }, () => Math.floor(Math.random() * 16).toString(16)).join("")

/** Completes a fresh call with `followUps`; returns its ref and downstream key. */
const completed = (followUps: ReadonlyArray<FollowUp.FollowUp>, label = "call") =>
  Effect.gen(function*() {
    const store = yield* IdempotencyStore
    const ref = { scope: `dispatch-${label}-${++counter}-${hex64().slice(0, 6)}`, key: `tg1:sha256:${hex64()}` }
    const claim = yield* store.claim({
      ...ref,
      tool: "assign_owner",
      fingerprint: "fp",
      owner: `w-${counter}`,
      leaseMs: 10_000,
      retentionMs: 60_000,
      maxAttempts: 3,
      recovery: "reexecute"
    })
    if (claim._tag !== "Claimed") return assert.fail("expected a won claim")
    const downstreamKey = IdempotencyKey.downstreamKey(ref.key, claim.lease.generation)
    const messages = FollowUp.encodeAll(downstreamKey, followUps)
    if (messages instanceof FollowUp.InvalidFollowUp) return assert.fail(messages.message)
    yield* store.complete(claim.lease, { result: "{}", retentionMs: 60_000, followUps: messages })
    return { ref, downstreamKey }
  })

const messagesOf = (scope: string) =>
  Effect.gen(function*() {
    const outbox = yield* Outbox.Outbox
    return yield* outbox.list({ scope, limit: 1000 })
  })

/** No backoff; a timeout and a lease long enough for a loaded machine (a stall outlasts the timeout). */
const fast = { retryBaseMs: 0, retryMaxMs: 0, pollMs: 20, deliveryTimeoutMs: 2_000, leaseMs: 10_000 }

/** Registers the suite for one layer providing the store, its outbox and an `HttpClient`. */
export const dispatcherSuite = (
  name: string,
  stores: Layer.Layer<Store.IdempotencyStore | Outbox.Outbox | HttpClient.HttpClient, unknown>
) =>
  layer(stores, { timeout: 60_000, excludeTestServices: true })(name, (it) => {
    it.effect("every message is delivered once, with its delivery key and its payload byte for byte", () =>
      Effect.scoped(Effect.gen(function*() {
        const receiver = yield* FakeReceiver.make({ dedupe: false })
        const { downstreamKey, ref } = yield* completed([
          FollowUp.webhook(`${receiver.url}/slack`, { z: 1, lead: "L-1", a: [1] }),
          FollowUp.webhook(`${receiver.url}/ads`, { gclid: "G-1" })
        ])
        const dispatcher = yield* OutboxDispatcher.make(fast)
        const round = yield* dispatcher.drain
        assert.isAtLeast(round.delivered, 2)
        const messages = yield* messagesOf(ref.scope)
        assert.deepStrictEqual(messages.map((m) => m.status), ["delivered", "delivered"])
        assert.deepStrictEqual(messages.map((m) => m.attempts), [1, 1])
        assert.strictEqual(receiver.applied().get(`${downstreamKey}:0`), 1)
        assert.strictEqual(receiver.bodies().get(`${downstreamKey}:0`), `{"z":1,"lead":"L-1","a":[1]}`)
        assert.strictEqual(receiver.applied().get(`${downstreamKey}:1`), 1)
        assert.strictEqual(receiver.duplicates(), 0)
      })))

    it.effect("5xx, 429 and a stall are retried until delivered; attempts and the last error are kept", () =>
      Effect.scoped(Effect.gen(function*() {
        const receiver = yield* FakeReceiver.make({
          dedupe: false,
          fault: (r) =>
            r.nth === 1
              ? { _tag: "Status", status: 503 }
              : r.nth === 2
              ? { _tag: "Status", status: 429 }
              : r.nth === 3
              ? { _tag: "Stall", ms: 6_000 }
              : { _tag: "Ok" }
        })
        const { downstreamKey, ref } = yield* completed([FollowUp.webhook(receiver.url, { n: 1 })])
        const dispatcher = yield* OutboxDispatcher.make(fast)
        yield* dispatcher.drain
        const [message] = yield* messagesOf(ref.scope)
        assert.strictEqual(message.status, "delivered")
        assert.strictEqual(message.attempts, 4)
        assert.match(message.lastError ?? "", /timeout/)
        assert.strictEqual(receiver.requestsOf(`${downstreamKey}:0`), 4)
        assert.strictEqual(receiver.applied().get(`${downstreamKey}:0`), 1)
      })))

    it.effect("a permanent answer dead-letters at once; retryable failures after maxAttempts", () =>
      Effect.scoped(Effect.gen(function*() {
        const receiver = yield* FakeReceiver.make({
          fault: (r) => r.path === "/gone" ? { _tag: "Status", status: 410 } : { _tag: "Status", status: 500 }
        })
        const { ref } = yield* completed([
          FollowUp.webhook(`${receiver.url}/gone`, {}),
          FollowUp.webhook(`${receiver.url}/down`, {})
        ])
        const dispatcher = yield* OutboxDispatcher.make({ ...fast, maxAttempts: 3 })
        yield* dispatcher.drain
        const messages = yield* messagesOf(ref.scope)
        assert.deepStrictEqual(messages.map((m) => [m.status, m.attempts]), [["dead", 1], ["dead", 3]])
        assert.match(messages[0].lastError ?? "", /410/)
        assert.match(messages[1].lastError ?? "", /500/)
        assert.strictEqual(receiver.applied().size, 0)
      })))

    it.effect("one ordering key: a later message is not delivered before an earlier one is delivered or dead", () =>
      Effect.scoped(Effect.gen(function*() {
        const order: Array<string> = []
        const receiver = yield* FakeReceiver.make({
          fault: (r) => {
            const payload = JSON.parse(r.body) as { event: string }
            if (payload.event === "assigned" && r.nth <= 2) return { _tag: "Status", status: 503 }
            if (payload.event === "note" && r.nth === 1) return { _tag: "Status", status: 400 }
            order.push(payload.event)
            return { _tag: "Ok" }
          }
        })
        const orderingKey = `lead-${++counter}/slack`
        const first = yield* completed([
          FollowUp.webhook(receiver.url, { event: "assigned" }, { orderingKey }),
          FollowUp.webhook(receiver.url, { event: "note" }, { orderingKey })
        ])
        const second = yield* completed([FollowUp.webhook(receiver.url, { event: "reassigned" }, { orderingKey })])
        const dispatcher = yield* OutboxDispatcher.make({ ...fast, concurrency: 8 })
        yield* dispatcher.drain
        assert.deepStrictEqual(order, ["assigned", "reassigned"])
        const statuses = [...(yield* messagesOf(first.ref.scope)), ...(yield* messagesOf(second.ref.scope))]
          .map((m) => m.status)
        assert.deepStrictEqual(statuses, ["delivered", "dead", "delivered"])
      })))

    it.effect("a dispatcher that died mid-delivery: after its lease expires another delivers; its late settle is fenced off", () =>
      Effect.scoped(Effect.gen(function*() {
        const receiver = yield* FakeReceiver.make({ dedupe: false })
        const { ref } = yield* completed([FollowUp.webhook(receiver.url, { n: 1 })])
        const outbox = yield* Outbox.Outbox
        // the dead dispatcher leased every due message, for 200 ms
        const leased = yield* outbox.claim({ owner: "dead", leaseMs: 200, limit: 1000 })
        const mine = leased.filter((m) => m.scope === ref.scope)
        assert.strictEqual(mine.length, 1)
        for (const other of leased.filter((m) => m.scope !== ref.scope)) {
          yield* Effect.ignore(
            outbox.settle({ id: other.id, leaseFence: other.leaseFence ?? 0n }, {
              _tag: "Retry",
              error: "x",
              delayMs: 0
            })
          )
        }
        const dispatcher = yield* OutboxDispatcher.make(fast)
        assert.strictEqual((yield* messagesOf(ref.scope))[0].status, "delivering")
        yield* Effect.sleep("300 millis")
        yield* dispatcher.drain
        const [message] = yield* messagesOf(ref.scope)
        assert.strictEqual(message.status, "delivered")
        assert.strictEqual(message.attempts, 2)
        const late = yield* Effect.exit(
          outbox.settle({ id: mine[0].id, leaseFence: mine[0].leaseFence ?? 0n }, { _tag: "Delivered" })
        )
        assert.isTrue(Exit.isFailure(late))
        assert.strictEqual(receiver.requests(), 1)
      })))

    it.effect("named destinations: the application's function gets the key; a missing one is retried", () =>
      Effect.gen(function*() {
        const got: Array<string> = []
        const { downstreamKey, ref } = yield* completed([
          FollowUp.named("ads", { gclid: "G-9" }),
          FollowUp.named("nowhere", {})
        ])
        const dispatcher = yield* OutboxDispatcher.make({ ...fast, maxAttempts: 2 }).pipe(
          Effect.provide(OutboxDispatcher.layerDestinations({
            ads: (delivery) => Effect.sync(() => got.push(`${delivery.deliveryKey} ${delivery.payload}`))
          }))
        )
        yield* dispatcher.drain
        assert.deepStrictEqual(got, [`${downstreamKey}:0 {"gclid":"G-9"}`])
        const messages = yield* messagesOf(ref.scope)
        assert.deepStrictEqual(messages.map((m) => [m.status, m.attempts]), [["delivered", 1], ["dead", 2]])
        assert.match(messages[1].lastError ?? "", /no destination named "nowhere"/)
      }))

    it.effect("racing dispatchers: no message is leased by two; a receiver without dedupe sees each once", () =>
      Effect.scoped(Effect.gen(function*() {
        const receiver = yield* FakeReceiver.make({ dedupe: false })
        const calls = yield* Effect.forEach(
          Array.from({ length: 12 }, (_, i) => i),
          (i) =>
            completed([
              FollowUp.webhook(receiver.url, { i, n: 0 }),
              FollowUp.webhook(receiver.url, { i, n: 1 }, { orderingKey: `race-${counter}-${i % 3}` })
            ], "race")
        )
        const dispatchers = yield* Effect.forEach(
          [1, 2, 3, 4],
          (n) => OutboxDispatcher.make({ ...fast, owner: `d${n}`, batchSize: 3 })
        )
        yield* Effect.forEach(dispatchers, (d) => d.drain, { concurrency: "unbounded" })
        yield* Effect.forEach(dispatchers, (d) => d.drain)
        assert.strictEqual(receiver.duplicates(), 0)
        for (const call of calls) {
          for (const m of yield* messagesOf(call.ref.scope)) {
            assert.strictEqual(m.status, "delivered")
            assert.strictEqual(m.attempts, 1)
            assert.strictEqual(receiver.applied().get(m.deliveryKey), 1)
          }
        }
      })))

    it.effect.prop(
      "any number of concurrent claims: the leases they return are disjoint",
      { claimants: Schema.Int.check(Schema.isBetween({ minimum: 2, maximum: 8 })) },
      ({ claimants }) =>
        Effect.gen(function*() {
          yield* completed(Array.from({ length: 6 }, (_, i) => FollowUp.named("prop", { i })), "prop")
          const outbox = yield* Outbox.Outbox
          const now = new Date(Date.UTC(2100, 0, 1))
          const leases = yield* Effect.all(
            Array.from(
              { length: claimants },
              (_, i) => outbox.claim({ owner: `p${i}`, leaseMs: 60_000, limit: 4, now })
            ),
            { concurrency: "unbounded" }
          )
          const ids = leases.flat().map((m) => m.id.toString())
          assert.strictEqual(new Set(ids).size, ids.length)
          // put them back to dead so later cases and tests do not see them
          for (const m of leases.flat()) {
            yield* outbox.settle({ id: m.id, leaseFence: m.leaseFence ?? 0n }, { _tag: "Dead", error: "test" }, { now })
          }
        }),
      { arbitrary: { runs: 10 } }
    )
  })
