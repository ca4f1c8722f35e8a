/**
 * Framing inputs that broke `Decoder.decodeSse`: the event-size limit depended on how the body was
 * split into reads (an oversized event in one read passed, the same bytes in small reads failed),
 * a second leading BOM was dropped on the plain parser path, and every event after a failure was
 * still decoded (and held) although assembly had ended.
 */
import { describe, expect, it } from "@effect/vitest"
import { Decoder, Provider } from "@toolgate/adapters"
import { Fixture } from "@toolgate/testing"
import { Effect, Stream } from "effect"

const modes: ReadonlyArray<Provider.Name | "auto"> = ["openai-chat", "auto"]

const chunk = (size: number) => ({ index: 0, delta: { content: "x".repeat(size) } })

/** A chat body whose second event carries `size` characters of content, then a finish. */
const chatBody = (size: number, eol = "\n") =>
  Fixture.sse([
    { data: { choices: [{ index: 0, delta: { content: "a" } }] } },
    { data: { choices: [chunk(size)] } },
    { data: { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] } }
  ], eol)

/** Read sizes to try: whole, tiny, odd, and around the limit. */
const readings = [[], [1], [3, 7], [997], [1000, 1], [4096]]

describe("Decoder: the event-size limit does not depend on the reads", () => {
  const maxEventSize = 1000

  it.effect("an event just under the limit passes, and one over it fails, however the body is read", () =>
    Effect.gen(function*() {
      // `data: ` plus the JSON around the content is 61 characters.
      const overhead = `data: ${JSON.stringify({ choices: [chunk(0)] })}`.length
      for (const mode of modes) {
        for (const eol of ["\n", "\r\n", "\r"]) {
          const under = Fixture.bytes(chatBody(maxEventSize - overhead, eol))
          const over = Fixture.bytes(chatBody(maxEventSize - overhead + 1, eol))
          for (const sizes of readings) {
            const ok = yield* Fixture.run(mode, Fixture.chunk(under, sizes), { maxEventSize })
            expect(ok.outcome, `${mode} under ${JSON.stringify(eol)} ${sizes}`).toBe("complete")
            const bad = yield* Fixture.run(mode, Fixture.chunk(over, sizes), { maxEventSize })
            expect(Fixture.outcome(bad), `${mode} over ${JSON.stringify(eol)} ${sizes}`).toEqual({
              outcome: "error",
              finishReason: null,
              text: "a",
              toolCalls: [],
              error: "MalformedStreamEvent"
            })
          }
        }
      }
    }))

  it.effect("a comment line over the limit fails whether it arrives whole or in pieces", () =>
    Effect.gen(function*() {
      const body = Fixture.bytes(`: ${"p".repeat(2000)}\n\n${chatBody(10)}`)
      for (const mode of modes) {
        for (const sizes of readings) {
          const result = yield* Fixture.run(mode, Fixture.chunk(body, sizes), { maxEventSize })
          expect(result.error, `${mode} ${sizes}`).toBe("MalformedStreamEvent")
          expect(result.text).toBe("")
        }
      }
    }))

  it.effect("the default limit (16 MiB) holds for a body read in one piece", () =>
    Effect.gen(function*() {
      const body = Fixture.bytes(chatBody(16 * 1024 * 1024 + 1))
      for (const mode of modes) {
        expect((yield* Fixture.run(mode, [body])).error).toBe("MalformedStreamEvent")
        expect((yield* Fixture.run(mode, Fixture.chunk(body, [65536]))).error).toBe("MalformedStreamEvent")
      }
    }))
})

describe("Decoder: a leading BOM", () => {
  it.effect("exactly one is dropped, on both paths and whatever the reads", () =>
    Effect.gen(function*() {
      // The second BOM belongs to the first line's field name ("\uFEFFdata"), an unknown field,
      // so the first event has no data and is not dispatched.
      const body = Fixture.bytes(`\uFEFF\uFEFF${chatBody(3)}`)
      for (const mode of modes) {
        for (const sizes of [[], [1], [2], [4]]) {
          const result = yield* Fixture.run(mode, Fixture.chunk(body, sizes))
          expect(Fixture.outcome(result), `${mode} ${sizes}`).toEqual({
            outcome: "complete",
            finishReason: "stop",
            text: "xxx",
            toolCalls: [],
            error: null
          })
        }
      }
      const one = Fixture.bytes(`\uFEFF${chatBody(3)}`)
      for (const mode of modes) {
        for (const sizes of [[], [1], [2]]) {
          expect((yield* Fixture.run(mode, Fixture.chunk(one, sizes))).text).toBe("axxx")
        }
      }
    }))
})

describe("Decoder: nothing is decoded after a failure", () => {
  it.effect("the event with the failure is the last one emitted, and no later event is decoded", () =>
    Effect.gen(function*() {
      const good = Fixture.sse([{ data: { choices: [{ index: 0, delta: { content: "x" } }] } }])
      const body = `${good}data: {oops\n\n${good.repeat(1000)}`
      for (const mode of [...Provider.names, "auto"] as const) {
        const events = yield* Stream.make(Fixture.bytes(body)).pipe(Provider.decode(mode), Stream.runCollect)
        expect(events.length, mode).toBeLessThanOrEqual(2)
        expect(events.at(-1)?.failure?._tag, mode).toBe("MalformedStreamEvent")
      }
      for (const sizes of [[], [16]]) {
        let decoded = 0
        const counting = (): Decoder.Decoder => {
          const inner = Provider.decoder("openai-chat")
          return {
            onEvent: (event) => {
              decoded++
              return inner.onEvent(event)
            }
          }
        }
        yield* Stream.fromIterable(Fixture.chunk(Fixture.bytes(body), sizes)).pipe(
          Decoder.decodeSse(counting),
          Stream.runDrain
        )
        expect(decoded, `${sizes}`).toBe(2)
      }
    }))

  it.effect("a failure of the byte stream after the failed event still surfaces to a consumer that keeps pulling", () =>
    Effect.gen(function*() {
      const error = yield* Stream.concat(
        Stream.make(Fixture.bytes("data: {oops\n\n")),
        Stream.fail("connection reset")
      ).pipe(Provider.decode("openai-chat"), Stream.runDrain, Effect.flip)
      expect(error).toBe("connection reset")
    }))
})
