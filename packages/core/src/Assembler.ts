/**
 * The assembler: a fold over normalized `StreamEvent`s that buffers tool-call fragments per call,
 * forwards text at once, and releases the tool calls of a turn only when the stream ended with a
 * success finish and every call's arguments are exactly one JSON object. All or nothing: a
 * failed turn releases no tool call, and nothing is repaired.
 *
 * Identity rules (`test/fixtures/README.md` §3, written for OpenAI Chat, the most general form):
 * - With `index`: the index is the key (sparse, any start, any order). A fragment for an index
 *   with no call opens one. A different non-empty `id` on an index that has a call is a
 *   `ToolCallProtocolError`, unless that call's arguments already form exactly one complete JSON
 *   value: then it opens the next call under the same index (Ollama sends parallel calls whole,
 *   each with its own id, all at index 0).
 * - Without `index`: a known `id` continues its call; a new `id` opens a call after every call
 *   opened before it; no `id` continues the only call, opens the first one, or is ambiguous
 *   (`ToolCallProtocolError`) when several exist. An `id` that several calls share (indices may
 *   reuse one) is ambiguous the same way: it names no single call to continue.
 * - A fragment that opens a call must carry a name (else it is a delta for a call that was never
 *   started: `ToolCallProtocolError`). Repeats of the same id, name or type are no-ops; a
 *   different name or type is a `ToolCallProtocolError`.
 * - Calls are released in index order, calls sharing an index in arrival order; a call opened
 *   without an index takes the next index after the highest in use (none is left after
 *   `Number.MAX_SAFE_INTEGER`: `ToolCallProtocolError`).
 *
 * Verdict at the end of the stream (`test/fixtures/README.md` §2), the first that applies: the
 * stream-level failure; `IncompleteStream` without a finish signal; `TokenLimitExceeded` or
 * `UnexpectedFinishReason` for a non-success finish (a `success_no_calls` finish is a success
 * only for a turn without tool calls: see `FinishReason`); `MalformedToolArguments`; otherwise the
 * completed turn.
 *
 * Cost is linear in the stream's bytes: fragments are collected and joined in batches of 128 (each
 * character copied once more in all, and once more when the text is first read whole), no buffer is re-parsed on a delta, and the argument-size check
 * counts UTF-8 bytes only once a call is within a factor of three of its limit. The count is exact
 * whatever the split: a surrogate pair whose halves end one delta and start the next is one 4-byte
 * character. A stream's machine is one object with prototype methods, and the Effect forms run
 * once per upstream array of events, never per event.
 *
 * The module is longer than most because it is one concept: the fold, the classes it releases and
 * its two Effect forms (the arithmetic on argument text is in `internal/arguments.ts`, how a Stream
 * drives the machine in `internal/assemblerDrive.ts`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import {
  ArgumentsTooLarge,
  type AssemblyError,
  excerpt,
  IncompleteStream,
  MalformedStreamEvent,
  MalformedToolArguments,
  type StreamFailure,
  TokenLimitExceeded,
  ToolCallProtocolError,
  UnexpectedFinishReason,
  withFinishReason
} from "./AssemblyError.js"
import * as EventReader from "./EventReader.js"
import type { FinishClass } from "./FinishReason.js"
import * as Arguments from "./internal/arguments.js"
import * as Drive from "./internal/assemblerDrive.js"
import * as ReadableDrive from "./internal/readableDrive.js"
import { type StreamEvent, type ToolCallDelta, Usage } from "./StreamEvent.js"

/**
 * Assembly options.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * Largest accepted arguments text of one call, in UTF-8 bytes. Default 1 MiB (1,048,576).
   * Crossing it fails with `ArgumentsTooLarge` at once.
   */
  readonly maxArgumentsBytes?: number | undefined
  /**
   * Deepest accepted nesting of objects and arrays in one call's arguments. Default 64. Deeper
   * arguments are `MalformedToolArguments`: `JSON.parse` accepts thousands of levels, but
   * `JSON.stringify` (and so every key, fingerprint and log line built from the arguments)
   * overflows the stack at a few thousand.
   */
  readonly maxArgumentsDepth?: number | undefined
}

/**
 * Default of {@link Options.maxArgumentsBytes}: 1 MiB.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxArgumentsBytes = 1024 * 1024

/**
 * Default of {@link Options.maxArgumentsDepth}: 64 levels.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxArgumentsDepth = 64

/**
 * A released tool call.
 *
 * - `index`: its key in the stream (provider index, block index or output index).
 * - `id`: the provider's tool-call id, `null` when the provider sent none (Gemini).
 * - `argumentsText`: the raw accumulated arguments, as received.
 * - `arguments`: their parsed value, always a JSON object (empty text means `{}`).
 *
 * @since 0.1.0
 * @category models
 */
export class AssembledToolCall extends Schema.Class<AssembledToolCall>("@toolgate/core/AssembledToolCall")({
  index: Schema.Int,
  id: Schema.NullOr(Schema.String),
  name: Schema.String,
  argumentsText: Schema.String,
  arguments: Schema.Record(Schema.String, Schema.Unknown)
}) {}

/**
 * A completed turn: all text, every tool call in index order, the raw finish reason and the
 * usage the provider reported (if any).
 *
 * @since 0.1.0
 * @category models
 */
export class AssembledTurn extends Schema.Class<AssembledTurn>("@toolgate/core/AssembledTurn")({
  text: Schema.String,
  toolCalls: Schema.Array(AssembledToolCall),
  finishReason: Schema.NullOr(Schema.String),
  usage: Schema.optional(Usage)
}) {}

/**
 * A piece of assistant text, forwarded the moment its event arrives.
 *
 * @since 0.1.0
 * @category models
 */
export interface TextDelta {
  readonly _tag: "TextDelta"
  readonly text: string
}

/**
 * The last output of the streaming form: the completed turn.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnCompleted {
  readonly _tag: "TurnCompleted"
  readonly turn: AssembledTurn
}

/**
 * What the streaming form emits: text deltas as they arrive, then one `TurnCompleted`.
 *
 * @since 0.1.0
 * @category models
 */
export type Output = TextDelta | TurnCompleted

/**
 * The assembler's state machine, for callers that drive it by hand (the CLI, benchmarks, custom
 * channels). Not safe to share between streams.
 *
 * @since 0.1.0
 * @category models
 */
export interface Machine {
  /** Applies one event. Ignored once the machine has failed. */
  push(event: StreamEvent): void
  /** The stream-level failure, with the finish reason read so far; `undefined` while none. */
  readonly failure: AssemblyError | undefined
  /** All text read so far. */
  readonly text: string
  /** The first finish reason read, `null` while none. */
  readonly finishReason: string | null
  /** The verdict for a body that ends here. */
  end(): Result.Result<AssembledTurn, AssemblyError>
}

interface Call {
  readonly index: number
  id: string | undefined
  readonly name: string
  type: string | undefined
  /**
   * The arguments text received so far is `args` followed by the pieces in `tail`. Deltas are
   * pushed onto `tail` and joined into `args` in batches of `joinBatch` pieces, so a call holds
   * one string (a rope node) per 128 deltas rather than one per 3–12-character delta, and at most
   * 127 separate pieces. When the next call opens, the previous one is made one flat string
   * (`settle`): a stream in flight holds its finished calls as their characters only. Read it
   * through `argumentsText`.
   */
  args: string
  tail: Array<string>
  /** UTF-16 length of the arguments text. */
  chars: number
  /** UTF-8 length of the arguments text, counted only once `chars * 3` exceeds the limit; -1 before. */
  bytes: number
  /**
   * The text counted so far ends with a high surrogate: if the next delta starts with a low one,
   * the two halves were one 4-byte character, not two 3-byte lone surrogates.
   */
  highEnd: boolean
}

/**
 * effect's constructor of a `Schema.Class` instance from fields already valid for it, without the
 * schema pass (`makeClassTrusted` in effect's `Schema.ts`, which its own decoding uses; effect marks
 * it internal, so its declaration is not published and it is looked up here). The public
 * constructor parses every field again even with `disableChecks` (and copies the arguments record):
 * about 2 µs per instance on Node 22, a few per cent of a small stream. The machine builds the
 * fields itself (an integer index, strings, the parsed arguments object), so they are valid by
 * construction; `test/Assembler.test.ts` checks the instances against the public constructor's and
 * that the pinned effect has it. Without it (another effect version), the
 * public constructor.
 */
const makeClassTrusted = (Schema as unknown as {
  readonly makeClassTrusted?: <Self>(self: new(input: never) => Self, fields: object) => Self
}).makeClassTrusted

const construct = <Self, Fields extends object>(
  self: new(fields: Fields, options?: Schema.MakeOptions) => Self,
  fields: Fields
): Self => makeClassTrusted !== undefined ? makeClassTrusted(self, fields) : new self(fields, { disableChecks: true })

/**
 * Creates a fresh {@link Machine}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options?: Options): Machine => new AssemblyMachine(options)

/**
 * The {@link Machine}: plain mutable state and prototype methods, so a stream's machine is one
 * object (no closures or accessors made per stream).
 */
class AssemblyMachine implements Machine {
  private readonly maxBytes: number
  private readonly maxDepth: number
  private readonly calls: Array<Call> = []
  private readonly byIndex = new Map<number, Call>()
  /**
   * The call the last indexed delta went to (what `byIndex` holds for its index): providers send a
   * call's deltas one after another, so most deltas find their call here without a map lookup.
   */
  private current: Call | undefined = undefined
  /** Calls by provider id; `null` when several calls share the id (ambiguous without an index). */
  private readonly byId = new Map<string, Call | null>()
  private maxIndex = -1
  private textSoFar = ""
  private usage: Usage | undefined = undefined
  private reason: string | null = null
  private finishClass: FinishClass | undefined = undefined
  private finished = false
  /** A finish reason or signal was read: from here on, tool data is a protocol error. */
  private sealed = false
  private problem: StreamFailure | ArgumentsTooLarge | undefined = undefined

  constructor(options: Options | undefined) {
    this.maxBytes = options?.maxArgumentsBytes ?? defaultMaxArgumentsBytes
    this.maxDepth = options?.maxArgumentsDepth ?? defaultMaxArgumentsDepth
  }

  get failure(): AssemblyError | undefined {
    return this.problem === undefined ? undefined : withFinishReason(this.problem, this.reason)
  }

  get text(): string {
    return this.textSoFar
  }

  get finishReason(): string | null {
    return this.reason
  }

  push(event: StreamEvent): void {
    if (this.problem !== undefined) return
    if (event.text) this.textSoFar += event.text
    const deltas = event.toolCalls
    let failure: StreamFailure | ArgumentsTooLarge | undefined
    if (deltas !== undefined && deltas.length > 0) {
      if (this.sealed) {
        failure = this.afterFinish(deltas[0]!)
      } else {
        for (let i = 0; i < deltas.length; i++) {
          failure = this.applyDelta(deltas[i]!)
          if (failure !== undefined) break
        }
      }
    }
    if (failure === undefined && event.failure !== undefined) failure = event.failure
    const finish = event.finish
    if (finish !== undefined) {
      if (finish.reason !== null && this.reason === null && finish.reason !== "") {
        this.reason = finish.reason
        this.finishClass = finish.class
        this.sealed = true
      }
      if (finish.terminal) {
        this.finished = true
        this.sealed = true
        if (this.finishClass === undefined) this.finishClass = finish.class
      }
    }
    if (event.usage !== undefined) {
      this.usage = this.usage === undefined ? event.usage : { ...this.usage, ...event.usage }
    }
    if (failure !== undefined) {
      this.problem = failure
      // Nothing is released after a failure: drop the buffered calls so a kept machine holds no arguments.
      this.calls.length = 0
      this.byIndex.clear()
      this.current = undefined
      this.byId.clear()
    }
  }

  end(): Result.Result<AssembledTurn, AssemblyError> {
    const finishReason = this.reason
    const calls = this.calls
    if (this.problem !== undefined) return Result.fail(withFinishReason(this.problem, finishReason))
    if (!this.finished) return Result.fail(new IncompleteStream({ finishReason, pendingToolCalls: calls.length }))
    const finishClass = this.finishClass
    if (finishClass !== "success" && (finishClass !== "success_no_calls" || calls.length > 0)) {
      return Result.fail(
        finishClass === "token_limit"
          ? new TokenLimitExceeded({ finishReason, pendingToolCalls: calls.length })
          : new UnexpectedFinishReason({
            finishReason,
            finishClass: finishClass === "success_no_calls" ? "success_no_calls" : "unexpected",
            pendingToolCalls: calls.length
          })
      )
    }
    const ordered = calls.length > 1 ? calls.toSorted((a, b) => a.index - b.index) : calls
    const toolCalls: Array<AssembledToolCall> = []
    for (const call of ordered) {
      const args = argumentsText(call)
      const parsed = Arguments.parse(args, this.maxDepth)
      if (typeof parsed === "string") {
        return Result.fail(
          new MalformedToolArguments({
            finishReason,
            index: call.index,
            id: bounded(call.id),
            toolName: excerpt(call.name),
            reason: parsed,
            excerpt: excerpt(args)
          })
        )
      }
      toolCalls.push(
        construct(AssembledToolCall, {
          index: call.index,
          id: call.id ?? null,
          name: call.name,
          argumentsText: args,
          arguments: parsed
        })
      )
    }
    return Result.succeed(
      construct(AssembledTurn, { text: this.textSoFar, toolCalls, finishReason, usage: this.usage })
    )
  }

  private tooLarge(call: Call): ArgumentsTooLarge {
    return new ArgumentsTooLarge({
      finishReason: null,
      index: call.index,
      id: bounded(call.id),
      toolName: excerpt(call.name),
      maxBytes: this.maxBytes
    })
  }

  private append(call: Call, delta: string): ArgumentsTooLarge | undefined {
    if (delta.length === 0) return undefined
    const tail = call.tail
    tail.push(delta)
    if (tail.length >= joinBatch) {
      call.args += tail.join("")
      call.tail = []
    }
    call.chars += delta.length
    if (call.chars * 3 > this.maxBytes) {
      if (call.bytes < 0) call.bytes = Arguments.utf8Length(argumentsText(call))
      else {
        call.bytes += Arguments.utf8Length(delta)
        // A surrogate pair split across deltas: its halves were counted 3 + 3, the character is 4.
        if (call.highEnd && Arguments.isLowSurrogate(delta.charCodeAt(0))) call.bytes -= 2
      }
      call.highEnd = Arguments.isHighSurrogate(delta.charCodeAt(delta.length - 1))
      if (call.bytes > this.maxBytes) return this.tooLarge(call)
    }
    return undefined
  }

  private applyArguments(call: Call, delta: ToolCallDelta): StreamFailure | ArgumentsTooLarge | undefined {
    if (delta.argumentsBytes !== undefined && delta.argumentsBytes > this.maxBytes) return this.tooLarge(call)
    if (delta.argumentsDelta) {
      const crossed = this.append(call, delta.argumentsDelta)
      if (crossed) return crossed
    }
    if (delta.arguments !== undefined) {
      if (call.chars === 0) return this.append(call, delta.arguments)
      if (argumentsText(call) !== delta.arguments) {
        return protocol(call.index, call.id, call.name, "the final arguments differ from the accumulated deltas")
      }
    }
    return undefined
  }

  private indexId(id: string, call: Call): void {
    const known = this.byId.get(id)
    this.byId.set(id, known === undefined || known === call ? call : null)
  }

  private open(index: number, delta: ToolCallDelta, id: string | undefined, name: string | undefined) {
    if (name === undefined) {
      return protocol(index, id, undefined, `a delta for tool call ${index}, which was never started (no name)`)
    }
    const call: Call = {
      index,
      id,
      name,
      type: delta.type || undefined,
      args: "",
      tail: [],
      chars: 0,
      bytes: -1,
      highEnd: false
    }
    const calls = this.calls
    if (calls.length > 0) settle(calls[calls.length - 1]!)
    calls.push(call)
    this.byIndex.set(index, call)
    this.current = call
    if (id !== undefined) this.indexId(id, call)
    if (index > this.maxIndex) this.maxIndex = index
    return this.applyArguments(call, delta)
  }

  /** Opens a call that came without an index: it takes the next index after the highest in use. */
  private openNext(delta: ToolCallDelta, id: string | undefined, name: string | undefined) {
    return this.maxIndex < Number.MAX_SAFE_INTEGER
      ? this.open(this.maxIndex + 1, delta, id, name)
      : protocol(undefined, id, name, `a call without an index has no index left after ${this.maxIndex}`)
  }

  private apply(call: Call, delta: ToolCallDelta, id: string | undefined, name: string | undefined) {
    if (name !== undefined && name !== call.name) {
      return protocol(call.index, call.id, call.name, `the call's name changed from ${call.name} to ${name}`)
    }
    if (delta.type) {
      if (call.type === undefined) call.type = delta.type
      else if (call.type !== delta.type) {
        return protocol(call.index, call.id, call.name, `the call's type changed from ${call.type} to ${delta.type}`)
      }
    }
    if (id !== undefined && call.id === undefined) {
      call.id = id
      this.indexId(id, call)
    }
    return this.applyArguments(call, delta)
  }

  private applyDelta(delta: ToolCallDelta): StreamFailure | ArgumentsTooLarge | undefined {
    const id = delta.id || undefined
    const name = delta.name || undefined
    const index = delta.index
    const calls = this.calls
    if (index !== undefined && index !== null) {
      if (!isKey(index)) return badIndex(index)
      const current = this.current
      const call = current !== undefined && current.index === index ? current : this.byIndex.get(index)
      if (call === undefined) return this.open(index, delta, id, name)
      this.current = call
      if (id !== undefined && call.id !== undefined && id !== call.id) {
        if (Arguments.isOneJsonValue(argumentsText(call))) return this.open(index, delta, id, name)
        return protocol(
          index,
          id,
          call.name,
          `index ${index} got a second id ${id} while call ${call.id} was incomplete`
        )
      }
      return this.apply(call, delta, id, name)
    }
    if (id !== undefined) {
      const call = this.byId.get(id)
      if (call === null) {
        return protocol(undefined, id, name, `a delta without index names id ${id}, which several calls share`)
      }
      return call === undefined ? this.openNext(delta, id, name) : this.apply(call, delta, id, name)
    }
    if (calls.length === 0) return this.openNext(delta, id, name)
    if (calls.length === 1) return this.apply(calls[0]!, delta, id, name)
    return protocol(
      undefined,
      undefined,
      name,
      `a delta without index or id is ambiguous with ${calls.length} calls open`
    )
  }

  /** The failure for tool data after the finish, naming the call it was meant for when there is one. */
  private afterFinish(delta: ToolCallDelta): StreamFailure {
    const index = delta.index
    if (index !== undefined && index !== null && !isKey(index)) return badIndex(index)
    const id = delta.id || undefined
    const call = index !== undefined && index !== null
      ? this.byIndex.get(index)
      : id !== undefined
      ? this.byId.get(id) ?? undefined
      : this.calls.length === 1
      ? this.calls[0]
      : undefined
    return call === undefined
      ? protocol(index ?? undefined, id, delta.name || undefined, "tool data arrived after the finish")
      : protocol(call.index, call.id ?? id, call.name, "tool data arrived after the finish")
  }
}

/**
 * Folds a stream of events into its completed turn. Stops reading at the first stream-level
 * failure.
 *
 * Given a stream made by `EventReader.fromReads` (every adapter's `decode()`) directly, it decodes
 * and folds in one stage, one pull of the body per read (see `EventReader`); the result is the
 * same. Given a stream made by `EventReader.fromReadableStream` directly, it drives the body's
 * reader itself, with no `Stream` at all.
 *
 * @since 0.1.0
 * @category assembling
 */
export const assemble =
  (options?: Options) =>
  <E, R>(self: Stream.Stream<StreamEvent, E, R>): Effect.Effect<AssembledTurn, AssemblyError | E, R> => {
    const machine = () => make(options)
    const readable = EventReader.readableOf(self)
    if (readable !== undefined) return ReadableDrive.assemble(readable, machine)
    const reads = EventReader.readsOf(self)
    return reads === undefined ? Drive.assembleEvents(self, machine) : Drive.assembleReads(reads, machine)
  }

/**
 * The streaming form: forwards every text delta downstream the moment its event arrives, and
 * ends with one `TurnCompleted`, or fails with the assembly error. Tool calls stay gated until
 * the upstream has ended.
 *
 * Given a stream made by `EventReader.fromReads` directly, it decodes and assembles in one stage,
 * as {@link assemble} does; the outputs are the same. Given one made by
 * `EventReader.fromReadableStream`, it drives the body's reader itself: each pull reads until a read
 * produced an output, so a text delta is handed over before the next read.
 *
 * @since 0.1.0
 * @category assembling
 */
export const stream = (options?: Options) =>
<E, R>(
  self: Stream.Stream<StreamEvent, E, R>
): Stream.Stream<Output, AssemblyError | E, R> => {
  const readable = EventReader.readableOf(self)
  if (readable !== undefined) return ReadableDrive.stream(readable, () => make(options))
  const reads = EventReader.readsOf(self)
  return reads === undefined
    ? Stream.transformPull(self, (pull) => Effect.sync(() => Drive.pullOutputs(pull, make(options))))
    : Stream.transformPull(
      reads.upstream,
      (pull) => Effect.sync(() => Drive.pullOutputs(pull, make(options), reads.open()))
    )
}

/**
 * A `ToolCallProtocolError`. Ids, names and the reason (which quotes them) come from the payload,
 * so each is cut to a bounded excerpt: an error never carries a whole payload.
 */
const protocol = (index: number | undefined, id: string | undefined, name: string | undefined, reason: string) =>
  new ToolCallProtocolError({
    finishReason: null,
    index: index ?? null,
    id: bounded(id),
    toolName: bounded(name),
    reason: excerpt(reason)
  })

const bounded = (s: string | undefined): string | null => s === undefined ? null : excerpt(s)

/** Whether a tool-call index is usable as a key: an integer >= 0 that is exact as a `number`. */
const isKey = (index: number): boolean => Number.isSafeInteger(index) && index >= 0

const badIndex = (index: unknown) =>
  new MalformedStreamEvent({
    finishReason: null,
    reason: "a tool-call index must be an integer >= 0",
    excerpt: typeof index === "number" ? String(index) : `(a ${typeof index})`
  })

/**
 * How many argument pieces a call collects before they are joined into one string (see `Call.args`).
 * A piece is a string object of its own (12-byte header, then 1 or 2 bytes per UTF-16 unit), so the
 * pieces of a 3–12-character delta take 2–3 times the memory of their characters: a fixed small
 * batch bounds that to ~4 KiB per call in flight, where a batch of a quarter of the call held up to
 * ~64 KiB on a 64 KiB call.
 */
const joinBatch = 128

/**
 * Makes a call's arguments text so far one flat string: its pieces and the rope of its joined
 * batches (one 20-byte node per batch) become a single string. Done to the last call when the next
 * one opens (providers send calls one after another), so the finished calls of a stream in flight
 * hold only their characters. The copy is the one reading the text whole would make anyway: each
 * call is settled at most once per call opened after it.
 */
const settle = (call: Call): void => {
  const tail = call.tail
  tail.unshift(call.args)
  call.args = tail.join("")
  call.tail = []
}

/** A call's arguments text so far (joins its pending pieces). */
const argumentsText = (call: Call): string => {
  if (call.tail.length > 0) {
    call.args += call.tail.join("")
    call.tail = []
  }
  return call.args
}
