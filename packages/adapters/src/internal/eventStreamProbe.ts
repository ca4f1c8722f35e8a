/**
 * Tells a body that is a server-sent event stream from one that is not (a non-streaming JSON
 * response, an HTML page, a README), for `Decoder.decodeSse`'s `NotAnEventStream`.
 *
 * A body is an event stream as soon as one of its lines is an SSE line: a comment (`:` first) or a
 * `data`, `event`, `id` or `retry` field (WHATWG HTML, "Interpreting an event stream": the field
 * name is everything before the first colon, or the whole line). The probe works on the raw bytes,
 * before any decoding: field names are ASCII and CR and LF never occur inside a multi-byte UTF-8
 * character, so bytes decide exactly what the decoded text would. It stops looking at the first
 * SSE line, which for a real stream is the first line; on a body that is not one it costs one
 * `indexOf` per line end and keeps the first 640 bytes for the excerpt.
 *
 * No verdict (the stream's own rules decide) for a body with no non-blank content (empty, or line
 * ends and spaces only: a response cut before it started is `IncompleteStream`, not this error),
 * or whose last, unterminated line is a prefix of an SSE field name (`dat`, a stream cut inside
 * its first line).
 *
 * A body that shows no SSE line in its first `limit` bytes (the decoder's event-size limit) gets
 * its verdict there, without being read further: it could only go on to fail that limit anyway,
 * as one oversized "event" of unknown lines.
 *
 * @internal
 */
import type { StreamEvent } from "@toolgate/core"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"

/** What a body that is not an event stream looks like. */
export interface Verdict {
  /** `json`: the body's first and last non-blank characters are `{`…`}` or `[`…`]`; else `text`. */
  readonly found: "json" | "text"
  /** The start of the body, trimmed, at most {@link maxExcerpt} characters. */
  readonly excerpt: string
}

/** The longest excerpt of the body's start, in UTF-16 code units. */
export const maxExcerpt = 160

/** Bytes kept from the body's start for the excerpt (a character is at most 4 bytes). */
const keptBytes = maxExcerpt * 4

const LF = 10
const CR = 13
const SPACE = 32
const TAB = 9
const COLON = 58
const OPEN_BRACE = 123
const CLOSE_BRACE = 125
const OPEN_BRACKET = 91
const CLOSE_BRACKET = 93
const BOM = [0xef, 0xbb, 0xbf] as const

/** The field names an SSE parser acts on, as bytes. */
const fields: ReadonlyArray<ReadonlyArray<number>> = ["data", "event", "id", "retry"].map((name) =>
  Array.from(name, (c) => c.charCodeAt(0))
)
/** Longer than every field name: a line with no colon within its first this many bytes is not SSE. */
const longestField = 5

const isBlank = (b: number) => b === SPACE || b === TAB || b === LF || b === CR

/** Whether `head[0..length)` is one of the field names (`whole`) or a prefix of one. */
const matches = (head: ArrayLike<number>, length: number, whole: boolean): boolean =>
  fields.some((field) => {
    if (whole ? field.length !== length : field.length < length) return false
    for (let i = 0; i < length; i++) if (field[i] !== head[i]) return false
    return true
  })

/**
 * The start of a body as an excerpt: trimmed, at most {@link maxExcerpt} UTF-16 code units (never
 * half a surrogate pair).
 */
export const excerptOf = (text: string): string => {
  const trimmed = text.trim()
  if (trimmed.length <= maxExcerpt) return trimmed
  const end = trimmed.charCodeAt(maxExcerpt - 1) >= 0xd800 && trimmed.charCodeAt(maxExcerpt - 1) <= 0xdbff
    ? maxExcerpt - 1
    : maxExcerpt
  return trimmed.slice(0, end)
}

/** A probe over one body. */
export interface Probe {
  /** Looks at the next read. Free once the body has shown an SSE line. */
  readonly feed: (chunk: Uint8Array) => void
  /** More than `limit` bytes and not one SSE line: the verdict is already known. */
  readonly overLimit: () => boolean
  /** The body ended (or went over the limit): its verdict when it is not an event stream, else `undefined`. */
  readonly end: () => Verdict | undefined
}

/** Creates a probe for one body, which gives its verdict early past `limit` bytes. */
export const make = (limit: number): Probe => {
  /** An SSE line was seen: the body is an event stream, nothing more to look at. */
  let sse = false
  /** BOM bytes matched at the body's start so far; -1 once past them. */
  let bom = 0
  /** The current line's first bytes, up to one past the longest field name. */
  const head: Array<number> = [0, 0, 0, 0, 0, 0]
  let headLength = 0
  /** The current line is known not to be an SSE line: skip to its end. */
  let skipping = false
  let first = -1
  let last = -1
  /** The body's first bytes, for the excerpt; allocated only when the first read does not decide. */
  let start: Uint8Array | undefined
  let startLength = 0
  let seen = 0

  const feed = (chunk: Uint8Array) => {
    if (sse) return
    const n = chunk.length
    seen += n
    let i = 0
    while (bom >= 0 && i < n) {
      if (chunk[i] === BOM[bom]) {
        i++
        if (++bom === BOM.length) bom = -1
      } else {
        // A partial BOM: those bytes are not ASCII, so this line is not an SSE line.
        if (bom > 0) {
          skipping = true
          first = BOM[0]
        }
        bom = -1
      }
    }
    if (first < 0) {
      for (let j = i; j < n; j++) {
        if (!isBlank(chunk[j]!)) {
          first = chunk[j]!
          break
        }
      }
    }
    for (let j = n - 1; j >= i; j--) {
      if (!isBlank(chunk[j]!)) {
        last = chunk[j]!
        break
      }
    }
    scan(chunk, i)
    if (!sse && startLength < keptBytes && i < n) {
      const piece = chunk.subarray(i, i + keptBytes - startLength)
      start ??= new Uint8Array(keptBytes)
      start.set(piece, startLength)
      startLength += piece.length
    }
  }

  /** Looks at the lines of `chunk` from `from` on until one is an SSE line (then sets `sse`) or the chunk ends. */
  const scan = (chunk: Uint8Array, from: number) => {
    const n = chunk.length
    let i = from
    let lf = -2
    let cr = -2
    while (i < n) {
      if (skipping) {
        if (lf !== -1 && lf < i) lf = chunk.indexOf(LF, i)
        if (cr !== -1 && cr < i) cr = chunk.indexOf(CR, i)
        const end = lf < 0 ? cr : cr < 0 ? lf : lf < cr ? lf : cr
        if (end < 0) return
        skipping = false
        headLength = 0
        i = end + 1
        continue
      }
      const b = chunk[i++]!
      if (b === LF || b === CR) {
        // A blank line (or the LF of a CRLF) leaves `headLength` at 0: nothing to decide.
        if (headLength > 0 && matches(head, headLength, true)) {
          sse = true
          return
        }
        headLength = 0
      } else if (b === COLON) {
        if (headLength === 0 || matches(head, headLength, true)) {
          sse = true
          return
        }
        skipping = true
      } else {
        head[headLength++] = b
        if (headLength > longestField) skipping = true
      }
    }
  }

  const overLimit = () => !sse && seen > limit

  const startText = () =>
    start === undefined
      ? ""
      : new TextDecoder("utf-8", { ignoreBOM: true }).decode(start.subarray(0, startLength), { stream: true })

  const end = (): Verdict | undefined => {
    if (sse || first < 0) return undefined
    if (overLimit()) {
      return {
        found: first === OPEN_BRACE || first === OPEN_BRACKET ? "json" : "text",
        excerpt: excerptOf(startText())
      }
    }
    // The body stopped inside its last line while that line could still become a field line.
    if (!skipping && headLength > 0 && matches(head, headLength, false)) return undefined
    const found = (first === OPEN_BRACE && last === CLOSE_BRACE) || (first === OPEN_BRACKET && last === CLOSE_BRACKET)
      ? "json"
      : "text"
    return { found, excerpt: excerptOf(startText()) }
  }

  return { feed, overLimit, end }
}

/**
 * Runs `decode` over `bytes` with a probe on the bytes: when the body ends (or passes `limit`
 * bytes), showed no SSE line and `decode` emitted no event (Gemini's unframed `{"error": …}` body
 * does emit one), the stream fails with `onVerdict`'s error instead of ending.
 */
export const guard = <E, R, F>(
  bytes: Stream.Stream<Uint8Array, E, R>,
  decode: <E2, R2>(bytes: Stream.Stream<Uint8Array, E2, R2>) => Stream.Stream<StreamEvent.StreamEvent, E2, R2>,
  limit: number,
  onVerdict: (verdict: Verdict) => F
): Stream.Stream<StreamEvent.StreamEvent, E | F, R> =>
  Stream.suspend(() => {
    const probe = make(limit)
    let emitted = false
    const probed = Stream.transformPull(bytes, (pull) =>
      Effect.succeed(Effect.flatMap(pull, (chunks) => {
        for (let i = 0; i < chunks.length; i++) probe.feed(chunks[i]!)
        if (!emitted && probe.overLimit()) return Effect.fail(onVerdict(probe.end()!))
        return Effect.succeed(chunks)
      })))
    return Stream.transformPull(decode(probed), (pull) =>
      Effect.succeed(
        Effect.matchCauseEffect(pull, {
          onSuccess: (events) => {
            emitted = true
            return Effect.succeed(events)
          },
          onFailure: (cause): Pull.Pull<never, E | F> => {
            if (!emitted && Pull.isDoneCause(cause)) {
              const verdict = probe.end()
              if (verdict !== undefined) return Effect.fail(onVerdict(verdict))
            }
            return Effect.failCause(cause as Cause.Cause<E>)
          }
        })
      ))
  })
