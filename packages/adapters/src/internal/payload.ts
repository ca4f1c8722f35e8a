/**
 * Payload helpers shared by the provider decoders: JSON parsing of one SSE data payload and the
 * constructors of the stream failures adapters report (always with `finishReason: null`; the
 * assembler fills in the finish reason it read).
 *
 * @internal
 */
import { AssemblyError, type StreamEvent } from "@toolgate/core"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/** A parsed JSON object. */
export type Json = { [x: string]: unknown }

/** The payload parsed as a JSON object, or the `MalformedStreamEvent` saying why it is not one. */
export const parseObject = (data: string): Json | AssemblyError.MalformedStreamEvent => {
  let value: unknown
  try {
    value = JSON.parse(data)
  } catch {
    return malformed("the data is not JSON", data)
  }
  return Predicate.isObject(value) ? value as Json : malformed("the data is not a JSON object", data)
}

/** Whether a parse result is the failure rather than the object. */
export const isFailure = (u: Json | AssemblyError.MalformedStreamEvent): u is AssemblyError.MalformedStreamEvent =>
  u instanceof AssemblyError.MalformedStreamEvent

/**
 * A `MalformedStreamEvent` with a bounded excerpt of the payload. Reasons may quote payload
 * values (a `jsonPath`, a type), so they are bounded too.
 */
export const malformed = (reason: string, data: string): AssemblyError.MalformedStreamEvent =>
  new AssemblyError.MalformedStreamEvent({
    finishReason: null,
    reason: AssemblyError.excerpt(reason),
    excerpt: detached(AssemblyError.excerpt(data))
  })

/**
 * A copy of a string that holds no reference to a larger one. The SSE parser hands over each
 * event's data as a slice of the text of the whole read, and V8 keeps a slice's whole parent alive:
 * an excerpt kept in an error must not keep the read with it. `JSON.parse` of the string's JSON
 * text gives back exactly the same characters (lone surrogates included) in a string of its own.
 */
const detached = (s: string): string => JSON.parse(JSON.stringify(s)) as string

/**
 * A `ToolCallProtocolError` found by an adapter's structural checks. The id, the name and the
 * reason (which may quote payload ids) are bounded excerpts: an error never carries a whole
 * payload.
 */
export const protocol = (
  reason: string,
  where?: { readonly index?: number | undefined; readonly id?: string | undefined; readonly name?: string | undefined }
): AssemblyError.ToolCallProtocolError =>
  new AssemblyError.ToolCallProtocolError({
    finishReason: null,
    index: where?.index ?? null,
    id: where?.id === undefined ? null : AssemblyError.excerpt(where.id),
    toolName: where?.name === undefined ? null : AssemblyError.excerpt(where.name),
    reason: AssemblyError.excerpt(reason)
  })

/**
 * A `ProviderStreamError` from a provider's error object. The code is the first string or number
 * among `codeKeys` (providers name it `type`, `code` or `status`); the message is `message`, or
 * the whole value as JSON when there is none.
 */
export const providerError = (error: unknown, codeKeys: ReadonlyArray<string>): AssemblyError.ProviderStreamError => {
  let code: string | null = null
  let message: string
  if (Predicate.isObject(error)) {
    for (const key of codeKeys) {
      const value = error[key]
      if (typeof value === "string" || typeof value === "number") {
        code = AssemblyError.excerpt(String(value))
        break
      }
    }
    message = typeof error.message === "string" ? error.message : safeStringify(error)
  } else {
    message = typeof error === "string" ? error : safeStringify(error)
  }
  return new AssemblyError.ProviderStreamError({
    finishReason: null,
    code,
    providerMessage: AssemblyError.excerpt(message)
  })
}

/**
 * `JSON.stringify` that never throws (cycles, BigInt, nesting too deep to write) and never returns
 * `undefined`. The fallback is not `String(u)`: a parsed payload such as `{"toString": 1}` makes
 * `String` throw ("Cannot convert object to primitive value").
 */
export const safeStringify = (u: unknown): string => {
  try {
    const json = JSON.stringify(u)
    if (json !== undefined) return json
  } catch {
    // fall through to a description that cannot throw
  }
  return (typeof u === "object" && u !== null) || typeof u === "function"
    ? Object.prototype.toString.call(u)
    : String(u)
}

/** Whether a value is an integer ≥ 0 that is safe to use as a key. */
export const isIndex = (u: unknown): u is number => Number.isSafeInteger(u) && (u as number) >= 0

/** `""`, `null` and absent are absent (`undefined`); any other non-string is mistyped (`null`). */
export const optionalString = (u: unknown): string | undefined | null =>
  u === undefined || u === null || u === "" ? undefined : typeof u === "string" ? u : null

/** A JSON number field as a token count, or `undefined` when absent or not a number. */
export const count = (u: unknown): number | undefined => typeof u === "number" ? u : undefined

/**
 * A core `Usage` holding only the counts that are numbers (the assembler merges usage reports
 * field by field, so an absent count must not overwrite an earlier one); `undefined` when there
 * is none.
 */
export const usage = (fields: {
  readonly inputTokens?: unknown
  readonly outputTokens?: unknown
  readonly totalTokens?: unknown
  readonly cachedInputTokens?: unknown
}): StreamEvent.Usage | undefined => {
  const out: { inputTokens?: number; outputTokens?: number; totalTokens?: number; cachedInputTokens?: number } = {}
  if (typeof fields.inputTokens === "number") out.inputTokens = fields.inputTokens
  if (typeof fields.outputTokens === "number") out.outputTokens = fields.outputTokens
  if (typeof fields.totalTokens === "number") out.totalTokens = fields.totalTokens
  if (typeof fields.cachedInputTokens === "number") out.cachedInputTokens = fields.cachedInputTokens
  return Object.keys(out).length > 0 ? out : undefined
}

/**
 * One core event while a decoder reads a provider event, and then the event itself: every decoder
 * builds its events as instances of this one class, so the events that reach the assembler all
 * have one shape (its field reads stay monomorphic) and each is one object. `fail` keeps the first
 * failure only: the first problem in the provider's reading order is the one reported
 * (`test/fixtures/README.md` §2).
 */
export class EventParts implements StreamEvent.StreamEvent {
  text: string | undefined = undefined
  toolCalls: Array<StreamEvent.ToolCallDelta> | undefined = undefined
  failure: AssemblyError.StreamFailure | undefined = undefined
  finish: StreamEvent.Finish | undefined = undefined
  usage: StreamEvent.Usage | undefined = undefined
  /** The event ends the provider's stream (`StreamEvent.end`). */
  end: true | undefined = undefined

  fail(failure: AssemblyError.StreamFailure): void {
    if (this.failure === undefined) this.failure = failure
  }

  addText(text: string): void {
    if (text !== "") this.text = this.text === undefined ? text : this.text + text
  }

  /** Adds a tool-call delta unless a failure was already found in this event. */
  addToolCall(delta: StreamEvent.ToolCallDelta): void {
    if (this.failure !== undefined) return
    if (this.toolCalls === undefined) this.toolCalls = [delta]
    else this.toolCalls.push(delta)
  }

  /** The core event (this object), or `undefined` when nothing was found. */
  toEvent(): StreamEvent.StreamEvent | undefined {
    return this.text === undefined && this.toolCalls === undefined && this.failure === undefined &&
        this.finish === undefined && this.usage === undefined && this.end === undefined
      ? undefined
      : this
  }
}

/**
 * A string Schema for the "any other type" member of an event-union Schema: every string but the
 * types the union describes precisely, so a known type with a wrong shape is rejected.
 */
export const otherThan = (known: ReadonlyArray<string>): Schema.Codec<string> => {
  const set = new Set(known)
  return Schema.String.check(
    Schema.makeFilter((s: string) => !set.has(s), { description: `a type other than ${known.join(", ")}` })
  )
}

/**
 * A parsed JSON value written back as JSON text, or `undefined` when it cannot be: `JSON.parse`
 * accepts nesting far deeper than `JSON.stringify` can write (a few thousand levels exhaust the
 * stack), so a hostile payload must end as a typed error, not a thrown `RangeError`.
 */
export const writeJson = (value: unknown): string | undefined => {
  try {
    return JSON.stringify(value)
  } catch {
    return undefined
  }
}
