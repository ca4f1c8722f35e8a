/**
 * The fixture corpus (`test/fixtures/<provider>/NAME.sse` + `NAME.expected.json`, read through
 * the `ExpectedResult` Schema) and the one function every adapter test compares with: a body, read
 * in given chunks, through `Provider.decode` and `Assembler.stream`, to the result shape of
 * `expected.json`; with the helpers the properties over the corpus share (chunking, framing, event
 * blocks).
 *
 * @since 0.1.0
 */
import { ExpectedResult, Provider } from "@toolgate/adapters"
import { Assembler, AssemblyError, ModelStreamError, type StreamEvent } from "@toolgate/core"
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Order from "effect/Order"
import * as Stream from "effect/Stream"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as Random from "./Random.js"

/**
 * The repository's fixture corpus, `test/fixtures/` (this package lives in the repository's
 * `packages/testing/`).
 *
 * @since 0.1.0
 * @category constants
 */
export const root: string = fileURLToPath(new URL("../../../test/fixtures/", import.meta.url))

/**
 * What `expected.json` holds, and what {@link run} produces.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome = ExpectedResult.Outcome

/**
 * One fixture case.
 *
 * @since 0.1.0
 * @category models
 */
export interface Fixture {
  readonly provider: Provider.Name
  readonly name: string
  readonly bytes: Uint8Array
  readonly expected: Outcome
}

/**
 * Every case of a provider folder, in file-name order. Throws when an `expected.json` does not
 * match its Schema.
 *
 * @since 0.1.0
 * @category loading
 */
export const load = (provider: Provider.Name, corpus: string = root): ReadonlyArray<Fixture> =>
  Arr.sort(readdirSync(`${corpus}/${provider}`).filter((file) => file.endsWith(".sse")), Order.String)
    .map((file) => {
      const name = file.slice(0, -".sse".length)
      const capture = `${corpus}/${provider}/${file}`
      return {
        provider,
        name,
        bytes: new Uint8Array(readFileSync(capture)),
        expected: ExpectedResult.outcomeOf(
          ExpectedResult.decodeSync(readFileSync(ExpectedResult.pathOf(capture), "utf8"))
        )
      }
    })

/**
 * Every case of every provider.
 *
 * @since 0.1.0
 * @category loading
 */
export const loadAll = (corpus: string = root): ReadonlyArray<Fixture> =>
  Provider.names.flatMap((provider) => load(provider, corpus))

/**
 * The result of one run: the comparable outcome plus what a property needs to inspect.
 *
 * @since 0.1.0
 * @category models
 */
export interface Run extends Outcome {
  /** The typed assembly error (or `NotAnEventStream`), when the outcome is an error. */
  readonly failure: AssemblyError.AssemblyError | ModelStreamError.NotAnEventStream | undefined
  /** Whether a `TurnCompleted` (the release of the tool calls) was emitted. */
  readonly released: boolean
}

/**
 * `count` read sizes in [1, 7], drawn from `seed` (`Random`): a reproducible tiny chunking, so a
 * failure names its seed.
 *
 * @since 0.1.0
 * @category chunking
 */
export const readSizes = (seed: number, count = 97): Array<number> => {
  const random = Random.make(seed)
  return Array.from({ length: count }, () => random.int(1, 7))
}

/**
 * Splits bytes at the given sizes (cycled); an empty `sizes` means one chunk.
 *
 * @since 0.1.0
 */
export const chunk = (bytes: Uint8Array, sizes: ReadonlyArray<number> = []): Array<Uint8Array> => {
  if (sizes.length === 0) return [bytes]
  const out: Array<Uint8Array> = []
  let at = 0
  let i = 0
  while (at < bytes.length) {
    const size = Math.max(1, sizes[i++ % sizes.length]!)
    out.push(bytes.subarray(at, at + size))
    at += size
  }
  return out
}

/**
 * Runs chunks through the decoder and the streaming assembler. Fails with a defect (never a
 * typed error) when anything but a typed assembly error (or `NotAnEventStream`, a body with no SSE
 * line) comes out: a thrown exception, a `Die`, any other error.
 *
 * @since 0.1.0
 */
export const runEvents = (
  events: Stream.Stream<StreamEvent.StreamEvent, ModelStreamError.NotAnEventStream>
): Effect.Effect<Run> =>
  Effect.suspend(() => {
    let text = ""
    let turn: Assembler.AssembledTurn | undefined
    return events.pipe(
      Assembler.stream(),
      Stream.runForEach((output) =>
        Effect.sync(() => {
          if (output._tag === "TextDelta") text += output.text
          else turn = output.turn
        })
      ),
      Effect.exit,
      Effect.flatMap((exit): Effect.Effect<Run> => {
        if (Exit.isSuccess(exit)) {
          const completed = turn!
          return Effect.succeed({
            outcome: "complete",
            finishReason: completed.finishReason,
            text,
            toolCalls: completed.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
            error: null,
            failure: undefined,
            released: true
          })
        }
        const error = Cause.findErrorOption(exit.cause)
        if (
          Cause.hasDies(exit.cause) || error._tag === "None" ||
          !(AssemblyError.isAssemblyError(error.value) || error.value instanceof ModelStreamError.NotAnEventStream)
        ) {
          return Effect.die(new Error(`not a typed assembly error: ${Cause.pretty(exit.cause)}`))
        }
        const failure = error.value
        return Effect.succeed({
          outcome: "error",
          finishReason: "finishReason" in failure ? failure.finishReason : null,
          text,
          toolCalls: [],
          error: failure._tag,
          failure,
          released: turn !== undefined
        })
      })
    )
  })

/**
 * {@link runEvents} over a body split into `chunks`, decoded as `provider`.
 *
 * @since 0.1.0
 */
export const run = (
  provider: Provider.Name | "auto",
  chunks: ReadonlyArray<Uint8Array>,
  options?: Provider.Options
): Effect.Effect<Run> => runEvents(Stream.fromIterable(chunks).pipe(Provider.decode(provider, options)))

/**
 * The comparable part of a run (what `expected.json` holds).
 *
 * @since 0.1.0
 */
export const outcome: (r: Outcome) => Outcome = ExpectedResult.outcomeOf

/**
 * UTF-8 bytes of a string.
 *
 * @since 0.1.0
 */
export const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)

/**
 * One SSE event to frame: `data` is sent as is when it is a string, else as JSON.
 *
 * @since 0.1.0
 */
export interface Frame {
  readonly event?: string | undefined
  readonly data: unknown
}

/**
 * Frames events as an SSE body (`event:` line when given, one `data:` line, a blank line).
 *
 * @since 0.1.0
 */
export const sse = (frames: ReadonlyArray<Frame>, eol = "\n"): string =>
  frames.map((f) =>
    `${f.event === undefined ? "" : `event: ${f.event}${eol}`}data: ${
      typeof f.data === "string" ? f.data : JSON.stringify(f.data)
    }${eol}${eol}`
  ).join("")

/**
 * Runs an SSE body given as text, in one chunk.
 *
 * @since 0.1.0
 */
export const runText = (
  provider: Provider.Name | "auto",
  text: string,
  options?: Provider.Options
): Effect.Effect<Run> => run(provider, [bytes(text)], options)

/**
 * The assembled turn of an SSE body given as text (fails with the assembly error).
 *
 * @since 0.1.0
 */
export const assembleText = (
  provider: Provider.Name | "auto",
  text: string
): Effect.Effect<Assembler.AssembledTurn, AssemblyError.AssemblyError | ModelStreamError.NotAnEventStream> =>
  Stream.make(bytes(text)).pipe(Provider.decode(provider), Assembler.assemble())

const completeAtMemo = new Map<Fixture, number>()

/**
 * The shortest prefix of a `complete` fixture that already reads as complete: the byte just
 * after the blank line that dispatches its finish event. Found by bisection, which the
 * truncation property then checks (every shorter prefix is `IncompleteStream`, every longer one
 * complete).
 *
 * @since 0.1.0
 */
export const completeAt = (fixture: Fixture): Effect.Effect<number> =>
  Effect.suspend(() => {
    const memo = completeAtMemo.get(fixture)
    if (memo !== undefined) return Effect.succeed(memo)
    return Effect.gen(function*() {
      let lo = 0
      let hi = fixture.bytes.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        const result = yield* run(fixture.provider, [fixture.bytes.subarray(0, mid)])
        if (result.outcome === "complete") hi = mid
        else lo = mid + 1
      }
      completeAtMemo.set(fixture, lo)
      return lo
    })
  })

/**
 * One SSE event block of a fixture body: its raw lines (without line ends).
 *
 * @since 0.1.0
 */
export type Block = ReadonlyArray<string>

/**
 * Splits a fixture body into its event blocks (separated by blank lines; CRLF, LF or CR line
 * ends). Unframed lines (Gemini's raw error tail) stay in their block.
 *
 * @since 0.1.0
 */
export const blocks = (fixture: Fixture): Array<Block> => {
  const text = new TextDecoder().decode(fixture.bytes)
  const out: Array<Array<string>> = []
  let current: Array<string> = []
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === "") {
      if (current.length > 0) out.push(current)
      current = []
    } else {
      current.push(line)
    }
  }
  if (current.length > 0) out.push(current)
  return out
}

/**
 * Joins event blocks back into a body.
 *
 * @since 0.1.0
 */
export const unblocks = (list: ReadonlyArray<Block>, eol = "\n"): Uint8Array =>
  bytes(list.map((block) => block.join(eol) + eol + eol).join(""))
