import { assert, layer } from "@effect/vitest"
import { IdempotencyKey } from "@toolgate/core"
import { FollowUp, IdempotencyStore, Outbox, OutboxDispatcher } from "@toolgate/runtime"
import { FakeReceiver } from "@toolgate/testing"
import { Deferred, Effect, Fiber, Layer } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Postgres from "../../../test/support/postgres.js"
import { dispatcherSuite } from "./outboxDispatcherSuite.js"

const pg = await Postgres.probe()
const schema = Postgres.uniqueSchema("tg_dispatch")
const listenSchema = Postgres.uniqueSchema("tg_listen")

const stores = (name: string) =>
  Layer.mergeAll(IdempotencyStore.layerSql({ schema: name }), Outbox.layerSql({ schema: name })).pipe(
    Layer.provideMerge(Postgres.dropSchemaOnRelease(name)),
    Layer.provideMerge(Postgres.client(6))
  )

Postgres.describeServer(pg, "PostgreSQL server", () => {
  dispatcherSuite("outbox dispatcher: PostgreSQL server", Layer.mergeAll(stores(schema), FetchHttpClient.layer))

  layer(Layer.mergeAll(stores(listenSchema), FetchHttpClient.layer), { timeout: 60_000, excludeTestServices: true })(
    "outbox dispatcher: LISTEN/NOTIFY",
    (it) => {
      it.effect("a running dispatcher polling once a minute is woken by the completion's NOTIFY; stop ends it after its round", () =>
        Effect.scoped(Effect.gen(function*() {
          const receiver = yield* FakeReceiver.make()
          const wakeups = yield* OutboxDispatcher.pgWakeups(listenSchema)
          const dispatcher = yield* OutboxDispatcher.make({ pollMs: 60_000, wakeups })
          const stop = yield* Deferred.make<void>()
          const running = yield* Effect.forkChild(dispatcher.run({ stop: Deferred.await(stop) }), {
            startImmediately: true
          })
          // let the dispatcher's first (empty) round end: it is now waiting on the minute-long poll
          yield* Effect.sleep("200 millis")
          const store = yield* IdempotencyStore.IdempotencyStore
          const key = `tg1:sha256:${"c".repeat(64)}`
          const claim = yield* store.claim({
            scope: "listen",
            key,
            tool: "notify",
            fingerprint: "fp",
            owner: "w",
            leaseMs: 10_000,
            retentionMs: 60_000,
            maxAttempts: 1,
            recovery: "manual"
          })
          if (claim._tag !== "Claimed") return assert.fail("expected a won claim")
          const downstreamKey = IdempotencyKey.downstreamKey(key, claim.lease.generation)
          const followUps = FollowUp.encodeAll(downstreamKey, [FollowUp.webhook(receiver.url, { hello: "rep" })])
          if (followUps instanceof FollowUp.InvalidFollowUp) return assert.fail(followUps.message)
          yield* store.complete(claim.lease, { result: "{}", retentionMs: 60_000, followUps })
          // delivered long before the next poll: only the notification can have woken it
          while (receiver.applied().size === 0) yield* Effect.sleep("20 millis")
          assert.strictEqual(receiver.applied().get(`${downstreamKey}:0`), 1)
          yield* Deferred.succeed(stop, undefined)
          yield* Fiber.join(running)
          const outbox = yield* Outbox.Outbox
          const [message] = yield* outbox.list({ scope: "listen" })
          assert.strictEqual(message.status, "delivered")
        })))
    }
  )
})
