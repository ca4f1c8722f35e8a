/**
 * The assembler's fused stage (`EventReader`): `Assembler.assemble` and `Assembler.stream` given an
 * adapter's `decode()` directly decode and fold in one stage; given the same events through any
 * other stream they run as two. Over the whole fixture corpus, cut into any reads, both forms give
 * the same outputs in the same order and end the same way (the completed turn, or the same typed
 * error with the same fields), and a failure of the body itself passes through both unchanged.
 */
import { describe, expect, it } from "@effect/vitest"
import { Provider } from "@toolgate/adapters"
import { Assembler, EventReader, type StreamEvent } from "@toolgate/core"
import { Fixture } from "@toolgate/testing"
import { Arbitrary, Data, Effect, Exit, Schema, Stream } from "effect"

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

/** Read sizes in bytes: mostly tiny (inside multi-byte UTF-8 characters and CRLF pairs), some large. */
const readSizes = Arbitrary.array(
  Arbitrary.flatMap(int(0, 3), (kind) => kind === 0 ? int(1, 4096) : int(1, 7)),
  { minLength: 1, maxLength: 24 }
)

/** The same events as an ordinary stream: a new `Stream` around the same channel is not fused. */
const unfused = <E, R>(events: Stream.Stream<StreamEvent.StreamEvent, E, R>) => Stream.fromChannel(events.channel)

class BodyCut extends Data.TaggedError("BodyCut")<{ readonly at: number }> {}

/** A result as plain data: the exit of `assemble`, or every output of `stream` then its exit. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null))

const runAssemble = <E>(events: Stream.Stream<StreamEvent.StreamEvent, E>) =>
  Effect.map(Effect.exit(events.pipe(Assembler.assemble())), (exit) =>
    Exit.isSuccess(exit)
      ? { turn: plain(exit.value) }
      : { error: plain(exit.cause.reasons.map((r) => r._tag === "Fail" ? r.error : r._tag)) })

const runStream = <E>(events: Stream.Stream<StreamEvent.StreamEvent, E>) =>
  Effect.gen(function*() {
    const outputs: Array<unknown> = []
    const exit = yield* Effect.exit(
      events.pipe(
        Assembler.stream(),
        Stream.runForEach((output) => Effect.sync(() => outputs.push(plain(output))))
      )
    )
    return {
      outputs,
      error: Exit.isSuccess(exit) ? null : plain(exit.cause.reasons.map((r) => r._tag === "Fail" ? r.error : r._tag))
    }
  })

for (const provider of Provider.names) {
  describe(provider, () => {
    const fixtures = Fixture.load(provider)

    it("a decode() stream is fused and an operator after it is not", () => {
      const events = Stream.make(Fixture.bytes("")).pipe(Provider.decode(provider))
      expect(EventReader.readsOf(events)).toBeDefined()
      expect(EventReader.readsOf(unfused(events))).toBeUndefined()
      expect(EventReader.readsOf(events.pipe(Stream.take(1)))).toBeUndefined()
    })

    it.effect.prop(
      "fused and unfused assembly agree on every body, however it is read",
      { pick: int(0, fixtures.length - 1), sizes: readSizes, auto: Arbitrary.schema(Schema.Boolean) },
      ({ auto, pick, sizes }) =>
        Effect.gen(function*() {
          const fixture = fixtures[pick]!
          const chunks = Fixture.chunk(fixture.bytes, sizes)
          const events = () => Stream.fromIterable(chunks).pipe(Provider.decode(auto ? "auto" : provider))
          expect(yield* runAssemble(events())).toEqual(yield* runAssemble(unfused(events())))
          expect(yield* runStream(events())).toEqual(yield* runStream(unfused(events())))
        }),
      { arbitrary: { runs: 60 } }
    )

    it.effect.prop(
      "a body that fails after any read fails both forms with its own error, after the same outputs",
      { pick: int(0, fixtures.length - 1), sizes: readSizes, after: int(0, 30) },
      ({ after, pick, sizes }) =>
        Effect.gen(function*() {
          const fixture = fixtures[pick]!
          const chunks = Fixture.chunk(fixture.bytes, sizes).slice(0, after)
          const events = () =>
            Stream.fromIterable(chunks).pipe(
              Stream.concat(Stream.fail(new BodyCut({ at: after }))),
              Provider.decode(provider)
            )
          const fused = yield* runStream(events())
          expect(fused).toEqual(yield* runStream(unfused(events())))
          expect(yield* runAssemble(events())).toEqual(yield* runAssemble(unfused(events())))
        }),
      { arbitrary: { runs: 60 } }
    )
  })
}
