/**
 * Generated turns, written in each provider's wire format with the calls' argument fragments
 * interleaved wherever the format keys them (chat `index`, Responses `output_index`, Anthropic
 * block `index`), and grouped arbitrarily where it does not (Gemini's whole calls, one or several
 * per chunk, or Vertex streamed arguments): the assembled turn is always exactly the generated
 * one.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fixture } from "@toolgate/testing"
import { Arbitrary, Array as Arr, Effect, Order, Schema } from "effect"

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

type Scalar = string | number | boolean | null

interface GeneratedCall {
  readonly name: string
  readonly args: Record<string, Scalar>
  /** Positions (any size; taken modulo the text length) where the arguments text is cut. */
  readonly cuts: ReadonlyArray<number>
}

interface Turn {
  readonly text: ReadonlyArray<string>
  readonly calls: ReadonlyArray<GeneratedCall>
  /** Which call sends its next fragment (taken modulo the calls with fragments left). */
  readonly schedule: ReadonlyArray<number>
}

const scalar: Arbitrary.Arbitrary<Scalar> = Arbitrary.schema(
  Schema.Union([Schema.String, Schema.Int, Schema.Boolean, Schema.Null])
)

const call: Arbitrary.Arbitrary<GeneratedCall> = Arbitrary.all({
  name: Arbitrary.schema(Schema.Literals(["create_task", "assign_owner", "update_deal_stage", "lookup_contact"])),
  args: Arbitrary.map(
    Arbitrary.array(Arbitrary.all([Arbitrary.schema(Schema.String), scalar]), { maxLength: 5 }),
    (entries) => Object.fromEntries(entries)
  ),
  cuts: Arbitrary.array(int(0, 10_000), { maxLength: 8 })
})

const turn: Arbitrary.Arbitrary<Turn> = Arbitrary.all({
  text: Arbitrary.array(Arbitrary.schema(Schema.String), { maxLength: 3 }),
  calls: Arbitrary.array(call, { minLength: 1, maxLength: 4 }),
  schedule: Arbitrary.array(int(0, 3), { maxLength: 40 })
})

/** The arguments text of a call cut into fragments (never empty: an empty cut adds nothing). */
const fragments = (c: GeneratedCall): Array<string> => {
  const json = JSON.stringify(c.args)
  const at = Arr.sort(new Set(c.cuts.map((n) => n % (json.length + 1))), Order.Number)
  const out: Array<string> = []
  let from = 0
  for (const cut of [...at, json.length]) {
    if (cut > from) out.push(json.slice(from, cut))
    from = Math.max(from, cut)
  }
  return out
}

/**
 * The order fragments are sent in: `[call, fragment]` pairs, each call's fragments in order,
 * calls interleaved by the schedule (then the rest, call by call).
 */
const interleave = (t: Turn): Array<readonly [number, number]> => {
  const pieces = t.calls.map(fragments)
  const next = pieces.map(() => 0)
  const out: Array<readonly [number, number]> = []
  const open = () => pieces.map((_, i) => i).filter((i) => next[i]! < pieces[i]!.length)
  for (const pick of t.schedule) {
    const candidates = open()
    if (candidates.length === 0) break
    const i = candidates[pick % candidates.length]!
    out.push([i, next[i]!++])
  }
  for (const i of open()) while (next[i]! < pieces[i]!.length) out.push([i, next[i]!++])
  return out
}

const expected = (t: Turn, ids: (i: number) => string | null) => ({
  outcome: "complete",
  text: t.text.join(""),
  // What JSON can carry (-0 is written as 0).
  toolCalls: t.calls.map((c, i) => ({ id: ids(i), name: c.name, arguments: JSON.parse(JSON.stringify(c.args)) })),
  error: null
})

const check = (provider: "openai-chat" | "openai-responses" | "anthropic" | "gemini", body: string, want: object) =>
  Effect.gen(function*() {
    const result = yield* Fixture.runText(provider, body)
    const { finishReason: _, ...rest } = Fixture.outcome(result)
    expect(rest).toEqual(want)
  })

/** A chat completion chunk with choice 0. */
const chatChunk = (delta: object, finish: string | null = null) => ({
  data: { object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] }
})

/** An event whose SSE type is its payload's `type` (Responses, Anthropic). */
const ev = (type: string, fields: object = {}) => ({ event: type, data: { type, ...fields } })

/** A Gemini chunk with candidate 0. */
const geminiChunk = (parts: ReadonlyArray<object>, finish?: string) => ({
  data: { candidates: [{ content: { parts, role: "model" }, index: 0, ...(finish ? { finishReason: finish } : {}) }] }
})

/** An RFC 9535 normalized path for one member name. */
const quote = (key: string) => `$['${key.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}']`

describe("interleaving", () => {
  it.effect.prop("openai-chat: fragments interleaved across indices", { t: turn }, ({ t }) => {
    const pieces = t.calls.map(fragments)
    const opened = new Set<number>()
    const frames = [
      ...t.text.map((text) => chatChunk({ content: text })),
      ...interleave(t).map(([i, f]) => {
        const first = !opened.has(i)
        opened.add(i)
        return chatChunk({
          tool_calls: [
            first
              ? {
                index: i,
                id: `call_${i}`,
                type: "function",
                function: { name: t.calls[i]!.name, arguments: pieces[i]![f] }
              }
              : { index: i, function: { arguments: pieces[i]![f] } }
          ]
        })
      }),
      chatChunk({}, "tool_calls"),
      { data: "[DONE]" }
    ]
    return check("openai-chat", Fixture.sse(frames), expected(t, (i) => `call_${i}`))
  }, { arbitrary: { runs: 60 } })

  it.effect.prop("openai-responses: deltas interleaved across output items", { t: turn }, ({ t }) => {
    const pieces = t.calls.map(fragments)
    const added = new Set<number>()
    const frames = [
      ev("response.created", { response: { status: "in_progress" } }),
      ev("response.output_item.added", { output_index: 0, item: { id: "msg_0", type: "message" } }),
      ...t.text.map((delta) => ev("response.output_text.delta", { output_index: 0, item_id: "msg_0", delta })),
      ...interleave(t).flatMap(([i, f]) => {
        const out = []
        if (!added.has(i)) {
          added.add(i)
          out.push(ev("response.output_item.added", {
            output_index: i + 1,
            item: { id: `fc_${i}`, type: "function_call", arguments: "", call_id: `call_${i}`, name: t.calls[i]!.name }
          }))
        }
        out.push(
          ev("response.function_call_arguments.delta", {
            output_index: i + 1,
            item_id: `fc_${i}`,
            delta: pieces[i]![f]
          })
        )
        return out
      }),
      ...t.calls.flatMap((c, i) => {
        const args = JSON.stringify(c.args)
        return [
          ev("response.function_call_arguments.done", { output_index: i + 1, item_id: `fc_${i}`, arguments: args }),
          ev("response.output_item.done", {
            output_index: i + 1,
            item: { id: `fc_${i}`, type: "function_call", arguments: args, call_id: `call_${i}`, name: c.name }
          })
        ]
      }),
      ev("response.completed", { response: { status: "completed" } })
    ]
    return check("openai-responses", Fixture.sse(frames), expected(t, (i) => `call_${i}`))
  }, { arbitrary: { runs: 60 } })

  it.effect.prop("anthropic: input deltas interleaved across open tool_use blocks", { t: turn }, ({ t }) => {
    const pieces = t.calls.map(fragments)
    const started = new Set<number>()
    const frames = [
      ev("message_start", { message: { id: "msg_1", content: [] } }),
      ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
      ...t.text.map((text) => ev("content_block_delta", { index: 0, delta: { type: "text_delta", text } })),
      ev("content_block_stop", { index: 0 }),
      ...interleave(t).flatMap(([i, f]) => {
        const out = []
        if (!started.has(i)) {
          started.add(i)
          out.push(ev("content_block_start", {
            index: i + 1,
            content_block: { type: "tool_use", id: `toolu_${i}`, name: t.calls[i]!.name, input: {} }
          }))
        }
        out.push(
          ev("content_block_delta", { index: i + 1, delta: { type: "input_json_delta", partial_json: pieces[i]![f] } })
        )
        return out
      }),
      ...t.calls.map((_, i) => ev("content_block_stop", { index: i + 1 })),
      ev("message_delta", { delta: { stop_reason: "tool_use" }, usage: { output_tokens: 1 } }),
      ev("message_stop")
    ]
    return check("anthropic", Fixture.sse(frames), expected(t, (i) => `toolu_${i}`))
  }, { arbitrary: { runs: 60 } })

  it.effect.prop(
    "gemini: whole calls grouped into chunks any way, or streamed as Vertex partialArgs, are never merged",
    { t: turn, vertex: Arbitrary.schema(Schema.Boolean), withIds: Arbitrary.schema(Schema.Boolean) },
    ({ t, vertex, withIds }) => {
      const partsOf = (c: GeneratedCall, i: number): Array<Array<object>> => {
        if (!vertex) {
          return [[{ functionCall: { name: c.name, args: c.args, ...(withIds ? { id: `fc-${i}` } : {}) } }]]
        }
        // Vertex: open, then each member as partialArgs (strings in pieces), then close.
        const out: Array<Array<object>> = [[{ functionCall: { name: c.name, willContinue: true } }]]
        Object.entries(c.args).forEach(([key, value], k) => {
          const path = quote(key)
          if (typeof value === "string") {
            const cut = c.cuts.length === 0 ? 0 : c.cuts[k % c.cuts.length]! % (value.length + 1)
            for (const piece of [value.slice(0, cut), value.slice(cut)]) {
              out.push([{
                functionCall: {
                  partialArgs: [{ jsonPath: path, stringValue: piece, willContinue: true }],
                  willContinue: true
                }
              }])
            }
          } else {
            const entry = value === null
              ? { jsonPath: path, nullValue: null }
              : typeof value === "number"
              ? { jsonPath: path, numberValue: value }
              : { jsonPath: path, boolValue: value }
            out.push([{ functionCall: { partialArgs: [entry], willContinue: true } }])
          }
        })
        out.push([{ functionCall: {} }])
        return out
      }
      // Group consecutive parts into chunks as the schedule says (0 = start a new chunk).
      const parts = t.calls.flatMap((c, i) => partsOf(c, i)).flat()
      const chunks: Array<Array<object>> = [[]]
      parts.forEach((part, k) => {
        if (k > 0 && (t.schedule[k % Math.max(1, t.schedule.length)] ?? 0) === 0) chunks.push([])
        chunks[chunks.length - 1]!.push(part)
      })
      const frames = [
        ...t.text.map((text) => geminiChunk([{ text }])),
        ...chunks.map((c, k) => geminiChunk(c, k === chunks.length - 1 ? "STOP" : undefined))
      ]
      return check(
        "gemini",
        Fixture.sse(frames, "\r\n"),
        expected(t, (i) => (withIds && !vertex ? `fc-${i}` : null))
      )
    },
    { arbitrary: { runs: 60 } }
  )
})
