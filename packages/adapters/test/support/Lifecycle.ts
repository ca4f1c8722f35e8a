/**
 * Test support for the lifecycle properties: a fixture body as a list of SSE event blocks, each
 * labelled with what the rules of `test/fixtures/README.md` §2–§6 say it is in its provider's
 * lifecycle (start, end, inert, content). The labels come from the block's own text (its `data:`
 * payload and its lines), never from running a decoder, so a property can state what a body is
 * without asking the implementation under test.
 */
import type { Provider } from "@toolgate/adapters"
import { Fixture } from "@toolgate/testing"
import { Predicate } from "effect"

/**
 * What a block is in its provider's lifecycle.
 *
 * - `start`: Anthropic `message_start`; Responses `response.created`.
 * - `lifecycle`: a Responses lifecycle event of a response (`response.created`,
 *   `response.in_progress`, `response.queued`): repeatable for the same response.
 * - `end`: the end event: chat `[DONE]`, Anthropic `message_stop`, the terminal Responses event;
 *   for Gemini, a chunk with a finish reason or block reason (its finish chunk).
 * - `inert`: carries nothing: a comment-only block, an Anthropic `ping`, `[DONE]` outside chat.
 * - `content`: everything else.
 */
export type Kind = "start" | "lifecycle" | "end" | "inert" | "content"

/** A block and what the rules say about it. */
export interface Labelled {
  readonly block: Fixture.Block
  /** The block's text, its identity: two blocks with the same text are the same event. */
  readonly text: string
  readonly kind: Kind
  /** Responses: the `response.id` the payload names, if any. */
  readonly responseId?: string | undefined
  /** Chat and Gemini: the payload carries tool data (`delta.tool_calls` entries, a `functionCall` part). */
  readonly toolData: boolean
  /**
   * The block fails whatever its place: an `{"error": …}` payload (chat, Gemini, also unframed),
   * or a payload that is not JSON (a fixture's last event, cut before its end).
   */
  readonly error: boolean
  /** Chat and Gemini: the payload carries a finish reason (the finish chunk). */
  readonly finish: boolean
  /** Anthropic: the payload is a `content_block_start`. */
  readonly blockStart: boolean
}

/** The `data:` payload of a block (several `data:` lines joined with `\n`), `undefined` without one. */
export const dataOf = (block: Fixture.Block): string | undefined => {
  const lines = block.filter((l) => l.startsWith("data:")).map((l) => l.slice(l.startsWith("data: ") ? 6 : 5))
  return lines.length === 0 ? undefined : lines.join("\n")
}

const parse = (data: string | undefined): Record<string, unknown> | undefined => {
  if (data === undefined) return undefined
  try {
    const value: unknown = JSON.parse(data)
    return Predicate.isObject(value) ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

const terminalTypes = new Set(["response.completed", "response.incomplete", "response.failed"])
const lifecycleTypes = new Set(["response.created", "response.in_progress", "response.queued"])

/** Labels one block of a `provider` body. */
export const label = (provider: Provider.Name, block: Fixture.Block): Labelled => {
  const text = block.join("\n")
  const data = dataOf(block)
  const payload = parse(data)
  const unframed = block.some((l) => !l.startsWith(":") && !/^(data|event|id|retry)(:|$)/.test(l))
  const base = {
    block,
    text,
    toolData: false,
    error: data !== undefined && data !== "[DONE]" && payload === undefined,
    finish: false,
    blockStart: false
  }
  if (data === undefined && !unframed) return { ...base, kind: "inert" }
  switch (provider) {
    case "openai-chat": {
      if (data === "[DONE]") return { ...base, kind: "end" }
      const choices = Array.isArray(payload?.choices) ? payload.choices : []
      const choice = choices.find((c) => Predicate.isObject(c) && (c.index ?? 0) === 0) as
        | Record<string, any>
        | undefined
      const entries = choice?.delta?.tool_calls
      return {
        ...base,
        kind: "content",
        toolData: Array.isArray(entries) && entries.length > 0,
        finish: typeof choice?.finish_reason === "string" && choice.finish_reason !== "",
        error: base.error || (payload?.error !== undefined && payload.error !== null)
      }
    }
    case "anthropic": {
      if (data === "[DONE]") return { ...base, kind: "inert" }
      const type = payload?.type
      return {
        ...base,
        blockStart: type === "content_block_start",
        kind: type === "message_start"
          ? "start"
          : type === "message_stop"
          ? "end"
          : type === "ping"
          ? "inert"
          : "content"
      }
    }
    case "openai-responses": {
      if (data === "[DONE]") return { ...base, kind: "inert" }
      const type = typeof payload?.type === "string" ? payload.type : ""
      const response = payload?.response
      const responseId = Predicate.isObject(response) && typeof response.id === "string" ? response.id : undefined
      return {
        ...base,
        responseId,
        kind: terminalTypes.has(type)
          ? "end"
          : type === "response.created"
          ? "start"
          : lifecycleTypes.has(type)
          ? "lifecycle"
          : "content"
      }
    }
    case "gemini": {
      if (data === "[DONE]") return { ...base, kind: "inert" }
      if (unframed) return { ...base, kind: "content", error: true }
      const candidates = Array.isArray(payload?.candidates) ? payload.candidates : []
      const first = candidates.find((c) => Predicate.isObject(c) && (c.index ?? 0) === 0) as
        | Record<string, any>
        | undefined
      const parts: Array<unknown> = Array.isArray(first?.content?.parts) ? first.content.parts : []
      const toolData = parts.some((p) => Predicate.isObject(p) && p.functionCall !== undefined)
      const feedback = payload?.promptFeedback
      const finished = typeof first?.finishReason === "string" ||
        (Predicate.isObject(feedback) && typeof feedback.blockReason === "string")
      return {
        ...base,
        toolData,
        finish: finished,
        error: base.error || (payload?.error !== undefined && payload.error !== null),
        kind: finished ? "end" : "content"
      }
    }
  }
}

/** A fixture body, labelled block by block. */
export const labelled = (fixture: Fixture.Fixture): Array<Labelled> =>
  Fixture.blocks(fixture).map((block) => label(fixture.provider, block))

/** The index of the first end block, or -1. */
export const endOf = (list: ReadonlyArray<Labelled>): number => list.findIndex((b) => b.kind === "end")

/** The body of labelled blocks (LF line ends; every parser here accepts any). */
export const body = (list: ReadonlyArray<Labelled>): Uint8Array => Fixture.unblocks(list.map((b) => b.block))

/** An inert block of each provider's, to put anywhere. */
export const inertBlocks = (provider: Provider.Name): ReadonlyArray<Labelled> =>
  [
    [": keep-alive"],
    ...(provider === "openai-chat" ? [] : [["data: [DONE]"]]),
    ...(provider === "anthropic" ? [["event: ping", "data: {\"type\": \"ping\"}"]] : [])
  ].map((block) => label(provider, block))

/**
 * The oracle of the lifecycle fuzz: whether `mutated`, a body built from the blocks of the
 * complete body `original` (and of others), is still exactly that one finished lifecycle, by the
 * rules alone. Blocks are compared by their text (what a decoder sees), so a block of another
 * body that is byte-identical (a `message_stop`, a `[DONE]`) counts as the same event.
 *
 * The differences the rules make harmless, and nothing else:
 * - inert blocks anywhere (comments; Anthropic pings; `[DONE]` outside chat);
 * - chat: `[DONE]` may be missing (it is not the finish), and may repeat right behind itself;
 *   between the finish chunk and `[DONE]`, as for Gemini below, chunks without tool data are
 *   harmless wherever they come from (chat names no response);
 * - Anthropic: `message_start` repeated with the same id before any `content_block_start`;
 * - Responses: lifecycle events of the same response (same `response.id`) repeated, dropped or
 *   moved anywhere before the terminal event;
 * - Gemini (no end event, no ids): blocks without tool data may move behind the finish chunk and
 *   other bodies' blocks without tool data or error may follow it; the tool-data blocks up to
 *   the first finish must be the original's, in order, and no tool data may follow it.
 *
 * Everything else (an event behind the end event, a second start or response id, a missing end
 * or start, another body's events before the end) is not one lifecycle.
 */
export const isOneLifecycle = (
  provider: Provider.Name,
  original: ReadonlyArray<Labelled>,
  mutated: ReadonlyArray<Labelled>
): boolean => {
  const live = (list: ReadonlyArray<Labelled>) => list.filter((b) => b.kind !== "inert")
  const same = (a: ReadonlyArray<Labelled>, b: ReadonlyArray<Labelled>) =>
    a.length === b.length && a.every((x, i) => x.text === b[i]!.text)
  const m = live(mutated)
  const o = live(original)
  switch (provider) {
    case "openai-chat": {
      const done = m.findIndex((b) => b.kind === "end")
      if (done >= 0 && m.slice(done).some((b) => b.kind !== "end")) return false
      return finishedOnce(m.filter((b) => b.kind !== "end"), o.filter((b) => b.kind !== "end"))
    }
    case "anthropic": {
      if (m.length === 0 || m[0]!.kind !== "start" || m[0]!.text !== o[0]!.text) return false
      const stop = m.findIndex((b) => b.kind === "end")
      if (stop < 0 || stop !== m.length - 1) return false
      const firstBlock = m.findIndex((b) => b.blockStart)
      const starts = m.flatMap((b, i) => b.kind === "start" ? [i] : [])
      if (starts.some((i) => m[i]!.text !== o[0]!.text || (firstBlock >= 0 && i > firstBlock))) return false
      return same(m.filter((b) => b.kind !== "start"), o.filter((b) => b.kind !== "start"))
    }
    case "openai-responses": {
      const id = o.find((b) => b.responseId !== undefined)?.responseId
      if (m.some((b) => b.responseId !== undefined && b.responseId !== id)) return false
      const terminal = m.findIndex((b) => b.kind === "end")
      if (terminal < 0 || terminal !== m.length - 1) return false
      const core = (list: ReadonlyArray<Labelled>) => list.filter((b) => b.kind !== "start" && b.kind !== "lifecycle")
      return same(core(m), core(o))
    }
    case "gemini":
      return finishedOnce(m, o)
  }
}

/**
 * For the formats whose finish chunk is their last word on calls (chat without `[DONE]`,
 * Gemini): the first finish chunk is the original's; up to it, only the original's own blocks,
 * with its tool-data blocks in their order; after it, nothing with tool data and nothing that
 * fails.
 */
const finishedOnce = (m: ReadonlyArray<Labelled>, o: ReadonlyArray<Labelled>): boolean => {
  const finish = m.findIndex((b) => b.finish)
  const originalFinish = o.findIndex((b) => b.finish)
  if (finish < 0 || m[finish]!.text !== o[originalFinish]!.text) return false
  if (m.slice(finish + 1).some((b) => b.toolData || b.error)) return false
  const own = new Set(o.map((b) => b.text))
  const upTo = m.slice(0, finish + 1)
  if (upTo.some((b) => !own.has(b.text) || b.error)) return false
  const calls = (list: ReadonlyArray<Labelled>) => list.filter((b) => b.toolData).map((b) => b.text)
  const expected = calls(o.slice(0, originalFinish + 1))
  const got = calls(upTo)
  return got.length === expected.length && got.every((t, i) => t === expected[i])
}
