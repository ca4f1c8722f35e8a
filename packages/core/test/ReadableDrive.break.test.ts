/**
 * A reader that throws while the assembler drives a web body itself (`EventReader.fromReadableStream`
 * into `Assembler.assemble` / `Assembler.stream`): the run ends in a defect and the body is
 * cancelled; nothing escapes as an unhandled rejection (vitest fails a run that has one).
 */
import { assert, describe, it } from "@effect/vitest"
import { Assembler, EventReader } from "@toolgate/core"
import { Cause, Effect, Exit, Stream } from "effect"
import { textReader } from "./textReader.js"

/** A body of `reads` one-byte chunks that records whether it was cancelled. */
const body = (reads: number) => {
  const state = { cancelled: false, pulled: 0 }
  const stream = new ReadableStream<Uint8Array>({
    pull: (controller) => {
      if (state.pulled++ < reads) controller.enqueue(new Uint8Array([0x61]))
      else controller.close()
    },
    cancel: () => {
      state.cancelled = true
    }
  }, { highWaterMark: 0 })
  return { stream, state }
}

/** `textReader` (one text event per read: the body's `a`), throwing on read `at` (1-based). */
const throwingReader = (at: number) => (): EventReader.EventReader<Uint8Array, never> => {
  const reader = textReader()
  let seen = 0
  return {
    read: (chunks) => {
      if (++seen === at) throw new Error("reader bug")
      return reader.read(chunks)
    },
    end: reader.end,
    take: reader.take
  }
}

const isDefect = (exit: Exit.Exit<unknown, unknown>) => Exit.isFailure(exit) && Cause.hasDies(exit.cause)

describe("a reader that throws on a driven body", () => {
  it.effect("assemble: a defect, the body cancelled", () =>
    Effect.gen(function*() {
      const { state, stream } = body(5)
      const events = EventReader.fromReadableStream({ evaluate: () => stream, onError: (e) => e }, throwingReader(3))
      const exit = yield* Effect.exit(events.pipe(Assembler.assemble()))
      assert.isTrue(isDefect(exit))
      assert.isTrue(state.cancelled)
    }))

  it.effect("stream: the texts before the throw, then a defect; the body cancelled", () =>
    Effect.gen(function*() {
      const { state, stream } = body(5)
      const events = EventReader.fromReadableStream({ evaluate: () => stream, onError: (e) => e }, throwingReader(3))
      const texts: Array<string> = []
      const exit = yield* Effect.exit(
        events.pipe(
          Assembler.stream(),
          Stream.runForEach((output) => Effect.sync(() => output._tag === "TextDelta" && texts.push(output.text)))
        )
      )
      assert.isTrue(isDefect(exit))
      assert.deepStrictEqual(texts, ["a", "a"])
      assert.isTrue(state.cancelled)
    }))
})
