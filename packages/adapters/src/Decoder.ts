/**
 * The shape every provider adapter shares: a per-stream `Decoder` that turns one dispatched
 * server-sent event into at most one core `StreamEvent`, and `decodeSse`, which runs a decoder
 * over a response body's bytes.
 *
 * Framing is `eventsource-parser` (a spec-complete SSE parser: see `internal/sseReader.ts` for how
 * it is driven): the WHATWG "Interpreting an event stream" algorithm (CRLF/LF/CR line ends
 * including a CR and LF split across reads, `data:` with or without its one space, multi-line
 * `data`, comments, `event:`/`id:`/`retry:` fields, a leading BOM, no dispatch of an event the body
 * cut off before its blank line). It is plain mutable state fed whole chunks, with no Effect per
 * event; a `retry:` line, which providers never rely on and the fixture rules say to ignore, is
 * ignored. Bytes become text through one streaming `TextDecoder`, so a UTF-8 character split
 * across reads comes out whole. It replaced effect's `Sse.makeParser`, with which it agrees on
 * every body (a property test in `test/Decoder.test.ts` compares them on random edge-case bodies),
 * because it frames an event at a fraction of the cost: about what a bare `indexOf` line split
 * costs (`bench/gap.ts`; the figures are in `bench/RESULTS.md`).
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
import { EventReader, type ModelStreamError, type StreamEvent } from "@toolgate/core"
import type * as Stream from "effect/Stream"
import * as SseReader from "./internal/sseReader.js"

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
  EventReader.fromReads(
    bytes,
    () => SseReader.make(makeDecoder(), options?.maxEventSize ?? defaultMaxEventSize)
  )

/**
 * {@link decodeSse} over a web `ReadableStream` body (`source`: the body and how a rejected read
 * becomes the stream's failure, as `Stream.fromReadableStream` takes them): the same events and
 * the same failures. Given directly to `Assembler.assemble` or `Assembler.stream`, the body's
 * reader is driven without a `Stream` in between (`EventReader.fromReadableStream`), which is what
 * a small body's cost is mostly made of.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeReadableStream = (makeDecoder: () => Decoder, options?: DecodeOptions) =>
<E>(
  source: EventReader.Source<E>
): Stream.Stream<StreamEvent.StreamEvent, E | ModelStreamError.NotAnEventStream> =>
  EventReader.fromReadableStream(
    source,
    () => SseReader.make(makeDecoder(), options?.maxEventSize ?? defaultMaxEventSize)
  )
