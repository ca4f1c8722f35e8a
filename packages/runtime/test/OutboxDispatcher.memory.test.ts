import { assert, describe, it } from "@effect/vitest"
import { IdempotencyKey } from "@toolgate/core"
import { FollowUp, IdempotencyStore, Outbox, OutboxDispatcher, OutboxMetrics } from "@toolgate/runtime"
import { FakeReceiver } from "@toolgate/testing"
import { Effect, Layer, Metric } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { dispatcherSuite } from "./outboxDispatcherSuite.js"

dispatcherSuite(
  "outbox dispatcher: memory",
  Layer.mergeAll(Layer.provideMerge(Outbox.layerMemory, IdempotencyStore.layerMemory), FetchHttpClient.layer)
)

describe("OutboxMetrics", () => {
  const countOf = (outcome: OutboxMetrics.Outcome) =>
    Metric.value(Metric.withAttributes(OutboxMetrics.deliveries, { outcome })).pipe(Effect.map((s) => s.count))

  it.live("a drain counts delivered, retried and dead-lettered attempts, the pending gauge and latencies", () =>
    Effect.scoped(Effect.gen(function*() {
      const receiver = yield* FakeReceiver.make({
        fault: (r) =>
          r.path === "/flaky" && r.nth === 1
            ? { _tag: "Status", status: 502 }
            : r.path === "/gone"
            ? { _tag: "Status", status: 404 }
            : { _tag: "Ok" }
      })
      const store = yield* IdempotencyStore.IdempotencyStore
      const key = `tg1:sha256:${"a".repeat(64)}`
      const claim = yield* store.claim({
        scope: "metrics",
        key,
        tool: "t",
        fingerprint: "fp",
        owner: "w",
        leaseMs: 10_000,
        retentionMs: 60_000,
        maxAttempts: 1,
        recovery: "manual"
      })
      if (claim._tag !== "Claimed") return assert.fail("expected a won claim")
      const followUps = FollowUp.encodeAll(IdempotencyKey.downstreamKey(key, 1), [
        FollowUp.webhook(`${receiver.url}/ok`, {}),
        FollowUp.webhook(`${receiver.url}/flaky`, {}),
        FollowUp.webhook(`${receiver.url}/gone`, {}),
        FollowUp.webhook(`${receiver.url}/later`, {}, { delayMs: 60_000 })
      ])
      if (followUps instanceof FollowUp.InvalidFollowUp) return assert.fail(followUps.message)
      yield* store.complete(claim.lease, { result: "{}", retentionMs: 60_000, followUps })
      const dispatcher = yield* OutboxDispatcher.make({ retryBaseMs: 0, retryMaxMs: 0 })
      const round = yield* dispatcher.drain
      assert.deepStrictEqual(round, { leased: 4, delivered: 2, retried: 1, deadLettered: 1, leaseLost: 0 })
      assert.strictEqual(yield* countOf("delivered"), 2)
      assert.strictEqual(yield* countOf("retried"), 1)
      assert.strictEqual(yield* countOf("dead_lettered"), 1)
      assert.strictEqual(yield* countOf("lease_lost"), 0)
      assert.strictEqual((yield* Metric.value(OutboxMetrics.pending)).value, 1)
      assert.strictEqual((yield* Metric.value(OutboxMetrics.deliveryLatency)).count, 2)
    })).pipe(
      Effect.provide(
        Layer.mergeAll(Layer.provideMerge(Outbox.layerMemory, IdempotencyStore.layerMemory), FetchHttpClient.layer)
      ),
      Effect.provideService(Metric.MetricRegistry, new Map())
    ))
})
