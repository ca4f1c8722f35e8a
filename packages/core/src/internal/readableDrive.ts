/**
 * How the assembler's machine is driven by a web `ReadableStream` directly: `Assembler.assemble`
 * and `Assembler.stream` given a stream made by `EventReader.fromReadableStream`. One reader, one
 * `EventReader` and one machine per body; each `reader.read()` is awaited in a plain promise
 * callback, its chunk decoded and its events pushed in a loop. Effect sits at the boundary only:
 * `assemble` is one `Effect.callback` for the whole body, `stream` one `Effect.callback` per pull
 * (which reads until the body produced an output, so a text delta is handed over before the next
 * read).
 *
 * The reader is released as `Stream.fromReadableStream` releases it (effect's `Channel.ts`,
 * `readableStreamToPullUnsafe`): `cancel()` then `releaseLock()` whenever the body stops being
 * read before its end (a failure, an interruption; a cancel hook that fails is a defect). At the
 * body's end only the lock is released: cancelling a closed body does nothing (WHATWG Streams,
 * `ReadableStreamCancel`), and skipping it saves a few promise turns per body.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Effect from "effect/Effect"
import * as Pull from "effect/Pull"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { AssembledTurn, Machine, Output } from "../Assembler.js"
import type { AssemblyError } from "../AssemblyError.js"
import type * as EventReader from "../EventReader.js"
import * as Drive from "./assemblerDrive.js"

/**
 * Cancels the body and releases its lock. Rejects only when the cancel hook failed on a body that
 * had not errored (a body that errored rejects `cancel()` with the error already reported).
 */
const release = (reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> =>
  reader.cancel().catch((error) => reader.closed.then(() => Promise.reject(error), () => undefined)).finally(
    () => reader.releaseLock()
  )

/** `Assembler.assemble` over an `EventReader.fromReadableStream` stream. */
export const assemble = <E, E2>(
  readable: EventReader.Readable<E, E2>,
  makeMachine: () => Machine
): Effect.Effect<AssembledTurn, AssemblyError | E | E2> =>
  Effect.callback<AssembledTurn, AssemblyError | E | E2>((resume) => {
    const machine = makeMachine()
    const events = readable.open()
    const reader = readable.source.evaluate().getReader()
    /** The single chunk of a read, as `EventReader.read` takes it (one array reused per body). */
    const chunks: Array<Uint8Array> = []
    let stopped = false

    const finish = (exit: Effect.Effect<AssembledTurn, AssemblyError | E | E2>) => {
      stopped = true
      release(reader).then(() => resume(exit), (defect) => resume(Effect.die(defect)))
    }
    /** The body ended: nothing to cancel. */
    const finishAtEnd = (exit: Effect.Effect<AssembledTurn, AssemblyError | E | E2>) => {
      stopped = true
      reader.releaseLock()
      resume(exit)
    }
    /** Pushes the events produced so far; the machine's failure, if one is reached. */
    const pushTaken = (): AssemblyError | undefined => Drive.pushEvents(machine, events.take())
    const onRead = (result: ReadableStreamReadResult<Uint8Array>): void => {
      if (stopped) return
      try {
        step(result)
      } catch (defect) {
        // the reader and the machine do not throw (property-tested); should one, it is a defect, never an unhandled rejection
        if (!stopped) finish(Effect.die(defect))
      }
    }
    const step = (result: ReadableStreamReadResult<Uint8Array>): void => {
      if (result.done) {
        const failure = events.end()
        const failed = pushTaken()
        if (failed !== undefined) return finishAtEnd(Effect.fail(failed))
        return finishAtEnd(failure === undefined ? Effect.fromResult(machine.end()) : Effect.fail(failure))
      }
      chunks[0] = result.value
      const failure = events.read(chunks)
      if (failure !== undefined) return finish(Effect.fail(failure))
      const failed = pushTaken()
      if (failed !== undefined) return finish(Effect.fail(failed))
      reader.read().then(onRead, onError)
    }
    const onError = (cause: unknown): void => {
      if (stopped) return
      let failure: E
      try {
        failure = readable.source.onError(cause)
      } catch (defect) {
        // as `Effect.tryPromise` treats a `catch` that throws: a defect, never a hang
        return finish(Effect.die(defect))
      }
      finish(Effect.fail(failure))
    }
    reader.read().then(onRead, onError)
    return Effect.promise(() => {
      if (stopped) return Promise.resolve()
      stopped = true
      return release(reader)
    })
  })

type Outputs = readonly [Output, ...Array<Output>]

/**
 * `Assembler.stream` over an `EventReader.fromReadableStream` stream: each pull reads until the
 * body produced an output (the text deltas of a read, or at the end the completed turn), then
 * hands the read's outputs over as one array. The first failure is kept for the next pull, after
 * the outputs that precede it, as the Stream form does.
 */
export const stream = <E, E2>(
  readable: EventReader.Readable<E, E2>,
  makeMachine: () => Machine
): Stream.Stream<Output, AssemblyError | E | E2> =>
  Stream.fromChannel(Channel.fromTransform((_, scope) =>
    Effect.suspend(() => {
      const machine = makeMachine()
      const events = readable.open()
      const reader = readable.source.evaluate().getReader()
      const chunks: Array<Uint8Array> = []
      let halted = false
      let released = false
      let pendingFailure: AssemblyError | E | E2 | undefined
      /** The resume of the pull in flight. */
      let resume: ((effect: Pull.Pull<Outputs, AssemblyError | E | E2, void>) => void) | undefined

      /** Pushes the events produced so far and collects their text deltas; keeps the first failure. */
      const collect = (out: Array<Output>) => {
        const failure = Drive.pushEvents(machine, events.take(), out)
        if (failure !== undefined) pendingFailure = failure
      }
      const hand = (out: Array<Output>) => {
        const to = resume!
        resume = undefined
        to(out.length > 0 ? Effect.succeed(out as unknown as Outputs) : next)
      }
      const onRead = (result: ReadableStreamReadResult<Uint8Array>): void => {
        if (released) return
        try {
          step(result)
        } catch (defect) {
          // as in `assemble`: a throw is a defect of the pull in flight, never an unhandled rejection
          const to = resume
          resume = undefined
          halted = true
          if (to !== undefined) to(Effect.die(defect))
        }
      }
      const step = (result: ReadableStreamReadResult<Uint8Array>): void => {
        const out: Array<Output> = []
        if (result.done) {
          halted = true
          released = true
          reader.releaseLock()
          const failure = events.end()
          collect(out)
          if (pendingFailure === undefined && failure !== undefined) pendingFailure = failure
          if (pendingFailure === undefined) pendingFailure = Drive.endInto(machine, out)
          return hand(out)
        }
        chunks[0] = result.value
        const failure = events.read(chunks)
        if (failure !== undefined) {
          pendingFailure = failure
          return hand(out)
        }
        collect(out)
        if (out.length > 0 || pendingFailure !== undefined) return hand(out)
        reader.read().then(onRead, onError)
      }
      const onError = (cause: unknown): void => {
        if (released) return
        try {
          pendingFailure = readable.source.onError(cause)
        } catch (defect) {
          // as in `assemble`: an `onError` that throws is a defect of the pull in flight, never a hang
          halted = true
          const to = resume!
          resume = undefined
          return to(Effect.die(defect))
        }
        hand([])
      }
      const read = Effect.callback<Outputs, AssemblyError | E | E2 | Cause.Done>((to) => {
        resume = to
        reader.read().then(onRead, onError)
      })
      const next: Pull.Pull<Outputs, AssemblyError | E | E2, void> = Effect.suspend(() =>
        pendingFailure !== undefined ? Effect.fail(pendingFailure) : halted ? Cause.done() : read
      )
      return Effect.as(
        Scope.addFinalizer(
          scope,
          Effect.promise(() => {
            if (released) return Promise.resolve()
            released = true
            return release(reader)
          })
        ),
        next
      )
    })
  ))
