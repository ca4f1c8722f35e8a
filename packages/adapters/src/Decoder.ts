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
 * @since 0.1.0
 */
import { AssemblyError, type StreamEvent } from "@toolgate/core"
import { Cause, Channel, Effect, Pull, Stream } from "effect"
import { Sse } from "effect/encoding"

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
}

/**
 * Options of {@link decodeSse}.
 *
 * @since 0.1.0
 * @category models
 */
export interface DecodeOptions {
  /**
   * Largest pending SSE event, in UTF-16 code units. Default 16 MiB. A larger event is reported
   * as `MalformedStreamEvent`.
   */
  readonly maxEventSize?: number | undefined
}

const defaultMaxEventSize = 16 * 1024 * 1024

/**
 * Runs a decoder over a body's bytes: UTF-8 decoding (streaming), SSE framing, then the decoder.
 * Emits one array of core events per read, so downstream work happens per read, not per event.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeSse = (makeDecoder: () => Decoder, options?: DecodeOptions) =>
<E, R>(bytes: Stream.Stream<Uint8Array, E, R>): Stream.Stream<StreamEvent.StreamEvent, E, R> =>
  Stream.fromChannel(
    Channel.fromTransform((upstream, scope) =>
      Effect.map(Channel.toTransform(Stream.toChannel(bytes))(upstream, scope), (pull) => {
        const decoder = makeDecoder()
        const text = new TextDecoder("utf-8")
        let out: Array<StreamEvent.StreamEvent> = []
        let halted = false
        const parser = Sse.makeParser((event) => {
          if (event._tag !== "Event") return
          const decoded = decoder.onEvent(event)
          if (decoded !== undefined) out.push(decoded)
        }, { maxEventSize: options?.maxEventSize ?? defaultMaxEventSize })
        const feed = (chunk: string) => {
          const error = parser.feed(chunk)
          if (error !== undefined) {
            out.push({
              failure: new AssemblyError.MalformedStreamEvent({
                finishReason: null,
                reason: error.message,
                excerpt: ""
              })
            })
          }
        }
        const flush = (): Pull.Pull<readonly [StreamEvent.StreamEvent, ...Array<StreamEvent.StreamEvent>], never, void> => {
          const batch = out
          out = []
          return Effect.succeed(batch as unknown as readonly [StreamEvent.StreamEvent, ...Array<StreamEvent.StreamEvent>])
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
                const last = decoder.onEnd?.()
                if (last !== undefined) out.push(last)
                return loop()
              },
              onSuccess: (chunks) => {
                for (let i = 0; i < chunks.length; i++) feed(text.decode(chunks[i], { stream: true }))
                return loop()
              }
            })
          }
        )
      })
    )
  )
