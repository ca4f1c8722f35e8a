/**
 * The fixture corpus: every case, named and `auto`, read whole and in random 1–7 byte reads (a
 * seeded draw per case, so a failure names a reproducible chunking), equals its expected.json.
 */
import { describe, expect, it } from "@effect/vitest"
import { Provider } from "@toolgate/adapters"
import { Fixture, Random } from "@toolgate/testing"
import { Effect } from "effect"

describe("fixture corpus", () => {
  for (const provider of Provider.names) {
    describe(provider, () => {
      const fixtures = Fixture.load(provider)
      it("has cases", () => {
        expect(fixtures.length).toBeGreaterThan(0)
      })
      for (const fixture of fixtures) {
        it.effect(fixture.name, () =>
          Effect.gen(function*() {
            const result = yield* Fixture.run(provider, Fixture.chunk(fixture.bytes))
            expect(Fixture.outcome(result)).toEqual(fixture.expected)
          }))
        it.effect(`${fixture.name} in random 1–7 byte reads`, () =>
          Effect.gen(function*() {
            const sizes = Fixture.readSizes(Random.seedOf(fixture.name))
            const result = yield* Fixture.run(provider, Fixture.chunk(fixture.bytes, sizes))
            expect(Fixture.outcome(result)).toEqual(fixture.expected)
          }))
      }
    })
  }
})

describe("auto", () => {
  for (const fixture of Fixture.loadAll()) {
    it.effect(`${fixture.name} is read as ${fixture.provider}, whole and in random 1–7 byte reads`, () =>
      Effect.gen(function*() {
        for (
          const chunks of [
            [fixture.bytes],
            Fixture.chunk(fixture.bytes, Fixture.readSizes(Random.seedOf(fixture.name) ^ 1))
          ]
        ) {
          const detected: Array<Provider.Name> = []
          const result = yield* Fixture.run("auto", chunks, { onDetected: (name) => detected.push(name) })
          expect(detected).toEqual([fixture.provider])
          expect(Fixture.outcome(result)).toEqual(fixture.expected)
        }
      }))
  }
})
