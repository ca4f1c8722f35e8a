/**
 * The per-stream work of `Decoder.decodeSse`, with no Effect in it: bytes to text (one streaming
 * `TextDecoder`), the event-size guard, SSE framing (one `eventsource-parser` parser), the
 * provider decoder, and the `NotAnEventStream` probe. `decodeSse` hands it every read and takes
 * the core events of that read as one array, so Effect runs once per read, never per event.
 *
 * Framing is `eventsource-parser`'s `createParser`: the WHATWG "Interpreting an event stream"
 * algorithm (CRLF, LF and CR line ends, a CR and LF split across reads, `data:` with or without
 * its one space, multi-line `data`, comments, `event:`/`id:`/`retry:` fields, no dispatch of an
 * event the body cut off before its blank line). Two of its choices are set aside here, so that the
 * events are exactly the spec's:
 * - The leading BOM is dropped by the `TextDecoder` (the spec's UTF-8 decode drops one), and the
 *   parser is first fed a blank line, which dispatches nothing, so that it does not drop a second
 *   BOM, nor the three characters `ï»¿` (the parser also strips a BOM's bytes read as Latin-1).
 * - Its `maxBufferSize` is not used: its check is skipped for a one-line event that arrives whole in
 *   one read, so it depends on how the body was cut. The size guard below is the limit; it bounds
 *   what the parser buffers too (a partial line and the current event's data are parts of the
 *   current event's lines). Without `onError` the parser also makes no error object for an
 *   unknown field, which a body that is not an event stream is full of.
 *
 * A decoder that implements `onUnframedLine` gets the line-splitting path ({@link makeLineSplitter}).
 *
 * @internal
 */
import { AssemblyError, type EventReader, ModelStreamError, type StreamEvent } from "@toolgate/core"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import type * as Decoder from "../Decoder.js"
import * as EventStreamProbe from "./eventStreamProbe.js"

/**
 * The reading state of one body: core's `EventReader` over the body's bytes. `read` returns the
 * body's `NotAnEventStream` when it is decided before the end (past the limit without an SSE line):
 * those chunks are then not decoded; `end` flushes the text decoder, the unframed last line and
 * the decoder's `onEnd`, and returns `NotAnEventStream` for a body that is not an event stream and
 * produced no event.
 */
export type Reader = EventReader.EventReader<Uint8Array, ModelStreamError.NotAnEventStream>

const stream: TextDecodeOptions = { stream: true }

/**
 * Creates the reading state of one body for `decoder`. `maxEventSize`: the largest SSE event, in
 * UTF-16 code units (`Decoder.DecodeOptions`).
 */
export const make = (decoder: Decoder.Decoder, maxEventSize: number): Reader => {
  /** Core events of the current read. */
  let out: Array<StreamEvent.StreamEvent> = []
  /** An event was produced: the body is read as an event stream whatever the probe says. */
  let produced = false
  /** An event with a failure was produced: it is the last one (`test/fixtures/README.md` §2). */
  let failed = false

  const emit = (event: StreamEvent.StreamEvent) => {
    if (failed) return
    out.push(event)
    produced = true
    if (event.failure !== undefined) failed = true
  }

  const onMessage = (message: EventSourceMessage) => {
    if (failed) return
    // The parser leaves the default type out; `SseEvent.event` is `"message"` then, as in the
    // spec. The message is the parser's fresh object, so it is completed in place.
    if (message.event === undefined) message.event = "message"
    const decoded = decoder.onEvent(message as Decoder.SseEvent)
    if (decoded !== undefined) emit(decoded)
  }

  const text = new TextDecoder("utf-8")
  const parser = createParser({ onEvent: onMessage })
  parser.feed("\n")
  const probe = EventStreamProbe.make(maxEventSize)
  const guard = makeSizeGuard(maxEventSize)

  const feedParser = (chunk: string) => {
    if (!failed) parser.feed(chunk)
  }
  const lines = decoder.onUnframedLine === undefined
    ? undefined
    : makeLineSplitter(decoder.onUnframedLine, feedParser, emit, () => failed)
  const framing = lines === undefined ? feedParser : lines.feed

  const tooLarge = () => {
    emit({
      failure: new AssemblyError.MalformedStreamEvent({
        finishReason: null,
        reason: `an SSE event is larger than ${maxEventSize} characters`,
        excerpt: ""
      })
    })
  }

  const feed = (chunk: string) => {
    if (failed || chunk.length === 0) return
    const cut = guard(chunk)
    if (cut < 0) framing(chunk)
    else {
      if (cut > 0) framing(chunk.slice(0, cut))
      tooLarge()
    }
    // Nothing is read after a failure: drop what the parser holds of the rest.
    if (failed) parser.reset()
  }

  const read = (chunks: ReadonlyArray<Uint8Array>): ModelStreamError.NotAnEventStream | undefined => {
    if (!produced) {
      for (let i = 0; i < chunks.length; i++) probe.feed(chunks[i]!)
      if (probe.overLimit()) return notAnEventStream(probe.end())
    }
    for (let i = 0; i < chunks.length; i++) {
      if (failed) break
      feed(text.decode(chunks[i], stream))
    }
    return undefined
  }

  const end = (): ModelStreamError.NotAnEventStream | undefined => {
    feed(text.decode())
    if (!failed) {
      lines?.end()
      const last = decoder.onEnd?.()
      if (last !== undefined) emit(last)
    }
    return produced ? undefined : notAnEventStream(probe.end())
  }

  const take = () => {
    if (out.length === 0) return undefined
    const batch = out
    out = []
    return batch
  }

  return { read, end, take }
}

const notAnEventStream = (verdict: EventStreamProbe.Verdict | undefined) =>
  verdict === undefined ? undefined : new ModelStreamError.NotAnEventStream({ ...verdict, contentType: null })

const LF = 10
const CR = 13
const COLON = 58

/**
 * The event-size limit of `decodeSse`, measured on the decoded text itself so that the verdict
 * does not depend on where the reads split it: it tracks the length of the current line and the
 * total length of the current event's lines (a blank line ends an event; CRLF, LF and CR end
 * lines, a CR at the end of one read and an LF at the start of the next being one line end). It
 * looks only at line ends (`indexOf`), not at every character, and in a read that cannot take an
 * event past the limit only at the lines after its last blank line.
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
    /** The first CR at or after `position`; -2 while not looked for. */
    let cr = -2
    if (afterCr) {
      afterCr = false
      if (chunk.charCodeAt(0) === LF) position = 1
    } else if (event + line + chunk.length <= max) {
      // No event can pass the limit inside this chunk, so without a CR in it the state after it
      // depends only on the text after its last blank line: the lines before are not looked at.
      cr = chunk.indexOf("\r")
      if (cr < 0) {
        const blank = chunk.lastIndexOf("\n\n")
        if (blank >= 0) {
          position = blank + 2
          line = 0
          event = 0
        }
      }
    }
    let lineStart = line > 0 ? 0 : position
    let lf = chunk.indexOf("\n", position)
    if (cr === -2) cr = chunk.indexOf("\r", position)
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
 * The line-splitting path of `decodeSse`, for a decoder that reads unframed lines (Gemini's raw
 * `{"error": …}` tail, `test/fixtures/README.md` §1): splits decoded text into lines (CRLF, LF or
 * CR, including a CR that ends one read and an LF that starts the next), hands unframed lines to
 * the decoder and feeds every other line (with an LF end) to the SSE parser, in body order.
 * Consecutive framed lines go to the parser in one `feed`, so the parser still works on batches.
 * The last line of the body counts even without a line end. (The BOM is already gone: the text
 * decoder drops it.)
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
