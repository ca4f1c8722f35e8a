import { describe, expect, it } from "@effect/vitest"
import { Decoder } from "@toolgate/adapters"
import type { StreamEvent } from "@toolgate/core"
import { Fixture } from "@toolgate/testing"
import { Effect, Stream } from "effect"

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
