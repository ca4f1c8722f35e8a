/**
 * The argument-size limit counts UTF-8 bytes exactly, however the provider splits the text into
 * deltas: a surrogate pair split across two deltas (a high surrogate ending one, the low one
 * starting the next) is one 4-byte character, not two 3-byte halves. The oracle is Node's own
 * UTF-8 encoder (`Buffer.byteLength`, which counts a lone surrogate as the 3 bytes of U+FFFD).
 */
import { describe, expect, it } from "@effect/vitest"
import { Assembler, type StreamEvent } from "@toolgate/core"
import { Arbitrary, Effect, Result, Schema, Stream } from "effect"

const stop: StreamEvent.StreamEvent = { finish: { reason: "stop", class: "success", terminal: true } }

/** The verdict on one call whose arguments arrive as `pieces`. */
const verdict = (pieces: ReadonlyArray<string>, maxArgumentsBytes: number) =>
  Stream.fromIterable<StreamEvent.StreamEvent>([
    { toolCalls: [{ index: 0, id: "call_1", name: "f" }] },
    ...pieces.map((argumentsDelta): StreamEvent.StreamEvent => ({ toolCalls: [{ index: 0, argumentsDelta }] })),
    stop
  ]).pipe(
    Assembler.assemble({ maxArgumentsBytes }),
    Effect.result,
    Effect.map((r) => Result.isSuccess(r) ? "complete" : r.failure._tag)
  )

/** Splits `s` at the given UTF-16 positions (taken modulo its length, so pairs can be split). */
const splitAt = (s: string, cuts: ReadonlyArray<number>): Array<string> => {
  const positions = [...new Set(cuts.map((c) => s.length === 0 ? 0 : c % (s.length + 1)))].toSorted((a, b) => a - b)
  const out: Array<string> = []
  let from = 0
  for (const at of positions) {
    out.push(s.slice(from, at))
    from = at
  }
  out.push(s.slice(from))
  return out
}

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

/** Characters of every UTF-8 length, astral ones (surrogate pairs) most often. */
const character = Arbitrary.schema(Schema.Literals(["a", "é", "€", "😀", "𝄞", "🇩🇪", "中", "\""]))

describe("ArgumentsTooLarge counts UTF-8 bytes exactly", () => {
  it.effect("a 1,000,008-byte call sent one UTF-16 unit per delta passes the 1 MiB default, as it does in one delta", () =>
    Effect.gen(function*() {
      // 250,000 emoji (4 bytes each) in a JSON string: 1,000,008 bytes, 500,008 UTF-16 units.
      const text = `{"v":"${"😀".repeat(250_000)}"}`
      expect(Buffer.byteLength(text, "utf8")).toBe(1_000_008)
      expect(yield* verdict([text], Assembler.defaultMaxArgumentsBytes)).toBe("complete")
      const units = Array.from({ length: text.length }, (_, i) => text[i]!)
      expect(yield* verdict(units, Assembler.defaultMaxArgumentsBytes)).toBe("complete")
    }))

  it.effect("a pair split across deltas at exactly the limit is within it; one byte less is over", () =>
    Effect.gen(function*() {
      const text = `{"v":"${"😀".repeat(10)}"}` // 48 bytes
      const size = Buffer.byteLength(text, "utf8")
      const halves = splitAt(text, Array.from({ length: text.length }, (_, i) => i))
      expect(yield* verdict(halves, size)).toBe("complete")
      expect(yield* verdict(halves, size - 1)).toBe("ArgumentsTooLarge")
    }))

  it.effect.prop(
    "any split of the same text gives the same verdict, and that verdict is the text's UTF-8 size against the limit",
    {
      chars: Arbitrary.array(character, { minLength: 1, maxLength: 60 }),
      cuts: Arbitrary.array(int(0, 10_000), { maxLength: 40 }),
      other: Arbitrary.array(int(0, 10_000), { maxLength: 40 }),
      slack: int(-12, 12)
    },
    ({ chars, cuts, other, slack }) =>
      Effect.gen(function*() {
        const text = JSON.stringify({ v: chars.join("") })
        const bytes = Buffer.byteLength(text, "utf8")
        // Limits around the exact size, where an over-count of 2 bytes per split pair shows.
        const limit = Math.max(1, bytes + slack)
        const expected = bytes > limit ? "ArgumentsTooLarge" : "complete"
        expect(yield* verdict([text], limit)).toBe(expected)
        expect(yield* verdict(splitAt(text, cuts), limit)).toBe(expected)
        expect(yield* verdict(splitAt(text, other), limit)).toBe(expected)
      }),
    { arbitrary: { runs: 300 } }
  )
})
