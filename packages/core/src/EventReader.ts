/**
 * A stream of core events decoded read by read: an upstream (a response body's bytes) and a
 * per-stream `EventReader` that turns the chunks of each upstream pull into that read's events,
 * with no Effect inside. Every adapter's `decode()` is one (`Decoder.decodeSse` in
 * `@toolgate/adapters`).
 *
 * Such a stream is an ordinary `Stream` of events, one array per read. It also remembers its
 * upstream and its reader, so that `Assembler.assemble` and `Assembler.stream`, given one directly,
 * run the decoding and the fold in one stage: one pull of the upstream per read, the read's events
 * pushed into the machine as they are decoded, no stream of events in between. The result is the
 * same either way (the fixture corpus and the properties run both forms); what it saves is the
 * fixed cost of one `Stream` stage per body (its channel, scope and pull loop), which dominates a
 * small body (`bench/RESULTS.md`). Any operator put between the two gives an ordinary stream, which
 * the assembler reads as it reads any other.
 *
 * A body that is a web `ReadableStream` can skip `Stream` altogether: a stream made by
 * {@link fromReadableStream} remembers the body's source, and `Assembler.assemble` and
 * `Assembler.stream`, given one directly, drive the body's reader themselves (one promise per
 * `reader.read()`, the events of a read pushed in a plain loop, Effect only at the boundary). That
 * saves the per-body cost of a `Stream` (about 0.2× a hand-written loop's time on a small body:
 * `bench/gap.ts`, the step "Stream pipeline" over "toolgate").
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type { LazyArg } from "effect/Function"
import * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import type { StreamEvent } from "./StreamEvent.js"

/**
 * The per-stream decoding state of a body. Create a fresh one for every stream.
 *
 * - `read` decodes the chunks of one upstream pull. It returns the failure that ends the stream
 *   when one is decided at this read (the chunks are then not decoded), else `undefined`.
 * - `end` is called once when the upstream ended; it returns the failure the stream ends with
 *   after the events it produced (for example `NotAnEventStream` for a body that held no event),
 *   else `undefined`.
 * - `take` hands over the events produced since the last call, in order; `undefined` when there
 *   are none. The first event that carries a failure must be the last one produced.
 *
 * @since 0.1.0
 * @category models
 */
export interface EventReader<I, E> {
  readonly read: (chunks: ReadonlyArray<I>) => E | undefined
  readonly end: () => E | undefined
  readonly take: () => Array<StreamEvent> | undefined
}

/**
 * The upstream and the reader of a stream made by {@link fromReads}, for the assembler's fused
 * stage.
 *
 * @since 0.1.0
 * @category models
 */
export interface Reads<I, E, R, E2> {
  readonly upstream: Stream.Stream<I, E, R>
  readonly open: () => EventReader<I, E2>
}

const ReadsKey = Symbol.for("@toolgate/core/EventReader/Reads")

/**
 * Where a body's bytes come from, as `Stream.fromReadableStream` takes it: `evaluate` returns the
 * body (called once per run; its reader is taken then), `onError` turns a rejected
 * `reader.read()` into the stream's failure.
 *
 * @since 0.1.0
 * @category models
 */
export interface Source<E> {
  readonly evaluate: LazyArg<ReadableStream<Uint8Array>>
  readonly onError: (error: unknown) => E
}

/**
 * The source and the reader of a stream made by {@link fromReadableStream}, for the assembler's
 * reader-driven stage.
 *
 * @since 0.1.0
 * @category models
 */
export interface Readable<E, E2> {
  readonly source: Source<E>
  readonly open: () => EventReader<Uint8Array, E2>
}

/**
 * The events of `upstream` decoded read by read: each upstream pull goes through the stream's
 * reader (`open()`, once per run) and its events come out as one array, so downstream work happens
 * per read, not per event. After the upstream ends, the events `end` produced, then its failure if
 * it returns one. The rest of the upstream is still pulled when the consumer keeps pulling after an
 * event with a failure (the reader drops it), so a failure of the upstream itself still surfaces.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromReads = <I, E, R, E2>(
  upstream: Stream.Stream<I, E, R>,
  open: () => EventReader<I, E2>
): Stream.Stream<StreamEvent, E | E2, R> => {
  const stream = Stream.transformPull(upstream, (pull) => Effect.sync(() => pullEvents(pull, open())))
  const reads: Reads<I, E, R, E2> = { upstream, open }
  Object.defineProperty(stream, ReadsKey, { value: reads })
  return stream
}

/**
 * The upstream and reader of a stream made by {@link fromReads} and not transformed since;
 * `undefined` for any other stream.
 *
 * @since 0.1.0
 * @category guards
 */
export const readsOf = <E, R>(
  stream: Stream.Stream<StreamEvent, E, R>
): Reads<unknown, E, R, E> | undefined =>
  (stream as unknown as { readonly [ReadsKey]?: Reads<unknown, E, R, E> })[ReadsKey]

/**
 * The events of a web `ReadableStream` body decoded read by read: as {@link fromReads} over
 * `Stream.fromReadableStream(source)` (what any consumer but the assembler runs; built only when
 * one does), and
 * remembered as a {@link Readable}, so that `Assembler.assemble` and `Assembler.stream`, given this
 * stream directly, read the body without a `Stream` in between. Either way the body's lock is
 * released when reading stops, and the body is cancelled when that is before its end (a failure,
 * an interruption).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromReadableStream = <E, E2>(
  source: Source<E>,
  open: () => EventReader<Uint8Array, E2>
): Stream.Stream<StreamEvent, E | E2> =>
  new ReadableEvents(source, open) as unknown as Stream.Stream<StreamEvent, E | E2>

const ReadableKey = Symbol.for("@toolgate/core/EventReader/Readable")

/**
 * The stream {@link fromReadableStream} makes: an effect `Stream` (it has the prototype of effect's
 * streams) whose channel, {@link fromReads} over `Stream.fromReadableStream(source)`, is built the
 * first time a consumer other than the assembler reads `channel` (the channel itself opens the body
 * anew on every run), so a body the assembler reads directly costs one object, not a stream, a
 * channel and their closures. Its source and reader stay private; it hands them over under a
 * `Symbol.for` key on its prototype, so a stream made by another copy of this module is read
 * directly too.
 */
class ReadableEvents<E, E2> {
  readonly #source: Source<E>
  readonly #open: () => EventReader<Uint8Array, E2>
  #channel: Stream.Stream<StreamEvent, E | E2>["channel"] | undefined
  constructor(source: Source<E>, open: () => EventReader<Uint8Array, E2>) {
    this.#source = source
    this.#open = open
  }
  get channel() {
    return this.#channel ??= fromReads(Stream.fromReadableStream<Uint8Array, E>(this.#source), this.#open).channel
  }
  get [ReadableKey](): Readable<E, E2> {
    return { source: this.#source, open: this.#open }
  }
}
Object.setPrototypeOf(ReadableEvents.prototype, Object.getPrototypeOf(Stream.empty))

/**
 * The source and reader of a stream made by {@link fromReadableStream} and not transformed since;
 * `undefined` for any other stream.
 *
 * @since 0.1.0
 * @category guards
 */
export const readableOf = <E, R>(
  stream: Stream.Stream<StreamEvent, E, R>
): Readable<E, E> | undefined => (stream as unknown as { readonly [ReadableKey]?: Readable<E, E> })[ReadableKey]

type Events = readonly [StreamEvent, ...Array<StreamEvent>]

/**
 * The pull of {@link fromReads}: one upstream pull, then that read's events as one array. The
 * effects are built once per stream and rerun for every read.
 */
const pullEvents = <I, E, E2>(
  pull: Pull.Pull<readonly [I, ...Array<I>], E, void>,
  reader: EventReader<I, E2>
): Pull.Pull<Events, E | E2, void> => {
  let halted = false
  let last: E2 | undefined
  const step = Effect.matchCauseEffect(pull, {
    onFailure: (cause): Pull.Pull<Events, E | E2, void> => {
      if (!Pull.isDoneCause(cause)) return Effect.failCause(cause as Cause.Cause<E>)
      halted = true
      last = reader.end()
      return next
    },
    onSuccess: (chunks) => {
      const failure = reader.read(chunks)
      return failure === undefined ? next : Effect.fail(failure)
    }
  })
  const next: Pull.Pull<Events, E | E2, void> = Effect.suspend(() => {
    const events = reader.take()
    if (events !== undefined) return Effect.succeed(events as unknown as Events)
    if (!halted) return step
    return last === undefined ? Cause.done() : Effect.fail(last)
  })
  return next
}
