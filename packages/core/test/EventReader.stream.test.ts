/**
 * A stream made by `EventReader.fromReadableStream` is effect's `Stream` for every consumer: each
 * probe runs against it and against the Stream pipeline it stands for (`EventReader.fromReads` over
 * `Stream.fromReadableStream`, suspended), and both must end alike (the same values, the same bodies
 * opened, cancelled and unlocked). The assembler reads it directly whichever copy of this module
 * made it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Assembler, EventReader, type StreamEvent } from "@toolgate/core"
import { Effect, Equal, Exit, Fiber, Hash, Stream } from "effect"
import { textReader } from "./textReader.js"

const utf8 = (s: string) => new TextEncoder().encode(s)

const makeBody = (chunks: Array<string>, after: "end" | "hang") => {
  const state = { cancelled: 0, bodies: [] as Array<ReadableStream<Uint8Array>> }
  const evaluate = () => {
    let i = 0
    const stream = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        if (i < chunks.length) controller.enqueue(utf8(chunks[i++]!))
        else if (after === "end") controller.close()
        else return new Promise<void>(() => {})
      },
      cancel: () => {
        state.cancelled++
      }
    }, { highWaterMark: 0 })
    state.bodies.push(stream)
    return stream
  }
  return { source: { evaluate, onError: (e: unknown) => String(e) }, state }
}

/** The Stream pipeline a `fromReadableStream` stream stands for. */
const pipeline = <E, E2>(
  source: EventReader.Source<E>,
  open: () => EventReader.EventReader<Uint8Array, E2>
): Stream.Stream<StreamEvent.StreamEvent, E | E2> =>
  Stream.suspend(() => EventReader.fromReads(Stream.fromReadableStream<Uint8Array, E>(source), open))

const texts = (s: Stream.Stream<StreamEvent.StreamEvent, any>) =>
  Effect.map(Stream.runCollect(s), (all) => all.map((e) => e.text))

const probe = (name: string, f: (make: typeof EventReader.fromReadableStream) => Effect.Effect<unknown, any>) =>
  it.effect(name, () =>
    Effect.gen(function*() {
      const expected = yield* Effect.exit(f(pipeline))
      const got = yield* Effect.exit(f(EventReader.fromReadableStream))
      assert.isTrue(Exit.isSuccess(expected))
      assert.deepStrictEqual(Exit.isSuccess(got) ? got.value : String(got), (expected as Exit.Success<unknown>).value)
    }))

describe("EventReader.fromReadableStream against the Stream pipeline it stands for", () => {
  probe("runCollect twice, concat, flatten, flatMap", (make) =>
    Effect.gen(function*() {
      const { source, state } = makeBody(["ab", "c"], "end")
      const s = make(source, textReader)
      const a = yield* texts(s)
      const b = yield* texts(s)
      const c = yield* texts(Stream.concat(s, s))
      const d = yield* texts(Stream.flatten(Stream.make(s, s)))
      const e = yield* texts(Stream.flatMap(Stream.make(1, 2), () => s))
      const m = Stream.map(s, (x) => x)
      const f1 = yield* texts(m)
      const f2 = yield* texts(m)
      const g = yield* texts(Stream.concat(Stream.concat(s, m), s))
      return { a, b, c, d, e, f1, f2, g, bodies: state.bodies.length, locked: state.bodies.map((body) => body.locked) }
    }))

  probe("concurrent runs of a mapped stream", (make) =>
    Effect.gen(function*() {
      const { source, state } = makeBody(["ab", "c", "d"], "end")
      const m = Stream.map(make(source, textReader), (x) => x)
      const all = yield* Effect.all([texts(m), texts(m), texts(m)], { concurrency: "unbounded" })
      return { all, bodies: state.bodies.length }
    }))

  probe("toReadableStream", (make) =>
    Effect.gen(function*() {
      const { source } = makeBody(["ab", "c"], "end")
      const rs = Stream.toReadableStream(make(source, textReader))
      const out: Array<unknown> = []
      yield* Effect.promise(async () => {
        const r = rs.getReader()
        for (;;) {
          const { done, value } = await r.read()
          if (done) break
          out.push(value)
        }
      })
      return out
    }))

  probe("share / broadcast", (make) =>
    Effect.scoped(Effect.gen(function*() {
      const { source, state } = makeBody(["ab", "c"], "end")
      const shared = yield* Stream.share(make(source, textReader), { capacity: 16 })
      const [x, y] = yield* Effect.all([texts(shared), texts(shared)], { concurrency: 2 })
      return { x, y, bodies: state.bodies.length }
    })))

  probe("interrupt mid-read: take(1) then body cancelled and unlocked", (make) =>
    Effect.gen(function*() {
      const { source, state } = makeBody(["ab", "c"], "hang")
      const a = yield* texts(Stream.take(make(source, textReader), 1))
      const fiber = yield* Effect.forkChild(texts(make(source, textReader)))
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 20)))
      yield* Fiber.interrupt(fiber)
      const fiber2 = yield* Effect.forkChild(Assembler.assemble()(make(source, textReader)))
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 20)))
      yield* Fiber.interrupt(fiber2)
      return { a, cancelled: state.cancelled, locked: state.bodies.map((body) => body.locked) }
    }))

  probe("assemble direct vs piped", (make) =>
    Effect.gen(function*() {
      const { source } = makeBody(["ab", "c"], "end")
      const s = make(source, textReader)
      const a = yield* Effect.flip(Assembler.assemble()(s))
      const b = yield* Effect.flip(Assembler.assemble()(Stream.map(s, (x) => x)))
      const c = yield* Stream.runCollect(Assembler.stream()(s)).pipe(Effect.exit)
      const tag = (e: unknown) => typeof e === "string" ? e : (e as { readonly _tag: string })._tag
      return { a: tag(a), b: tag(b), c: String(c) }
    }))

  probe("Equal / Hash", (make) =>
    Effect.sync(() => {
      const { source } = makeBody(["ab", "c"], "end")
      const s1 = make(source, textReader)
      const s2 = make(source, textReader)
      return {
        self: Equal.equals(s1, s1),
        two: Equal.equals(s1, s2),
        stable: Hash.hash(s1) === Hash.hash(s1)
      }
    }))

  it.effect("reading its channel twice gives one channel", () =>
    Effect.sync(() => {
      const { source } = makeBody(["ab"], "end")
      const s = EventReader.fromReadableStream(source, textReader)
      assert.strictEqual(s.channel, s.channel)
    }))
})

describe("two copies of @toolgate/core (its source and its build)", () => {
  it.effect("a stream made by either is read directly by the other's assembler", () =>
    Effect.gen(function*() {
      // @ts-ignore the build is imported as plain JavaScript
      const Built = yield* Effect.promise(() => import("../dist/EventReader.js"))
      const { source } = makeBody(["ab", "c"], "end")
      assert.isDefined(EventReader.readableOf(Built.fromReadableStream(source, textReader)))
      assert.isDefined(Built.readableOf(EventReader.fromReadableStream(source, textReader)))
      assert.isUndefined(Built.readableOf(Stream.map(EventReader.fromReadableStream(source, textReader), (e) => e)))
    }))
})

describe("EventReader.fromReadableStream as a Stream", () => {
  it.effect("is effect's Stream: each run evaluates its source once, and it maps, concatenates and runs again", () =>
    Effect.gen(function*() {
      let evaluated = 0
      const { source } = makeBody(["ab", "c"], "end")
      const events = EventReader.fromReadableStream({
        evaluate: () => {
          evaluated++
          return source.evaluate()
        },
        onError: source.onError
      }, textReader)
      assert.isTrue(Stream.isStream(events))
      assert.strictEqual(evaluated, 0)
      assert.deepStrictEqual(yield* texts(events), ["ab", "c"])
      assert.strictEqual(evaluated, 1)
      assert.deepStrictEqual(yield* texts(events), ["ab", "c"])
      assert.deepStrictEqual(yield* texts(Stream.concat(events, events)), ["ab", "c", "ab", "c"])
      assert.strictEqual(evaluated, 4)
      assert.deepStrictEqual(
        yield* Stream.runCollect(events.pipe(Stream.map((event) => event.text?.toUpperCase()))),
        ["AB", "C"]
      )
      // only the stream itself is read directly; a transformed one is not
      assert.isDefined(EventReader.readableOf(events))
      assert.isUndefined(EventReader.readableOf(events.pipe(Stream.map((event) => event))))
      // read by the assembler itself (this reader gives no finish signal: the turn is incomplete)
      assert.strictEqual(
        ((yield* Effect.flip(Assembler.assemble()(events))) as { readonly _tag: string })._tag,
        "IncompleteStream"
      )
      assert.strictEqual(evaluated, 6)
    }))
})
