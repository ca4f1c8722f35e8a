/**
 * The agent-step benchmark's probe (`bench/stepProbe.ts`): a wrapped service behaves as the
 * service does and records one span per Effect it runs (failures included); the parts of a step
 * and its rest add up to its total; the quantile is the nearest rank. A correctness test: the
 * spans are made up, no timing is asserted.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { partsOf, percentile, Probe, timed } from "../bench/stepProbe.js"

const Ms = Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1_000 }))

describe("bench step probe", () => {
  it.effect("a wrapped service answers as the service does and records a span per Effect run", () =>
    Effect.gen(function*() {
      const probe = new Probe()
      let trips = 0
      probe.trips = () => trips
      const service = {
        name: "journal",
        claim: (n: number) => Effect.sync(() => (trips += 2, n + 1)),
        record: () => Effect.fail("lost" as const),
        plain: (n: number) => n * 2
      }
      const wrapped = timed("journal", service, probe)
      assert.strictEqual(wrapped.name, "journal")
      assert.strictEqual(wrapped.plain(4), 8)
      assert.strictEqual(yield* wrapped.claim(1), 2)
      const failed = yield* Effect.exit(wrapped.record())
      assert.deepStrictEqual(failed, Exit.fail("lost" as const))
      assert.deepStrictEqual(probe.spans.map((s) => [s.name, s.trips]), [["journal.claim", 2], ["journal.record", 0]])
      for (const span of probe.spans) assert.isTrue(span.end >= span.start)
      probe.reset()
      assert.strictEqual(probe.spans.length, 0)
      assert.strictEqual(probe.released, 0)
    }))

  it.prop(
    "a step's parts and its rest add up to its total; claim and complete sum every store method named so",
    { claim: Ms, claimMany: Ms, complete: Ms, journal: Ms, record: Ms, handler: Ms, head: Ms, stream: Ms, rest: Ms },
    (d) => {
      const probe = new Probe()
      let at = 0
      const span = (name: string, ms: number, trips = 0) => {
        probe.spans.push({ name, start: at, end: at + ms, trips })
        at += ms
      }
      span("journal.claim", d.journal, 1)
      span("http", d.head)
      probe.released = at + d.stream
      at = probe.released
      span("journal.record", d.record, 1)
      span("store.claim", d.claim, 1)
      span("store.claimMany", d.claimMany, 1)
      span("handler", d.handler)
      span("store.complete", d.complete, 1)
      span("store.read", 1)
      const total = at + d.rest
      const parts = partsOf(probe, total, 0, 5)
      const close = (a: number, b: number) => assert.isTrue(Math.abs(a - b) < 1e-6, `${a} ≠ ${b}`)
      close(parts.claim, d.claim + d.claimMany)
      close(parts.stream, d.stream)
      close(parts.firstByte, d.head)
      close(
        parts.journalClaim + parts.firstByte + parts.stream + parts.journalRecord + parts.claim + parts.handler +
          parts.complete + parts.rest,
        total
      )
      close(parts.rest, d.rest + 1)
      assert.deepStrictEqual(parts.trips, { journalClaim: 1, journalRecord: 1, claim: 2, complete: 1, total: 5 })
    }
  )

  it("a step whose model request was not observed is refused", () => {
    assert.throws(() => partsOf(new Probe(), 1, 0, 0), /model request was not observed/)
  })

  it("percentile is the nearest rank", () => {
    const xs = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6]
    assert.strictEqual(percentile(xs, 0.5), 5)
    assert.strictEqual(percentile(xs, 0.9), 9)
    assert.strictEqual(percentile(xs, 1), 10)
    assert.strictEqual(percentile(xs, 0), 1)
    assert.strictEqual(percentile([3], 0.9), 3)
  })
})
