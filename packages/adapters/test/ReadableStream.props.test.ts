/**
 * The reader-driven entry point (`Provider.decodeReadableStream`, `EventReader.fromReadableStream`):
 * `Assembler.assemble` and `Assembler.stream` given such a stream drive the web `ReadableStream`'s
 * reader themselves. Over the whole fixture corpus, cut into any reads, and under truncation (a
 * clean early end, or a read that rejects), they give what the Stream pipeline
 * (`Stream.fromReadableStream` → `decode()` → the assembler) gives: the same outputs in the same
 * order, the same completed turn or the same typed error with the same fields, and each fixture's
 * expected outcome. The body's reader is cancelled and its lock released when the run is
 * interrupted or fails, and a text delta reaches the consumer before the next read is asked for.
 */
import { describe, expect, it } from "@effect/vitest"
import { Provider } from "@toolgate/adapters"
import { Assembler, EventReader, type StreamEvent } from "@toolgate/core"
import { Fixture } from "@toolgate/testing"
import { Arbitrary, Data, Effect, Exit, Fiber, Schema, Stream } from "effect"

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

/** Read sizes in bytes: mostly tiny (inside multi-byte UTF-8 characters and CRLF pairs), some large. */
const readSizes = Arbitrary.array(
  Arbitrary.flatMap(int(0, 3), (kind) => kind === 0 ? int(1, 4096) : int(1, 7)),
  { minLength: 1, maxLength: 24 }
)

class BodyError extends Data.TaggedError("BodyError")<{ readonly message: string }> {}

/** How a body built by {@link body} ends after its chunks. */
type Ending = "end" | "error"

/**
 * A web body of `chunks`, one per read, pulled on demand (no read ahead), that then ends or
 * rejects its next read; `log` records each read asked for and whether the body was cancelled.
 */
const body = (chunks: ReadonlyArray<Uint8Array>, ending: Ending = "end", log?: Array<string>) => {
  let at = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      log?.push(`read ${at}`)
      if (at < chunks.length) controller.enqueue(chunks[at++]!)
      else if (ending === "end") controller.close()
      else controller.error(new Error(`cut after ${at} reads`))
    },
    cancel() {
      log?.push("cancel")
    }
  }, { highWaterMark: 0 })
}

const source = (readable: ReadableStream<Uint8Array>): EventReader.Source<BodyError> => ({
  evaluate: () => readable,
  onError: (cause) => new BodyError({ message: String(cause) })
})

/** The reader-driven form. */
const direct = (provider: Provider.Name | "auto", readable: ReadableStream<Uint8Array>) =>
  Provider.decodeReadableStream(provider, source(readable))

/** The Stream pipeline users ran before: `Stream.fromReadableStream` then `decode()`. */
const pipeline = (provider: Provider.Name | "auto", readable: ReadableStream<Uint8Array>) =>
  Stream.fromReadableStream(source(readable)).pipe(Provider.decode(provider))

/** A result as plain data. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null))
const errorsOf = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isSuccess(exit) ? null : plain(exit.cause.reasons.map((r) => r._tag === "Fail" ? r.error : r._tag))

const runAssemble = <E>(events: Stream.Stream<StreamEvent.StreamEvent, E>) =>
  Effect.map(
    Effect.exit(events.pipe(Assembler.assemble())),
    (exit) => Exit.isSuccess(exit) ? { turn: plain(exit.value) } : { error: errorsOf(exit) }
  )

const runStream = <E>(events: Stream.Stream<StreamEvent.StreamEvent, E>) =>
  Effect.gen(function*() {
    const outputs: Array<unknown> = []
    const exit = yield* Effect.exit(
      events.pipe(Assembler.stream(), Stream.runForEach((output) => Effect.sync(() => outputs.push(plain(output)))))
    )
    return { outputs, error: errorsOf(exit) }
  })

for (const provider of Provider.names) {
  describe(provider, () => {
    const fixtures = Fixture.load(provider)

    it("a decodeReadableStream() stream is reader-driven and an operator after it is not", () => {
      const events = direct(provider, body([]))
      expect(EventReader.readableOf(events)).toBeDefined()
      expect(EventReader.readableOf(events.pipe(Stream.take(1)))).toBeUndefined()
      expect(EventReader.readableOf(pipeline(provider, body([])))).toBeUndefined()
    })

    it.effect.prop(
      "reader-driven and Stream pipeline agree on every body, however it is read, and give its expected outcome",
      { pick: int(0, fixtures.length - 1), sizes: readSizes, auto: Arbitrary.schema(Schema.Boolean) },
      ({ auto, pick, sizes }) =>
        Effect.gen(function*() {
          const fixture = fixtures[pick]!
          const chunks = Fixture.chunk(fixture.bytes, sizes)
          const name = auto ? "auto" : provider
          const assembled = yield* runAssemble(direct(name, body(chunks)))
          expect(assembled).toEqual(yield* runAssemble(pipeline(name, body(chunks))))
          const streamed = yield* runStream(direct(name, body(chunks)))
          expect(streamed).toEqual(yield* runStream(pipeline(name, body(chunks))))
          if (!auto) {
            // A body that ends cleanly never fails with its `BodyError`.
            const events = direct(provider, body(chunks)) as Stream.Stream<StreamEvent.StreamEvent, never>
            const run = yield* Fixture.runEvents(events)
            expect(Fixture.outcome(run)).toEqual(fixture.expected)
          }
        }),
      { arbitrary: { runs: 60 } }
    )

    it.effect.prop(
      "a body truncated after any read (a clean end or a rejected read) ends both forms the same way",
      {
        pick: int(0, fixtures.length - 1),
        sizes: readSizes,
        after: int(0, 30),
        ending: Arbitrary.schema(Schema.Literals(["end", "error"]))
      },
      ({ after, ending, pick, sizes }) =>
        Effect.gen(function*() {
          const chunks = Fixture.chunk(fixtures[pick]!.bytes, sizes).slice(0, after)
          const streamed = yield* runStream(direct(provider, body(chunks, ending)))
          expect(streamed).toEqual(yield* runStream(pipeline(provider, body(chunks, ending))))
          const assembled = yield* runAssemble(direct(provider, body(chunks, ending)))
          expect(assembled).toEqual(yield* runAssemble(pipeline(provider, body(chunks, ending))))
        }),
      { arbitrary: { runs: 60 } }
    )
  })
}

/** An OpenAI Chat body that streams text, then a second read that holds more text and the end. */
const textFirst = Fixture.bytes(
  `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}\n\n`
)
const textRest = Fixture.bytes(
  `data: {"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`
)

describe("the body's reader", () => {
  it.effect("is cancelled and released when assemble() is interrupted while a read is pending", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const readable = new ReadableStream<Uint8Array>({
        pull(controller) {
          log.push("read")
          if (log.length === 1) return controller.enqueue(textFirst)
          // Later reads never answer: the run waits on a pending read.
          return new Promise(() => {})
        },
        cancel() {
          log.push("cancel")
        }
      }, { highWaterMark: 0 })
      const fiber = yield* Effect.forkChild(direct("openai-chat", readable).pipe(Assembler.assemble()))
      while (log.length < 2) yield* Effect.yieldNow
      yield* Fiber.interrupt(fiber)
      expect(log).toEqual(["read", "read", "cancel"])
      expect(readable.locked).toBe(false)
    }))

  it.effect("is cancelled and released when stream() is interrupted while a read is pending", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const texts: Array<string> = []
      const readable = new ReadableStream<Uint8Array>({
        pull(controller) {
          log.push("read")
          if (log.length === 1) return controller.enqueue(textFirst)
          return new Promise(() => {})
        },
        cancel() {
          log.push("cancel")
        }
      }, { highWaterMark: 0 })
      const fiber = yield* Effect.forkChild(
        direct("openai-chat", readable).pipe(
          Assembler.stream(),
          Stream.runForEach((output) => Effect.sync(() => output._tag === "TextDelta" && texts.push(output.text)))
        )
      )
      while (log.length < 2) yield* Effect.yieldNow
      yield* Fiber.interrupt(fiber)
      expect(texts).toEqual(["Hel"])
      expect(log).toEqual(["read", "read", "cancel"])
      expect(readable.locked).toBe(false)
    }))

  it.effect("is cancelled and released when the body fails assembly before its end", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const malformed = Fixture.bytes("data: {not json\n\n")
      const chunks = [malformed, textRest]
      const assembled = yield* Effect.exit(direct("openai-chat", body(chunks, "end", log)).pipe(Assembler.assemble()))
      expect(errorsOf(assembled)).toMatchObject([{ _tag: "MalformedStreamEvent" }])
      expect(log).toEqual(["read 0", "cancel"])
      const streamed = yield* runStream(direct("openai-chat", body(chunks, "end")))
      expect(streamed.error).toEqual(errorsOf(assembled))
    }))

  it.effect("is cancelled and released when stream()'s consumer stops before the body's end", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const readable = body([textFirst, textRest], "end", log)
      const first = yield* direct("openai-chat", readable).pipe(Assembler.stream(), Stream.take(1), Stream.runCollect)
      expect(first).toEqual([{ _tag: "TextDelta", text: "Hel" }])
      expect(log).toEqual(["read 0", "cancel"])
      expect(readable.locked).toBe(false)
    }))

  it.effect("is released after a body read to its end", () =>
    Effect.gen(function*() {
      const readable = body([textFirst, textRest])
      const turn = yield* direct("openai-chat", readable).pipe(Assembler.assemble())
      expect(turn.text).toBe("Hello")
      expect(readable.locked).toBe(false)
    }))

  it.effect("a body that cannot be read (its reader taken) is the same defect in both forms", () =>
    Effect.gen(function*() {
      const locked = () => {
        const readable = body([textFirst, textRest])
        readable.getReader()
        return readable
      }
      const assembled = yield* runAssemble(direct("openai-chat", locked()))
      expect(assembled).toEqual({ error: ["Die"] })
      expect(assembled).toEqual(yield* runAssemble(pipeline("openai-chat", locked())))
      const streamed = yield* runStream(direct("openai-chat", locked()))
      expect(streamed).toEqual({ outputs: [], error: ["Die"] })
      expect(streamed).toEqual(yield* runStream(pipeline("openai-chat", locked())))
    }))

  it.effect("hands a text delta to stream()'s consumer before the next read is asked for", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      yield* direct("openai-chat", body([textFirst, textRest], "end", log)).pipe(
        Assembler.stream(),
        Stream.runForEach((output) =>
          Effect.sync(() => log.push(output._tag === "TextDelta" ? `text ${output.text}` : "turn"))
        )
      )
      expect(log).toEqual(["read 0", "text Hel", "read 1", "text lo", "read 2", "turn"])
    }))
})
