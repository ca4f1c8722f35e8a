/**
 * Properties of every provider's decoder over the fixture corpus: how the body is cut into reads
 * never changes the result, and a body cut short never releases a tool call.
 */
import { describe, expect, it } from "@effect/vitest"
import { Provider } from "@toolgate/adapters"
import { Fixture } from "@toolgate/testing"
import { Arbitrary, Effect, Schema } from "effect"

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

/** Read sizes in bytes: mostly tiny (inside multi-byte UTF-8 characters and CRLF pairs), some large. */
const readSizes = Arbitrary.array(
  Arbitrary.flatMap(int(0, 3), (kind) => kind === 0 ? int(1, 4096) : int(1, 7)),
  { minLength: 1, maxLength: 24 }
)

/** A fraction in [0, 1], to pick a position in a body of any length. */
const fraction = Arbitrary.map(int(0, 1_000_000), (n) => n / 1_000_000)

for (const provider of Provider.names) {
  describe(provider, () => {
    const fixtures = Fixture.load(provider)
    const complete = fixtures.filter((f) => f.expected.outcome === "complete")

    it.effect.prop(
      "re-chunking the bytes at any boundaries never changes the result",
      { pick: int(0, fixtures.length - 1), sizes: readSizes, auto: Arbitrary.schema(Schema.Boolean) },
      ({ auto, pick, sizes }) =>
        Effect.gen(function*() {
          const fixture = fixtures[pick]!
          const result = yield* Fixture.run(auto ? "auto" : provider, Fixture.chunk(fixture.bytes, sizes))
          expect(Fixture.outcome(result)).toEqual(fixture.expected)
        }),
      { arbitrary: { runs: 60 } }
    )

    it.effect.prop(
      "a successful stream cut before its finish is IncompleteStream and releases nothing; cut after, it is unchanged",
      { pick: int(0, complete.length - 1), at: fraction, sizes: readSizes },
      ({ at, pick, sizes }) =>
        Effect.gen(function*() {
          const fixture = complete[pick]!
          const finishedAt = yield* Fixture.completeAt(fixture)
          const cut = Math.round(at * fixture.bytes.length)
          const result = yield* Fixture.run(provider, Fixture.chunk(fixture.bytes.subarray(0, cut), sizes))
          if (cut < finishedAt) {
            expect([result.outcome, result.error, result.released, result.toolCalls]).toEqual([
              "error",
              "IncompleteStream",
              false,
              []
            ])
          } else {
            expect(Fixture.outcome(result)).toEqual(fixture.expected)
          }
        }),
      { arbitrary: { runs: 80 } }
    )

    it.effect.prop(
      "any stream cut anywhere gives IncompleteStream or the error the cut exposes, and releases nothing unless complete",
      { pick: int(0, fixtures.length - 1), at: fraction },
      ({ at, pick }) =>
        Effect.gen(function*() {
          const fixture = fixtures[pick]!
          const cut = Math.round(at * fixture.bytes.length)
          const result = yield* Fixture.run(provider, [fixture.bytes.subarray(0, cut)])
          if (result.outcome === "error") {
            expect(result.released).toBe(false)
            expect(["IncompleteStream", fixture.expected.error]).toContain(result.error)
          } else if (fixture.expected.outcome === "complete") {
            expect(Fixture.outcome(result)).toEqual(fixture.expected)
          } else {
            // A body that fails only behind its end event (a chunk after [DONE], a second response
            // spliced in after message_stop) is a finished turn when cut before that event: the
            // whole body can only fail as ToolCallProtocolError, and the prefix, a finished body,
            // keeps its outcome whatever else is cut off after its end event.
            expect(fixture.expected.error).toBe("ToolCallProtocolError")
            const finishedAt = yield* Fixture.completeAt({ ...fixture, bytes: fixture.bytes.subarray(0, cut) })
            const atEnd = yield* Fixture.run(provider, [fixture.bytes.subarray(0, finishedAt)])
            expect(Fixture.outcome(result)).toEqual(Fixture.outcome(atEnd))
          }
        }),
      { arbitrary: { runs: 60 } }
    )

    it.effect("every cut point of the smallest successful tool-call stream", () =>
      Effect.gen(function*() {
        const smallest = complete.filter((f) => f.expected.toolCalls.length > 0)
          .reduce((a, b) => (b.bytes.length < a.bytes.length ? b : a))
        const finishedAt = yield* Fixture.completeAt(smallest)
        for (let cut = 0; cut <= smallest.bytes.length; cut++) {
          const result = yield* Fixture.run(provider, [smallest.bytes.subarray(0, cut)])
          if (cut < finishedAt) expect([result.error, result.released]).toEqual(["IncompleteStream", false])
          else expect(Fixture.outcome(result)).toEqual(smallest.expected)
        }
      }))
  })
}
