import { describe, expect, it } from "@effect/vitest"
import { Provider } from "@toolgate/adapters"
import { Effect } from "effect"
import * as Fixture from "./support/Fixture.js"

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
      }
    })
  }
})

describe("auto", () => {
  for (const fixture of Fixture.loadAll()) {
    it.effect(`${fixture.name} is read as ${fixture.provider}`, () =>
      Effect.gen(function*() {
        const detected: Array<Provider.Name> = []
        const result = yield* Fixture.run("auto", Fixture.chunk(fixture.bytes), {
          onDetected: (name) => detected.push(name)
        })
        expect(detected).toEqual([fixture.provider])
        expect(Fixture.outcome(result)).toEqual(fixture.expected)
      }))
  }
})
