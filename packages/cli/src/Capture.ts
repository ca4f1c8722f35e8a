/**
 * A capture file for `toolgate inspect` and `toolgate corpus`, read as a stream of reads: memory
 * stays flat whatever the file's size, and a consumer that stops pulling (the assembler, once a
 * failure has decided the verdict) stops the reading.
 *
 * Every read is checked before it goes on, so input that is not a text stream is an input error
 * (`CaptureError`, one line, exit 1), never an outcome: a directory or a missing file (before the
 * first read), NUL bytes (a binary file), bytes that are not UTF-8 (with the byte offset where
 * they start; a character split across two reads is joined first), and a file with no bytes at
 * all. Bytes after a decided verdict are never read, so they are never checked either.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { isUtf8 } from "node:buffer"

/**
 * A capture that cannot be inspected: missing, a directory, empty, binary, not UTF-8, unreadable,
 * or not an event stream. Printed as `FILE: reason`.
 *
 * @since 0.1.0
 * @category errors
 */
export class CaptureError extends Schema.TaggedError<CaptureError>()("CaptureError", {
  file: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.file}: ${this.reason}`
  }
}

/**
 * Bytes per file read (default of `open`'s `readBytes`): few system calls, memory still flat.
 *
 * @since 0.1.0
 * @category constants
 */
export const readBytes = 256 * 1024

/**
 * The largest piece a read is handed on in: the decoder's work per piece (one UTF-8 decode, one
 * SSE parser feed) is cheapest around this size. Measured on a 54 MB capture: 256 KiB reads
 * handed on whole took about twice as long as the same reads in 64 KiB pieces.
 */
const pieceBytes = 64 * 1024

/** The length of the UTF-8 sequence a lead byte starts (1 for an invalid lead: it fails on its own). */
const sequenceLength = (lead: number): number => lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1

/**
 * How many bytes at the end of `bytes` start a character that continues in the next read (0–3).
 */
const openTail = (bytes: Uint8Array): number => {
  const n = bytes.length
  for (let k = 1; k <= 3 && k <= n; k++) {
    const b = bytes[n - k]!
    if ((b & 0xc0) === 0x80) continue
    return sequenceLength(b) > k ? k : 0
  }
  return 0
}

/**
 * The offset of the first byte of `bytes` that is not part of a valid UTF-8 sequence (RFC 3629:
 * no overlong forms, no surrogates, nothing above U+10FFFF), or -1. Only runs once a read has
 * failed `isUtf8`, to say where.
 */
const firstInvalid = (bytes: Uint8Array): number => {
  let i = 0
  while (i < bytes.length) {
    const b = bytes[i]!
    if (b < 0x80) {
      i++
      continue
    }
    let length: number
    let low = 0x80
    let high = 0xbf
    if (b >= 0xc2 && b <= 0xdf) length = 2
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3
      if (b === 0xe0) low = 0xa0
      if (b === 0xed) high = 0x9f
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4
      if (b === 0xf0) low = 0x90
      if (b === 0xf4) high = 0x8f
    } else return i
    for (let k = 1; k < length; k++) {
      const c = bytes[i + k]
      if (c === undefined) return i
      if (k === 1 ? c < low || c > high : (c & 0xc0) !== 0x80) return i
    }
    i += length
  }
  return -1
}

/**
 * Opens a capture: checks that it exists and is not a directory, and gives its bytes as a
 * stream of checked reads of `readBytes` (default {@link readBytes}; see the module doc),
 * failing with `CaptureError`.
 *
 * @since 0.1.0
 * @category reading
 */
export const open = Effect.fnUntraced(function*(file: string, options?: { readonly readBytes?: number | undefined }) {
  const fs = yield* FileSystem.FileSystem
  const fail = (reason: string) => new CaptureError({ file, reason })
  const info = yield* fs.stat(file).pipe(Effect.mapError(() => fail("no such file")))
  if (info.type === "Directory") return yield* fail("is a directory, not a capture file")
  return Stream.suspend(() => {
    let offset = 0
    /** The first bytes of a character that the previous read cut. */
    let carry: Uint8Array = new Uint8Array(0)
    const check = (read: Uint8Array): CaptureError | undefined => {
      const nul = read.indexOf(0)
      if (nul >= 0) return fail(`is binary (contains NUL bytes, the first at byte ${offset + nul}), not a text stream`)
      let bytes = read
      let base = offset
      if (carry.length > 0) {
        const need = sequenceLength(carry[0]!) - carry.length
        const joined = new Uint8Array(carry.length + Math.min(need, read.length))
        joined.set(carry)
        joined.set(read.subarray(0, joined.length - carry.length), carry.length)
        if (joined.length - carry.length < need) {
          carry = joined
          offset += read.length
          return undefined
        }
        if (!isUtf8(joined)) return invalid(base - carry.length)
        bytes = read.subarray(need)
        base += need
        carry = new Uint8Array(0)
      }
      const tail = openTail(bytes)
      const whole = bytes.subarray(0, bytes.length - tail)
      if (!isUtf8(whole)) return invalid(base + firstInvalid(whole))
      carry = bytes.slice(bytes.length - tail)
      offset += read.length
      return undefined
    }
    const invalid = (at: number) => fail(`is not valid UTF-8 text (at byte ${at})`)
    return fs.stream(file, { chunkSize: options?.readBytes ?? readBytes }).pipe(
      Stream.mapError((e) => fail(`cannot be read (${e.message})`)),
      Stream.mapArrayEffect((reads) => {
        const pieces: Array<Uint8Array> = []
        for (let i = 0; i < reads.length; i++) {
          const read = reads[i]!
          const error = check(read)
          if (error !== undefined) return Effect.fail(error)
          for (let at = 0; at < read.length; at += pieceBytes) pieces.push(read.subarray(at, at + pieceBytes))
        }
        // A read is never empty, so neither is `pieces`.
        return Effect.succeed(pieces as unknown as readonly [Uint8Array, ...Array<Uint8Array>])
      }),
      Stream.concat(Stream.suspend(() =>
        offset === 0
          ? Stream.fail(fail("is empty"))
          : carry.length > 0
          ? Stream.fail(invalid(offset - carry.length))
          : Stream.empty
      ))
    )
  })
})
