/**
 * Hostile bodies and sources for the reader-driven stage (`EventReader.fromReadableStream` into
 * `Assembler.assemble` / `Assembler.stream`), each compared with the Stream pipeline the same
 * stream runs under any other consumer (the stream piped through an identity operator): the same
 * exit, the same outputs before it (`stream()`, also a consumer that stops after the first), and
 * the body's lock released (`locked === false`) however the run ended.
 */
import { assert, describe, it } from "@effect/vitest"
import { Assembler, EventReader } from "@toolgate/core"
import { Cause, Duration, Effect, Exit, Option, Stream } from "effect"
import { textReader } from "./textReader.js"

interface Hostile {
  readonly chunks: ReadonlyArray<Uint8Array>
  /** What the body does after its chunks: end, error, or never answer. */
  readonly after: "end" | "error" | "hang"
  /** Whether the body's cancel hook throws. */
  readonly throwingCancel?: boolean
}

const makeBody = (spec: Hostile) => {
  const state = { cancelled: 0 }
  let i = 0
  const stream = new ReadableStream<Uint8Array>({
    pull: (controller) => {
      if (i < spec.chunks.length) controller.enqueue(spec.chunks[i++]!)
      else if (spec.after === "end") controller.close()
      else if (spec.after === "error") controller.error(new Error("body broke"))
      else return new Promise<void>(() => {})
    },
    cancel: () => {
      state.cancelled++
      if (spec.throwingCancel) throw new Error("cancel hook broke")
    }
  }, { highWaterMark: 0 })
  return { stream, state }
}

class BodyError {
  readonly _tag = "BodyError"
  constructor(readonly message: string) {}
}

const onErrorTyped = (cause: unknown) => new BodyError(cause instanceof Error ? cause.message : String(cause))
const onErrorThrowing = (): BodyError => {
  throw new Error("onError broke")
}

/** The exit's shape: the turn's text, or the failure's tags and messages, or "defect". */
const shape = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isSuccess(exit)
    ? { ok: exit.value }
    : Cause.hasDies(exit.cause)
    ? "defect"
    : Cause.hasInterruptsOnly(exit.cause)
    ? "interrupted"
    : { failed: exit.cause.reasons.map((r) => r._tag === "Fail" ? JSON.stringify(r.error) : r._tag) }

const bounded = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.timeoutOption(Effect.exit(effect), Duration.seconds(1)).pipe(
    Effect.map(Option.match({ onNone: () => "hung" as const, onSome: shape }))
  )

type Form = "assemble" | "stream" | "first output"

const run = (spec: Hostile, onError: (cause: unknown) => BodyError, form: Form, driven: boolean) =>
  Effect.gen(function*() {
    const { state, stream } = makeBody(spec)
    const direct = EventReader.fromReadableStream({ evaluate: () => stream, onError }, textReader)
    const events = driven ? direct : direct.pipe(Stream.map((event) => event))
    assert.strictEqual(EventReader.readableOf(events) !== undefined, driven)
    /** The outputs `stream()` handed over before it ended, in order. */
    const outputs: Array<string> = []
    const outcome = form === "assemble"
      ? yield* bounded(Effect.map(Assembler.assemble()(events), (turn) => turn.text))
      : yield* bounded(
        Assembler.stream()(events).pipe(
          Stream.take(form === "stream" ? Infinity : 1),
          Stream.runForEach((o) => Effect.sync(() => outputs.push(o._tag === "TextDelta" ? o.text : o._tag)))
        )
      )
    return { outcome, outputs, locked: stream.locked, cancelled: state.cancelled }
  })

const utf8 = (s: string) => new TextEncoder().encode(s)
/** "héllo €" with both multi-byte characters split across reads, and empty chunks between. */
const split = (() => {
  const bytes = utf8("héllo €")
  return [bytes.slice(0, 2), new Uint8Array(0), bytes.slice(2, 6), bytes.slice(6, 8), new Uint8Array(0), bytes.slice(8)]
})()

const cases: ReadonlyArray<readonly [string, Hostile, (cause: unknown) => BodyError]> = [
  ["multi-byte characters split across reads, empty chunks", { chunks: split, after: "end" }, onErrorTyped],
  ["a huge chunk", { chunks: [utf8("x".repeat(1 << 20))], after: "end" }, onErrorTyped],
  ["an error after two reads", { chunks: split.slice(0, 3), after: "error" }, onErrorTyped],
  ["an error before any read", { chunks: [], after: "error" }, onErrorTyped],
  ["an error whose onError throws", { chunks: split.slice(0, 3), after: "error" }, onErrorThrowing],
  ["an error whose onError throws, cancel throws", {
    chunks: split.slice(0, 3),
    after: "error",
    throwingCancel: true
  }, onErrorThrowing],
  ["a clean end whose cancel hook throws", { chunks: split, after: "end", throwingCancel: true }, onErrorTyped],
  ["a body that never ends, cancel hook throws", { chunks: split, after: "hang", throwingCancel: true }, onErrorTyped]
]

describe("hostile bodies: the reader-driven stage against the Stream pipeline", () => {
  for (const [name, spec, onError] of cases) {
    for (const form of ["assemble", "stream", "first output"] as const) {
      // a body that never ends only ends for a consumer that stops
      if (spec.after === "hang" && form !== "first output") continue
      it.live(`${form}: ${name}`, () =>
        Effect.gen(function*() {
          const driven = yield* run(spec, onError, form, true)
          const piped = yield* run(spec, onError, form, false)
          assert.notStrictEqual(driven.outcome, "hung")
          assert.deepStrictEqual(driven.outcome, piped.outcome)
          assert.deepStrictEqual(driven.outputs, piped.outputs)
          assert.isFalse(driven.locked)
          assert.isFalse(piped.locked)
        }))
    }
  }
})
