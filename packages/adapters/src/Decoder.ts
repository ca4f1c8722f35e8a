/**
 * The shape every provider adapter shares: a per-stream `Decoder` that turns one dispatched
 * server-sent event into at most one core `StreamEvent`, and `decodeSse`, which runs a decoder
 * over a response body's bytes.
 *
 * Framing is effect's own SSE parser, `Sse.makeParser` from `effect/encoding`: it implements the
 * WHATWG "Interpreting an event stream" algorithm (CRLF/LF/CR line ends including a CR and LF
 * split across reads, `data:` with or without its one space, multi-line `data`, comments,
 * `event:`/`id:`/`retry:` fields, a leading BOM, no dispatch of an event the body cut off before
 * its blank line). It is plain mutable state fed whole chunks, with no Effect per event, and it
 * ships with the effect version we already depend on. We drive the parser directly rather than
 * through `Sse.decode()` because that channel fails the stream on a `retry:` line, which providers
 * never rely on and the fixture rules say to ignore. Bytes become text through one streaming
 * `TextDecoder`, so a UTF-8 character split across reads comes out whole.
 *
 * A decoder that implements `onUnframedLine` (Gemini, and `auto` before it knows the format)
 * also receives the body lines a spec-compliant parser drops: lines that are neither blank, nor a
 * comment, nor a `data`, `event`, `id` or `retry` field. For such a decoder `decodeSse` splits
 * lines itself (CRLF, LF or CR, including a CR that ends one read and an LF that starts the next),
 * hands unframed lines to the decoder and the rest, in order, to the same SSE parser; the last
 * line of the body counts even without a line end. This is the one departure from plain SSE
 * (`test/fixtures/README.md` §1, "Gemini exception"), so it runs only for decoders that ask for it:
 * the others keep the plain parser path.
 *
 * @since 0.1.0
 */
import { AssemblyError, ModelStreamError, type StreamEvent } from "@toolgate/core"
import { Cause, Channel, Effect, Pull, Stream } from "effect"
import { Sse } from "effect/encoding"
import * as EventStreamProbe from "./internal/eventStreamProbe.js"

/**
 * A dispatched server-sent event: its `event:` type (`"message"` by default) and its data.
 *
 * @since 0.1.0
 * @category models
 */
export interface SseEvent {
  readonly event: string
  readonly data: string
}

/**
 * A per-stream provider decoder. Create a fresh one for every stream: decoders keep state
 * (open blocks, whether a terminal event was seen).
 *
 * @since 0.1.0
 * @category models
 */
export interface Decoder {
  /** Translates one dispatched SSE event. `undefined` when the event changes nothing. */
  readonly onEvent: (event: SseEvent) => StreamEvent.StreamEvent | undefined
  /** Called once when the body ends, for a last event (for example a call still open). */
  readonly onEnd?: (() => StreamEvent.StreamEvent | undefined) | undefined
  /**
   * Receives every non-blank body line that is not an SSE comment or a `data`, `event`, `id` or
   * `retry` field, in body order relative to the dispatched events, without its line end. Only
   * decoders that read unframed text (Gemini's raw `{"error": …}` tail) implement it.
   */
  readonly onUnframedLine?: ((line: string) => StreamEvent.StreamEvent | undefined) | undefined
}

/**
 * Options of {@link decodeSse}.
 *
 * @since 0.1.0
 * @category models
 */
export interface DecodeOptions {
  /**
   * Largest SSE event, in UTF-16 code units: the total length of the lines from one blank line to
   * the next (comments and other fields included, line ends not). Default 16 MiB. A larger event,
   * or a single line that grows past it, is reported as `MalformedStreamEvent` where its first
   * offending line starts, however the body was split into reads.
   */
  readonly maxEventSize?: number | undefined
}

const defaultMaxEventSize = 16 * 1024 * 1024

/**
 * Runs a decoder over a body's bytes: UTF-8 decoding (streaming), SSE framing, then the decoder.
 * Emits one array of core events per read, so downstream work happens per read, not per event.
 *
 * The first event that carries a failure is the last one: it ends assembly (`test/fixtures/README.md`
 * §2), so nothing after it is decoded or held. The rest of the body is still pulled (and dropped)
 * when the consumer keeps pulling, so a failure of the byte stream itself still surfaces.
 *
 * An event marked `end` (the body's end event) does not stop the decoding: a finite body is read
 * to its end, so what follows the end event is still checked whatever the reads. Stopping a live
 * connection there is the transport's job (`HttpTransport`, `afterEndMs`).
 *
 * A body that holds no SSE line at all (see `ModelStreamError.NotAnEventStream`) fails the stream with
 * `NotAnEventStream` when it ends, instead of ending without events, or as soon as it has passed
 * `maxEventSize` bytes without one (it is not read further).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeSse = (makeDecoder: () => Decoder, options?: DecodeOptions) =>
<E, R>(
  bytes: Stream.Stream<Uint8Array, E, R>
): Stream.Stream<StreamEvent.StreamEvent, E | ModelStreamError.NotAnEventStream, R> =>
  EventStreamProbe.guard(
    bytes,
    decodeFramed(makeDecoder, options),
    options?.maxEventSize ?? defaultMaxEventSize,
    (verdict) => new ModelStreamError.NotAnEventStream({ ...verdict, contentType: null })
  )

const decodeFramed =
  (makeDecoder: () => Decoder, options?: DecodeOptions) =>
  <E, R>(bytes: Stream.Stream<Uint8Array, E, R>): Stream.Stream<StreamEvent.StreamEvent, E, R> =>
    Stream.fromChannel(
      Channel.fromTransform((upstream, scope) =>
        Effect.map(Channel.toTransform(Stream.toChannel(bytes))(upstream, scope), (pull) => {
          const decoder = makeDecoder()
          const maxEventSize = options?.maxEventSize ?? defaultMaxEventSize
          // The BOM is left in the text: the SSE parser (and the line splitter) drop exactly one
          // leading BOM, as the spec says. A decoder that dropped it too would drop a second one.
          const text = new TextDecoder("utf-8", { ignoreBOM: true })
          let out: Array<StreamEvent.StreamEvent> = []
          let halted = false
          /** An event with a failure was emitted: no later event is read. */
          let failed = false
          const emit = (event: StreamEvent.StreamEvent) => {
            if (failed) return
            out.push(event)
            if (event.failure !== undefined) {
              failed = true
              // Called from the parser's callback, this also drops the rest of the chunk.
              parser.reset()
            }
          }
          const tooLarge = () => {
            emit({
              failure: new AssemblyError.MalformedStreamEvent({
                finishReason: null,
                reason: `an SSE event is larger than ${maxEventSize} characters`,
                excerpt: ""
              })
            })
          }
          // The guard below keeps every event within `maxEventSize` before the parser sees it, so
          // the parser's own (read-dependent) limit can never be the one that fires; it stays as
          // a backstop.
          const parser = Sse.makeParser((event) => {
            if (event._tag !== "Event" || failed) return
            const decoded = decoder.onEvent(event)
            if (decoded !== undefined) emit(decoded)
          }, { maxEventSize })
          const feedParser = (chunk: string) => {
            if (failed) return
            if (parser.feed(chunk) !== undefined) tooLarge()
          }
          const lines = decoder.onUnframedLine === undefined
            ? undefined
            : makeLineSplitter(decoder.onUnframedLine, feedParser, emit, () => failed)
          const framing = lines === undefined ? feedParser : lines.feed
          const guard = makeSizeGuard(maxEventSize)
          const feed = (chunk: string) => {
            if (failed || chunk.length === 0) return
            const cut = guard(chunk)
            if (cut < 0) return framing(chunk)
            if (cut > 0) framing(chunk.slice(0, cut))
            tooLarge()
          }
          const flush = (): Pull.Pull<
            readonly [StreamEvent.StreamEvent, ...Array<StreamEvent.StreamEvent>],
            never,
            void
          > => {
            const batch = out
            out = []
            return Effect.succeed(
              batch as unknown as readonly [StreamEvent.StreamEvent, ...Array<StreamEvent.StreamEvent>]
            )
          }
          return Effect.suspend(
            function loop(): Pull.Pull<readonly [StreamEvent.StreamEvent, ...Array<StreamEvent.StreamEvent>], E, void> {
              if (out.length > 0) return flush()
              if (halted) return Cause.done()
              return Effect.matchCauseEffect(pull, {
                onFailure: (cause) => {
                  if (!Pull.isDoneCause(cause)) return Effect.failCause(cause as Cause.Cause<E>)
                  halted = true
                  feed(text.decode())
                  if (failed) return loop()
                  lines?.end()
                  const last = decoder.onEnd?.()
                  if (last !== undefined) emit(last)
                  return loop()
                },
                onSuccess: (chunks) => {
                  for (let i = 0; i < chunks.length; i++) {
                    if (failed) break
                    feed(text.decode(chunks[i], { stream: true }))
                  }
                  return loop()
                }
              })
            }
          )
        })
      )
    )

const LF = 10
const CR = 13
const COLON = 58
const BOM = 0xfeff

/**
 * The event-size limit of {@link decodeSse}, measured on the decoded text itself so that the
 * verdict does not depend on where the reads split it: it tracks the length of the current line
 * and the total length of the current event's lines (a blank line ends an event; CRLF, LF and CR
 * end lines, a CR at the end of one read and an LF at the start of the next being one line end).
 * It looks only at line ends (`indexOf`), not at every character.
 *
 * Returns -1 while the current event is within `max`, else the position in `chunk` where the line
 * that crosses the limit starts (0 when it started in an earlier read).
 */
const makeSizeGuard = (max: number) => {
  /** Length of the current, unterminated line so far. */
  let line = 0
  /** Total length of the current event's completed lines. */
  let event = 0
  let afterCr = false
  return (chunk: string): number => {
    let position = 0
    if (afterCr) {
      afterCr = false
      if (chunk.charCodeAt(0) === LF) position = 1
    }
    let lineStart = line > 0 ? 0 : position
    let lf = chunk.indexOf("\n", position)
    let cr = chunk.indexOf("\r", position)
    while (lf >= 0 || cr >= 0) {
      const end = lf < 0 ? cr : cr < 0 ? lf : lf < cr ? lf : cr
      const length = line + end - position
      line = 0
      if (length === 0) event = 0
      else {
        event += length
        if (event > max) return lineStart
      }
      position = end + 1
      if (end === cr) {
        if (position === chunk.length) afterCr = true
        else if (chunk.charCodeAt(position) === LF) position++
      }
      lineStart = position
      if (lf >= 0 && lf < position) lf = chunk.indexOf("\n", position)
      if (cr >= 0 && cr < position) cr = chunk.indexOf("\r", position)
    }
    line += chunk.length - position
    return event + line > max ? lineStart : -1
  }
}

/** Whether a non-blank line is one an SSE parser ignores as an unknown field. */
const isUnframed = (line: string): boolean => {
  if (line.charCodeAt(0) === COLON) return false
  const colon = line.indexOf(":")
  const field = colon < 0 ? line : line.slice(0, colon)
  return field !== "data" && field !== "event" && field !== "id" && field !== "retry"
}

/**
 * The line-splitting path of {@link decodeSse}: splits decoded text into lines, hands unframed
 * lines to the decoder and feeds every other line (with an LF end) to the SSE parser in order.
 * Consecutive framed lines go to the parser in one `feed`, so the parser still works on batches.
 * Like the parser, it drops one leading BOM.
 */
const makeLineSplitter = (
  onUnframedLine: (line: string) => StreamEvent.StreamEvent | undefined,
  feedParser: (chunk: string) => void,
  emit: (event: StreamEvent.StreamEvent) => void,
  failed: () => boolean
) => {
  /** The start of a line whose end has not arrived yet. */
  let partial = ""
  /** The previous read ended with a CR: an LF at the start of this one belongs to it. */
  let skipLf = false
  let first = true
  let framed = ""

  const flushFramed = () => {
    if (framed.length > 0) {
      const batch = framed
      framed = ""
      feedParser(batch)
    }
  }

  const onLine = (line: string) => {
    if (line.length > 0 && isUnframed(line)) {
      flushFramed()
      if (failed()) return
      const event = onUnframedLine(line)
      if (event !== undefined) emit(event)
    } else {
      framed += line + "\n"
    }
  }

  const feed = (chunk: string) => {
    const length = chunk.length
    if (length === 0) return
    let position = 0
    if (first) {
      first = false
      if (chunk.charCodeAt(0) === BOM) position = 1
    }
    if (skipLf) {
      skipLf = false
      if (chunk.charCodeAt(position) === LF) position++
    }
    while (position < length && !failed()) {
      let end = position
      while (end < length) {
        const code = chunk.charCodeAt(end)
        if (code === CR || code === LF) break
        end++
      }
      if (end === length) {
        partial += chunk.slice(position)
        break
      }
      let line = chunk.slice(position, end)
      if (partial.length > 0) {
        line = partial + line
        partial = ""
      }
      onLine(line)
      if (chunk.charCodeAt(end) === CR) {
        if (end + 1 === length) skipLf = true
        else if (chunk.charCodeAt(end + 1) === LF) end++
      }
      position = end + 1
    }
    flushFramed()
  }

  /** The body ended: its last line counts even without a line end (an unframed tail's `}`). */
  const end = () => {
    const line = partial
    partial = ""
    if (line.length > 0 && isUnframed(line) && !failed()) {
      const event = onUnframedLine(line)
      if (event !== undefined) emit(event)
    }
  }

  return { feed, end }
}
