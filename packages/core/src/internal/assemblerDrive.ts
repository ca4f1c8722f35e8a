/**
 * How the assembler's machine is driven by a Stream: `Assembler.assemble` (over events, or fused
 * with the decoding of an `EventReader.fromReads` stream) and the pull of `Assembler.stream`. The
 * machine itself, its rules and its outputs are `Assembler`'s.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Pull from "effect/Pull"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import type { AssembledTurn, Machine, Output } from "../Assembler.js"
import type { AssemblyError } from "../AssemblyError.js"
import type * as EventReader from "../EventReader.js"
import type { StreamEvent } from "../StreamEvent.js"

/** `Assembler.assemble` over a stream of events. */
export const assembleEvents = <E, R>(
  self: Stream.Stream<StreamEvent, E, R>,
  makeMachine: () => Machine
): Effect.Effect<AssembledTurn, AssemblyError | E, R> =>
  Effect.suspend(() => {
    const machine = makeMachine()
    return Stream.runForEachArray(self, (events) => pushAll(machine, events)).pipe(
      Effect.flatMap(() => Effect.fromResult(machine.end()))
    )
  })

/**
 * Pushes a batch of events into the machine, stopping at its first failure, which it returns; with
 * `out`, each event's text delta is appended to it as it is pushed (the failing event's too). The
 * one push loop of every driver (here and `readableDrive`).
 */
export const pushEvents = (
  machine: Machine,
  events: ReadonlyArray<StreamEvent> | undefined,
  out?: Array<Output>
): AssemblyError | undefined => {
  if (events !== undefined) {
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!
      machine.push(event)
      if (out !== undefined && event.text) out.push({ _tag: "TextDelta", text: event.text })
      if (machine.failure !== undefined) return machine.failure
    }
  }
  return undefined
}

/** The machine's verdict at the end of the body: its failure, or `undefined` with the completed turn appended to `out`. */
export const endInto = (machine: Machine, out: Array<Output>): AssemblyError | undefined => {
  const verdict = machine.end()
  if (Result.isFailure(verdict)) return verdict.failure
  out.push({ _tag: "TurnCompleted", turn: verdict.success })
  return undefined
}

/** Pushes a batch of events; fails with the machine's failure as soon as there is one. */
const pushAll = (
  machine: Machine,
  events: ReadonlyArray<StreamEvent> | undefined
): Effect.Effect<void, AssemblyError> => {
  const failure = pushEvents(machine, events)
  return failure === undefined ? Effect.void : Effect.fail(failure)
}

/** `Assembler.assemble` fused with the decoding of an `EventReader.fromReads` stream. */
export const assembleReads = <E, R>(
  reads: EventReader.Reads<unknown, E, R, E>,
  makeMachine: () => Machine
): Effect.Effect<AssembledTurn, AssemblyError | E, R> =>
  Effect.suspend(() => {
    const machine = makeMachine()
    const reader = reads.open()
    return Stream.runForEachArray(reads.upstream, (chunks): Effect.Effect<void, AssemblyError | E> => {
      const failure = reader.read(chunks)
      return failure === undefined ? pushAll(machine, reader.take()) : Effect.fail(failure)
    }).pipe(
      Effect.flatMap((): Effect.Effect<AssembledTurn, AssemblyError | E> => {
        const failure = reader.end()
        const failed = pushEvents(machine, reader.take())
        if (failed !== undefined) return Effect.fail(failed)
        return failure === undefined ? Effect.fromResult(machine.end()) : Effect.fail(failure)
      })
    )
  })

type Outputs = readonly [Output, ...Array<Output>]

/**
 * The pull of `Assembler.stream`: one upstream array, then its text deltas as one array (or, at the
 * end, the completed turn). Without `reader` the upstream arrays are events; with it they are the
 * chunks of one read, which the reader decodes first (the fused stage). The effects are built once
 * per stream and rerun for every upstream array.
 */
export const pullOutputs = <I, E>(
  pull: Pull.Pull<readonly [I, ...Array<I>], E, void>,
  machine: Machine,
  reader?: EventReader.EventReader<I, E>
): Pull.Pull<Outputs, AssemblyError | E, void> => {
  let halted = false
  let pendingFailure: AssemblyError | E | undefined
  /** Pushes a batch of events and collects their text deltas; keeps the first failure for the next pull. */
  const collect = (events: ReadonlyArray<StreamEvent>, out: Array<Output>) => {
    const failure = pushEvents(machine, events, out)
    if (failure !== undefined) pendingFailure = failure
  }
  const finish = (out: Array<Output>): Pull.Pull<Outputs, AssemblyError | E, void> => {
    if (pendingFailure === undefined) pendingFailure = endInto(machine, out)
    return out.length > 0 ? Effect.succeed(out as unknown as Outputs) : next
  }
  const step = Effect.matchCauseEffect(pull, {
    onFailure: (cause): Pull.Pull<Outputs, AssemblyError | E, void> => {
      if (!Pull.isDoneCause(cause)) return Effect.failCause(cause as Cause.Cause<E>)
      halted = true
      const out: Array<Output> = []
      if (reader !== undefined) {
        const failure = reader.end()
        const events = reader.take()
        if (events !== undefined) collect(events, out)
        if (pendingFailure === undefined && failure !== undefined) pendingFailure = failure
      }
      return finish(out)
    },
    onSuccess: (batch) => {
      const out: Array<Output> = []
      if (reader === undefined) collect(batch as unknown as ReadonlyArray<StreamEvent>, out)
      else {
        const failure = reader.read(batch)
        if (failure !== undefined) return Effect.fail(failure)
        const events = reader.take()
        if (events !== undefined) collect(events, out)
      }
      return out.length > 0 ? Effect.succeed(out as unknown as Outputs) : next
    }
  })
  const next: Pull.Pull<Outputs, AssemblyError | E, void> = Effect.suspend(() =>
    pendingFailure !== undefined ? Effect.fail(pendingFailure) : halted ? Cause.done() : step
  )
  return next
}
