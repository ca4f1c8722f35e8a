/**
 * Seeded generator of provider streams for the benchmarks: OpenAI Chat Completions and Anthropic
 * Messages bodies, exactly as the providers frame them, with the ground truth a correct consumer
 * must produce (the text, every tool call's id, name and parsed arguments).
 *
 * Shape of every stream: ~40 text deltas first, then the tool calls one after another (the order
 * both providers use), then the finish. Text and argument deltas are 3–12 UTF-16 code units
 * (never splitting a surrogate pair), the arguments carry multi-byte UTF-8 (2-, 3- and 4-byte
 * characters) in their string values, and the body is cut into network reads of 1–4 KiB at
 * arbitrary byte positions, so multi-byte characters and events straddle reads.
 *
 * Pure and deterministic: the same provider, size and seed always give the same bytes.
 *
 * `writeCapture` generates one body of any size in the same shape (as many calls as it takes),
 * handed out in pieces, so that a capture of hundreds of megabytes never exists in memory whole.
 */
import { Random, SseScript } from "@toolgate/testing"

/** The wire formats the benchmarks generate. */
export type Provider = "openai-chat" | "anthropic"

/** The input sizes of the benchmarks. */
export type Size = "small" | "medium" | "large"

/** How many tool calls a size has and how large each call's arguments are (UTF-8 bytes). */
export interface SizeSpec {
  readonly calls: number
  readonly argumentBytes: number
}

/** small: 1 call of ~200 B; medium: 4 calls of ~4 KiB; large: 8 calls of ~64 KiB. */
export const sizes: Readonly<Record<Size, SizeSpec>> = {
  small: { calls: 1, argumentBytes: 200 },
  medium: { calls: 4, argumentBytes: 4 * 1024 },
  large: { calls: 8, argumentBytes: 64 * 1024 }
}

export const providers: ReadonlyArray<Provider> = ["openai-chat", "anthropic"]
export const sizeNames: ReadonlyArray<Size> = ["small", "medium", "large"]

/** One tool call as a correct consumer must release it. */
export interface ExpectedCall {
  readonly id: string
  readonly name: string
  readonly arguments: Record<string, unknown>
}

/** What a correct consumer must produce from a generated stream. */
export interface Expected {
  readonly text: string
  readonly toolCalls: ReadonlyArray<ExpectedCall>
  /** The provider's raw finish reason (`tool_calls` / `tool_use`). */
  readonly finishReason: string
}

/** A generated body, its network reads and its ground truth. */
export interface GeneratedStream {
  readonly provider: Provider
  readonly size: Size
  readonly seed: number
  /** The whole body. */
  readonly bytes: Uint8Array
  /** The body cut into network reads of 1–4 KiB (independent buffers). */
  readonly reads: ReadonlyArray<Uint8Array>
  /** Dispatched SSE events in the body (including `[DONE]` and pings). */
  readonly events: number
  /** UTF-8 bytes of all tool-call arguments. */
  readonly argumentBytes: number
  readonly expected: Expected
}

const ALNUM = Random.alphanumeric

/** Words with 1-, 2-, 3- and 4-byte UTF-8 characters (the emoji are surrogate pairs in UTF-16). */
const words = [
  "order",
  "invoice",
  "customer",
  "delivery",
  "refund",
  "the",
  "to",
  "and",
  "please",
  "update",
  "café",
  "naïve",
  "Zoë",
  "Ångström",
  "façade",
  "Müller",
  "señor",
  "Привет",
  "Ελλάδα",
  "日本語",
  "東京",
  "北京",
  "서울",
  "€",
  "—",
  "«ok»",
  "✓",
  "😀",
  "🚀",
  "👍🏽",
  "𝄞"
]

const toolNames = ["create_order", "update_crm_contact", "send_invoice", "schedule_meeting", "issue_refund"]

const sentence = (random: Random.Random, n: number): string => {
  const out: Array<string> = []
  for (let i = 0; i < n; i++) out.push(random.pick(words))
  return out.join(" ")
}

const item = (random: Random.Random) => ({
  sku: `SKU-${random.chars(ALNUM, 8)}`,
  title: sentence(random, random.int(2, 6)),
  quantity: random.int(1, 20),
  unit_price: Math.round(random.next() * 100000) / 100,
  gift: random.next() < 0.2,
  tags: [random.pick(words), random.pick(words)],
  note: random.next() < 0.5 ? null : sentence(random, random.int(3, 12))
})

const utf8 = new TextEncoder()
const byteLength = (s: string): number => utf8.encode(s).length

/** A JSON object of at least `target` UTF-8 bytes (whole items are added until it is reached). */
const argumentsObject = (random: Random.Random, target: number): Record<string, unknown> => {
  const items: Array<unknown> = []
  const args: Record<string, unknown> = {
    request_id: `req_${random.chars(ALNUM, 12)}`,
    customer: { name: random.pick(["Zoë Ångström", "山田 太郎", "José Müller", "Ada"]), tier: random.int(1, 3) },
    items
  }
  let length = byteLength(JSON.stringify(args))
  while (length < target) {
    const next = item(random)
    length += byteLength(JSON.stringify(next)) + 1
    items.push(next)
  }
  return args
}

/** The ~40 text deltas that open every stream. */
const textPieces = (random: Random.Random): Array<string> => {
  const out: Array<string> = []
  while (out.length < 40) out.push(...SseScript.pieces(sentence(random, 8) + ". ", random))
  return out
}

interface Call {
  readonly id: string
  readonly name: string
  readonly argumentsText: string
  readonly arguments: Record<string, unknown>
}

const makeCalls = (random: Random.Random, spec: SizeSpec, idPrefix: string, idLength: number): Array<Call> => {
  const calls: Array<Call> = []
  for (let i = 0; i < spec.calls; i++) {
    const args = argumentsObject(random, spec.argumentBytes)
    calls.push({
      id: `${idPrefix}${random.chars(ALNUM, idLength)}`,
      name: toolNames[i % toolNames.length]!,
      argumentsText: JSON.stringify(args),
      arguments: args
    })
  }
  return calls
}

/** Writes one body's SSE frames, in order, to `emit`; gives the number of frames (dispatched events). */
type BodyWriter = (
  random: Random.Random,
  text: ReadonlyArray<string>,
  calls: Iterable<Call>,
  emit: (frame: string) => void
) => number

/** The calls as scripts whose argument deltas are drawn as each call is written. */
function* scripts(random: Random.Random, calls: Iterable<Call>): Generator<SseScript.CallScript> {
  for (const call of calls) {
    yield {
      id: call.id,
      name: call.name,
      pieces: { [Symbol.iterator]: () => SseScript.pieces(call.argumentsText, random)[Symbol.iterator]() }
    }
  }
}

/**
 * An OpenAI Chat Completions body with `stream_options.include_usage` (every chunk carries
 * `"usage": null`, a last chunk with `choices: []` carries the usage), ending with `[DONE]`.
 */
const openAiChat: BodyWriter = (random, text, calls, emit) =>
  SseScript.openAiChat({
    id: `chatcmpl-${random.chars(ALNUM, 29)}`,
    created: 1732000000,
    model: "gpt-4o-2024-08-06",
    serviceTier: "default",
    systemFingerprint: "fp_50cad350e4",
    text,
    calls: scripts(random, calls),
    finishReason: "tool_calls",
    usage: { promptTokens: 812, cachedTokens: 0 },
    nullUsage: true
  }, emit)

/** An Anthropic Messages body: one text block, then one `tool_use` block per call, with pings. */
const anthropic: BodyWriter = (random, text, calls, emit) =>
  SseScript.anthropic({
    id: `msg_${random.chars(ALNUM, 24)}`,
    model: "claude-sonnet-4-6",
    text,
    calls: scripts(random, calls),
    stopReason: "tool_use",
    inputTokens: 812,
    cacheTokens: true
  }, emit)

/**
 * Cuts a body into independent reads of 1–4 KiB at arbitrary byte positions. A quarter of the cuts
 * move forward (within the 4 KiB bound) to the next UTF-8 continuation byte, so multi-byte
 * characters are split across reads even though most of a body's bytes are ASCII.
 */
const cutReads = (random: Random.Random, bytes: Uint8Array): Array<Uint8Array> => {
  const reads: Array<Uint8Array> = []
  let position = 0
  while (position < bytes.length) {
    let end = Math.min(bytes.length, position + random.int(1024, 4096))
    if (random.next() < 0.25) {
      const limit = Math.min(bytes.length - 1, position + 4096)
      for (let i = end; i <= limit; i++) {
        if ((bytes[i]! & 0xc0) === 0x80) {
          end = i
          break
        }
      }
    }
    reads.push(bytes.slice(position, end))
    position = end
  }
  return reads
}

const seedOf = (provider: Provider, size: Size): number =>
  (providers.indexOf(provider) + 1) * 1000 + sizeNames.indexOf(size) + 1

/**
 * Generates one stream. The default seed depends only on the provider and size, so every run of
 * the benchmark sees the same bytes.
 */
export const generate = (provider: Provider, size: Size, seed: number = seedOf(provider, size)): GeneratedStream => {
  const random = Random.make(seed)
  const spec = sizes[size]
  const text = textPieces(random)
  const calls = provider === "openai-chat"
    ? makeCalls(random, spec, "call_", 24)
    : makeCalls(random, spec, "toolu_01", 22)
  const frames: Array<string> = []
  const events = (provider === "openai-chat" ? openAiChat : anthropic)(random, text, calls, (f) => frames.push(f))
  const bytes = utf8.encode(frames.join(""))
  return {
    provider,
    size,
    seed,
    bytes,
    reads: cutReads(random, bytes),
    events,
    argumentBytes: calls.reduce((n, call) => n + byteLength(call.argumentsText), 0),
    expected: {
      text: text.join(""),
      toolCalls: calls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments })),
      finishReason: provider === "openai-chat" ? "tool_calls" : "tool_use"
    }
  }
}

/** What {@link writeCapture} wrote: its size and the ground truth of the body. */
export interface Capture {
  readonly provider: Provider
  /** UTF-8 bytes written. */
  readonly bytes: number
  /** Dispatched SSE events (including `[DONE]` and pings). */
  readonly events: number
  readonly text: string
  /** Every call, with its arguments as the JSON text a consumer must parse back. */
  readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly argumentsText: string }>
  readonly finishReason: string
}

/**
 * Generates one body of at least `bytes` UTF-8 bytes in the shape of {@link generate} (the text
 * deltas, then calls of about `argumentBytes` each, as many as it takes, then the finish), handing
 * it to `write` in pieces of about 1 MiB as it goes: the whole body is never in memory.
 */
export const writeCapture = (
  provider: Provider,
  size: { readonly bytes: number; readonly argumentBytes: number },
  write: (piece: string) => void,
  seed: number = 9000 + providers.indexOf(provider)
): Capture => {
  const random = Random.make(seed)
  const text = textPieces(random)
  const toolCalls: Array<Capture["toolCalls"][number]> = []
  let written = 0
  let pending: Array<string> = []
  let pendingLength = 0
  const emit = (frame: string) => {
    written += Buffer.byteLength(frame)
    pending.push(frame)
    pendingLength += frame.length
    if (pendingLength >= 1 << 20) {
      write(pending.join(""))
      pending = []
      pendingLength = 0
    }
  }
  const [idPrefix, idLength] = provider === "openai-chat" ? ["call_", 24] : ["toolu_01", 22]
  function* calls(): Generator<Call> {
    for (let i = 0; i === 0 || written < size.bytes; i++) {
      const args = argumentsObject(random, size.argumentBytes)
      const call = {
        id: `${idPrefix}${random.chars(ALNUM, idLength)}`,
        name: toolNames[i % toolNames.length]!,
        argumentsText: JSON.stringify(args),
        arguments: args
      }
      toolCalls.push({ id: call.id, name: call.name, argumentsText: call.argumentsText })
      yield call
    }
  }
  const events = (provider === "openai-chat" ? openAiChat : anthropic)(random, text, calls(), emit)
  if (pending.length > 0) write(pending.join(""))
  return {
    provider,
    bytes: written,
    events,
    text: text.join(""),
    toolCalls,
    finishReason: provider === "openai-chat" ? "tool_calls" : "tool_use"
  }
}

/** The names of the tools a generated stream can call (for SDKs that want tools declared). */
export const tools: ReadonlyArray<string> = toolNames

/**
 * A web `ReadableStream` that hands out `reads` one per pull, like a network body (high-water
 * mark 0: nothing is read ahead of the consumer). `gate`, when given, is awaited before handing
 * out read number `gate.at`; `onRead` sees each read's number as it goes out.
 */
export const readableStream = (
  reads: ReadonlyArray<Uint8Array>,
  options?: {
    readonly gate?: { readonly at: number; readonly wait: () => Promise<void> } | undefined
    readonly onRead?: ((read: number) => void) | undefined
  }
): ReadableStream<Uint8Array> => {
  let next = 0
  const gate = options?.gate
  const onRead = options?.onRead
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (next >= reads.length) {
        controller.close()
        return
      }
      const read = next++
      if (gate !== undefined && read === gate.at) {
        return gate.wait().then(() => {
          onRead?.(read)
          controller.enqueue(reads[read]!)
        })
      }
      onRead?.(read)
      controller.enqueue(reads[read]!)
      return undefined
    }
  }, { highWaterMark: 0 })
}
