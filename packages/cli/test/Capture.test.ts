/**
 * `Capture.open` on real files, read in 1–7 byte reads: the bytes come through unchanged whatever
 * the reads, and every input check (NUL bytes, invalid UTF-8, a character cut by the end of the
 * file, an empty file, a directory, a missing file) is one `CaptureError` with the exact byte
 * offset, however the reads split the offending character.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import * as Capture from "@toolgate/cli/Capture"
import { Arbitrary, Effect, Schema, Stream } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

const dir = mkdtempSync(join(tmpdir(), "toolgate-capture-"))
let files = 0
const file = (bytes: Uint8Array) => {
  const path = join(dir, `${++files}.sse`)
  writeFileSync(path, bytes)
  return path
}

/** Reads a file through `Capture.open` in reads of `readBytes`: its bytes, or the error. */
const read = (path: string, readBytes: number) =>
  Effect.gen(function*() {
    const body = yield* Capture.open(path, { readBytes })
    const reads = yield* Stream.runCollect(body)
    return Buffer.concat(reads)
  }).pipe(Effect.provide(NodeServices.layer))

/** Text with 1-, 2-, 3- and 4-byte characters, CR and LF. */
const text = Arbitrary.map(
  Arbitrary.array(Arbitrary.schema(Schema.Literals(["data: ", "a", "\n", "\r\n", "é", "€", "日", "😀", "{}"])), {
    maxLength: 60
  }),
  (parts) => parts.join("")
)

/** Byte sequences that are never valid UTF-8 where they start. */
const invalid = Arbitrary.schema(Schema.Literals(["ff", "c0af", "e282", "eda080", "f4908080", "80", "f09f98"]))

describe("Capture.open", () => {
  it.effect.prop(
    "valid UTF-8 comes through byte for byte, whatever the reads",
    { body: text, readBytes: int(1, 7) },
    ({ body, readBytes }) =>
      Effect.gen(function*() {
        const bytes = Buffer.from(`x${body}`)
        expect(Buffer.compare(yield* read(file(bytes), readBytes), bytes)).toBe(0)
      }),
    { arbitrary: { runs: 80 } }
  )

  it.effect.prop(
    "an invalid sequence anywhere is CaptureError at its exact offset, whatever the reads",
    { before: text, after: text, bad: invalid, readBytes: int(1, 7) },
    ({ after, bad, before, readBytes }) =>
      Effect.gen(function*() {
        const head = Buffer.from(`x${before}`)
        // After a truncated sequence comes ASCII, so the sequence cannot be completed by chance.
        const bytes = Buffer.concat([head, Buffer.from(bad, "hex"), Buffer.from(`a${after}`)])
        const error = yield* Effect.flip(read(file(bytes), readBytes))
        expect(error).toBeInstanceOf(Capture.CaptureError)
        expect(error.reason).toBe(`is not valid UTF-8 text (at byte ${head.length})`)
      }),
    { arbitrary: { runs: 120 } }
  )

  it.effect.prop(
    "a NUL byte anywhere is CaptureError at its offset",
    { before: text, readBytes: int(1, 7) },
    ({ before, readBytes }) =>
      Effect.gen(function*() {
        const head = Buffer.from(`x${before}`)
        const error = yield* Effect.flip(read(file(Buffer.concat([head, Buffer.of(0), head])), readBytes))
        expect(error.reason).toBe(`is binary (contains NUL bytes, the first at byte ${head.length}), not a text stream`)
      }),
    { arbitrary: { runs: 40 } }
  )

  it.effect("a file that ends inside a character, an empty file, a directory, a missing file", () =>
    Effect.gen(function*() {
      for (const readBytes of [1, 2, 3, 64]) {
        const cut = yield* Effect.flip(read(file(Buffer.from("data: 😀", "utf8").subarray(0, 9)), readBytes))
        expect(cut.reason).toBe("is not valid UTF-8 text (at byte 6)")
        expect((yield* Effect.flip(read(file(new Uint8Array(0)), readBytes))).reason).toBe("is empty")
      }
      expect((yield* Effect.flip(read(dir, 4))).reason).toBe("is a directory, not a capture file")
      const missing = yield* Effect.flip(read(join(dir, "missing.sse"), 4))
      expect(missing.message).toBe(`${join(dir, "missing.sse")}: no such file`)
    }))
})
