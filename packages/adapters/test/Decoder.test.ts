import { describe, expect, it } from "@effect/vitest"
import { Decoder } from "@toolgate/adapters"
import type { StreamEvent } from "@toolgate/core"
import { Fixture } from "@toolgate/testing"
import { Arbitrary, Effect, Schema, Stream } from "effect"
import { Sse } from "effect/encoding"

/**
 * A decoder that records what `decodeSse` hands it, in order: `E:<type>:<data>` for an event,
 * `L:<line>` for an unframed line, `END` for the end of the body.
 */
const recorder = (unframed: boolean) => {
  const log: Array<string> = []
  const make = (): Decoder.Decoder => ({
    onEvent: ({ data, event }) => {
      log.push(`E:${event}:${data}`)
      return undefined
    },
    onEnd: () => {
      log.push("END")
      return undefined
    },
    ...(unframed
      ? {
        onUnframedLine: (line: string) => {
          log.push(`L:${line}`)
          return undefined
        }
      }
      : {})
  })
  return { log, make }
}

const decodeIn = (reads: ReadonlyArray<string | Uint8Array>, unframed: boolean) =>
  Effect.gen(function*() {
    const { log, make } = recorder(unframed)
    yield* Stream.fromIterable(reads.map((r) => typeof r === "string" ? Fixture.bytes(r) : r)).pipe(
      Decoder.decodeSse(make),
      Stream.runDrain
    )
    return log
  })

/** Every way to split `text` into two reads, as bytes. */
const splits = (text: string): Array<Array<Uint8Array>> => {
  const bytes = Fixture.bytes(text)
  return Array.from({ length: bytes.length + 1 }, (_, at) => [bytes.subarray(0, at), bytes.subarray(at)])
}

describe("Decoder.decodeSse", () => {
  for (const unframed of [false, true]) {
    describe(unframed ? "line-splitting path (onUnframedLine)" : "plain parser path", () => {
      it.effect("frames events per the WHATWG rules, whatever the read boundaries", () =>
        Effect.gen(function*() {
          const text = "\uFEFF: comment\r\nevent: a\r\ndata:x\rdata: y\n\nid: 7\nretry: 10\ndata: é€😀\r\n\r\n" +
            "data: cut off before its blank line"
          const expected = ["E:a:x\ny", "E:message:é€😀", "END"]
          for (const reads of splits(text)) {
            expect(yield* decodeIn(reads, unframed)).toEqual(expected)
          }
        }))

      it.effect("a CR ending one read and an LF starting the next are one line end", () =>
        Effect.gen(function*() {
          expect(yield* decodeIn(["data: a\r", "\ndata: b\r", "\n\r", "\n"], unframed)).toEqual([
            "E:message:a\nb",
            "END"
          ])
        }))

      it.effect("a UTF-8 character split across one-byte reads comes out whole", () =>
        Effect.gen(function*() {
          const bytes = Fixture.bytes("data: 日本 🇩🇪\n\n")
          const reads = Array.from(bytes, (b) => Uint8Array.of(b))
          expect(yield* decodeIn(reads, unframed)).toEqual(["E:message:日本 🇩🇪", "END"])
        }))
    })
  }

  it.effect("hands unframed lines to a decoder that asks, in body order, the last one without a line end", () =>
    Effect.gen(function*() {
      const text =
        "data: 1\r\n\r\n{\r\n  \"error\": 1,\r\n: comment\r\nevent: x\r\ndata: 2\r\n\r\nfield without colon\r\n}"
      const expected = [
        "E:message:1",
        "L:{",
        "L:  \"error\": 1,",
        "E:x:2",
        "L:field without colon",
        "L:}",
        "END"
      ]
      for (const reads of splits(text)) {
        expect(yield* decodeIn(reads, true)).toEqual(expected)
      }
    }))

  it.effect("never hands unframed lines to a decoder that does not ask", () =>
    Effect.gen(function*() {
      expect(yield* decodeIn(["{\n\"error\": 1\n}\ndata: 1\n\n"], false)).toEqual(["E:message:1", "END"])
    }))

  it.effect.each([false, true])(
    "an event larger than maxEventSize is a MalformedStreamEvent (unframed: %s)",
    (unframed) =>
      Effect.gen(function*() {
        const { make } = recorder(unframed)
        const events: Array<StreamEvent.StreamEvent> = []
        yield* Stream.make(Fixture.bytes(`data: ${"x".repeat(100)}`)).pipe(
          Decoder.decodeSse(make, { maxEventSize: 50 }),
          Stream.runForEach((e) => Effect.sync(() => events.push(e)))
        )
        expect(events.map((e) => e.failure?._tag)).toEqual(["MalformedStreamEvent"])
      })
  )
})

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

/**
 * Lines of every kind the WHATWG algorithm tells apart, and lines that only look like them: `data`
 * with and without its space, with no colon, empty, multi-byte; `event`, `id` (one with a NUL,
 * which is ignored), `retry` (valid and not), comments, unknown fields, prefixes of field names,
 * a field name with a space or in capitals, a BOM inside a line, a BOM's bytes read as Latin-1,
 * the blank line that dispatches.
 */
const lineKinds = [
  "data: x",
  "data:x",
  "data:  two spaces",
  "data",
  "data:",
  "data: é€😀",
  "data: {\"a\": [1, 2]}",
  "event: a",
  "event:",
  "event:b",
  "id: 7",
  "id",
  "id: a\u0000b",
  "retry: 100",
  "retry: soon",
  ": comment",
  ":",
  "unknown: v",
  "dat",
  "x",
  "{",
  "}",
  "Data: x",
  " data: x",
  "data : x",
  "\uFEFFdata: a BOM inside",
  "ï»¿data: a BOM read as Latin-1",
  "",
  "",
  ""
]
const lineEnds = ["\n", "\r", "\r\n"]
const boms = ["", "", "\uFEFF", "\uFEFF\uFEFF", "ï»¿"]

/** A body of random lines and line ends, maybe with a BOM, maybe ending inside a line, and its reads. */
const bodies = Arbitrary.all({
  bom: int(0, boms.length - 1),
  lines: Arbitrary.array(Arbitrary.all({ kind: int(0, lineKinds.length - 1), end: int(0, lineEnds.length - 1) }), {
    maxLength: 40
  }),
  tail: int(0, lineKinds.length - 1),
  sizes: Arbitrary.array(Arbitrary.flatMap(int(0, 4), (kind) => kind === 0 ? int(8, 512) : int(1, 7)), {
    minLength: 1,
    maxLength: 16
  })
})

const textOf = (body: typeof bodies extends Arbitrary.Arbitrary<infer A> ? A : never) =>
  boms[body.bom]! + body.lines.map(({ end, kind }) => lineKinds[kind]! + lineEnds[end]!).join("") +
  lineKinds[body.tail]!

/** `decodeSse`'s log over the reads, then `NotAnEventStream` when the body was judged not to be a stream. */
const decodeLog = (reads: ReadonlyArray<Uint8Array>, unframed: boolean) =>
  Effect.gen(function*() {
    const { log, make } = recorder(unframed)
    yield* Stream.fromIterable(reads).pipe(
      Decoder.decodeSse(make),
      Stream.runDrain,
      Effect.catchTag("NotAnEventStream", () => Effect.sync(() => log.push("NotAnEventStream")))
    )
    return log
  })

/** What effect's `Sse.makeParser` dispatches for the whole text, in the recorder's notation. */
const effectEvents = (feed: (parser: Sse.Parser) => void): Array<string> => {
  const log: Array<string> = []
  const parser = Sse.makeParser((event) => {
    if (event._tag === "Event") log.push(`E:${event.event}:${event.data}`)
  })
  feed(parser)
  return log
}

const isUnframed = (line: string) => line.length > 0 && !/^(:|(data|event|id|retry)(:|$))/.test(line)

describe("Decoder.decodeSse framing agrees with effect's Sse.makeParser", () => {
  it.effect.prop(
    "on any body in any reads: the same events, in order",
    { body: bodies },
    ({ body }) =>
      Effect.gen(function*() {
        const bytes = Fixture.bytes(textOf(body))
        // effect's parser drops the BOM itself, so it gets the text with the BOM kept.
        const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes)
        const expected = [...effectEvents((parser) => parser.feed(text)), "END"]
        const got = yield* decodeLog(Fixture.chunk(bytes, body.sizes), false)
        expect(got).toEqual(got.at(-1) === "NotAnEventStream" ? ["END", "NotAnEventStream"] : expected)
        if (got.at(-1) === "NotAnEventStream") expect(expected).toEqual(["END"])
      }),
    { arbitrary: { runs: 1500 } }
  )

  it.effect.prop(
    "on the line-splitting path: the same events, and every unframed line in body order",
    { body: bodies },
    ({ body }) =>
      Effect.gen(function*() {
        const bytes = Fixture.bytes(textOf(body))
        // The reference: one BOM dropped by the UTF-8 decode, lines split on CRLF, LF or CR,
        // unframed lines recorded and the others fed to effect's parser one by one (after a
        // blank line, so that it drops no second BOM); the last line counts without a line end.
        const lines = new TextDecoder().decode(bytes).split(/\r\n|\r|\n/)
        const last = lines.pop()!
        const expected: Array<string> = []
        const parser = Sse.makeParser((event) => {
          if (event._tag === "Event") expected.push(`E:${event.event}:${event.data}`)
        })
        parser.feed("\n")
        for (const line of lines) {
          if (isUnframed(line)) expected.push(`L:${line}`)
          else parser.feed(`${line}\n`)
        }
        if (isUnframed(last)) expected.push(`L:${last}`)
        expected.push("END")
        const got = yield* decodeLog(Fixture.chunk(bytes, body.sizes), true)
        expect(got).toEqual(got.at(-1) === "NotAnEventStream" ? [...expected, "NotAnEventStream"] : expected)
      }),
    { arbitrary: { runs: 1000 } }
  )

  it.effect.prop(
    "the event-size limit fails the same event, with the same events before it, whatever the reads",
    {
      body: bodies,
      max: int(1, 40),
      sizes: Arbitrary.array(int(1, 48), { minLength: 1, maxLength: 16 }),
      unframed: Arbitrary.schema(Schema.Boolean)
    },
    ({ body, max, sizes, unframed }) =>
      Effect.gen(function*() {
        // Reads about as long as the limit: some hold a whole event and the blank line after it.
        const bytes = Fixture.bytes(textOf(body))
        const run = (reads: ReadonlyArray<Uint8Array>) =>
          Effect.gen(function*() {
            const { log, make } = recorder(unframed)
            yield* Stream.fromIterable(reads).pipe(
              Decoder.decodeSse(make, { maxEventSize: max }),
              Stream.runForEach((event) => Effect.sync(() => log.push(`F:${event.failure?._tag}`))),
              Effect.catchTag("NotAnEventStream", () => Effect.sync(() => log.push("NotAnEventStream")))
            )
            return log
          })
        expect(yield* run(Fixture.chunk(bytes, sizes))).toEqual(yield* run(Fixture.chunk(bytes, [1])))
      }),
    { arbitrary: { runs: 1000 } }
  )

  it.effect("drops exactly one leading BOM, and never the characters ï»¿", () =>
    Effect.gen(function*() {
      for (const unframed of [false, true]) {
        expect(yield* decodeIn(["\uFEFF\uFEFFdata: 1\n\ndata: 2\n\n"], unframed)).toEqual(
          unframed ? ["L:\uFEFFdata: 1", "E:message:2", "END"] : ["E:message:2", "END"]
        )
        expect(yield* decodeIn(["ï»¿data: 1\n\ndata: 2\n\n"], unframed)).toEqual(
          unframed ? ["L:ï»¿data: 1", "E:message:2", "END"] : ["E:message:2", "END"]
        )
        expect(yield* decodeIn([Uint8Array.of(0xef), Uint8Array.of(0xbb, 0xbf), "data: 1\n\n"], unframed)).toEqual([
          "E:message:1",
          "END"
        ])
      }
    }))
})
