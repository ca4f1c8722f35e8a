/**
 * The assembler's argument buffering (pieces joined in batches of 128, the last call flattened
 * when the next opens, the last-call cache for indexed deltas) against a reference that needs
 * none of it: the same calls' arguments delivered whole, one delta per call. Any interleaving of
 * any split, with calls of thousands of pieces and indices jumping back and forth, must give the
 * same turn, or the same error with the same fields (a malformed call's `excerpt` included).
 */
import { assert, describe, it } from "@effect/vitest"
import { Assembler, type StreamEvent } from "@toolgate/core"
import { Result, Schema } from "effect"

/** A small deterministic generator, so one integer seed describes a whole stream. */
const random = (seed: number) => {
  let state = seed >>> 0 || 1
  return () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 0x1_0000_0000
  }
}

const finish: StreamEvent.StreamEvent = { finish: { reason: "tool_calls", class: "success", terminal: true } }

/**
 * `calls` calls whose arguments are JSON objects of `maxParts / 2` to `maxParts` parts (some multi-byte, some
 * surrogate pairs), one of them made malformed when `corrupt`; returns the interleaved stream of
 * 0–3-character deltas and the reference stream (each call's arguments whole).
 */
const streams = (seed: number, calls: number, maxParts: number, corrupt: boolean) => {
  const next = random(seed)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(next() * xs.length)]!
  const texts: Array<string> = []
  for (let c = 0; c < calls; c++) {
    const parts = Array.from(
      { length: Math.floor(maxParts * (next() + 1) / 2) },
      () => pick(["ab", "é", "😀", "x", "\n", "12"])
    )
    texts.push(JSON.stringify({ call: c, text: parts.join("") }))
  }
  if (corrupt) {
    const c = Math.floor(next() * calls)
    const at = Math.floor(next() * texts[c]!.length)
    texts[c] = texts[c]!.slice(0, at) + pick(["}", "\"", "\ud83d", "x"]) + texts[c]!.slice(at)
  }
  const queues = texts.map((text) => {
    const pieces: Array<string> = []
    for (let i = 0; i < text.length;) {
      const n = Math.floor(next() * 4)
      pieces.push(text.slice(i, i + n))
      i += n
    }
    return pieces
  })
  const started = new Set<number>()
  const interleaved: Array<StreamEvent.StreamEvent> = []
  let live = queues.map((_, c) => c)
  let last = -1
  while (live.length > 0) {
    const c = last >= 0 && queues[last]!.length > 0 && next() < 0.6 ? last : pick(live)
    const delta: StreamEvent.ToolCallDelta = started.has(c)
      ? { index: c, argumentsDelta: queues[c]!.shift()! }
      : { index: c, id: `call_${c}`, name: `tool_${c}`, argumentsDelta: queues[c]!.shift()! }
    started.add(c)
    interleaved.push({ toolCalls: [delta] })
    last = c
    if (queues[c]!.length === 0) live = live.filter((x) => x !== c)
  }
  interleaved.push(finish)
  const whole: Array<StreamEvent.StreamEvent> = texts.map((text, c) => ({
    toolCalls: [{ index: c, id: `call_${c}`, name: `tool_${c}`, argumentsDelta: text }]
  }))
  whole.push(finish)
  return { interleaved, whole }
}

const outcome = (events: ReadonlyArray<StreamEvent.StreamEvent>) => {
  const machine = Assembler.make()
  for (const event of events) machine.push(event)
  const verdict = machine.end()
  return JSON.parse(JSON.stringify(Result.isSuccess(verdict) ? { turn: verdict.success } : { error: verdict.failure }))
}

describe("argument buffering", () => {
  it.prop(
    "any interleaving of any split of any calls gives what the calls delivered whole give",
    {
      seed: Schema.Int,
      calls: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 40 })),
      corrupt: Schema.Boolean
    },
    ({ calls, corrupt, seed }) => {
      const { interleaved, whole } = streams(seed, calls, 400, corrupt)
      assert.deepStrictEqual(outcome(interleaved), outcome(whole))
    },
    { arbitrary: { runs: 150 } }
  )

  it("a call of thousands of pieces, malformed at its end, reports the excerpt its whole text does", () => {
    const { interleaved, whole } = streams(7, 3, 5000, false)
    const open = interleaved.slice(0, -1)
    const broken: Array<StreamEvent.StreamEvent> = [...open, { toolCalls: [{ index: 0, argumentsDelta: "}" }] }, finish]
    const reference = whole.slice(0, -1).map((event, c) =>
      c === 0
        ? { toolCalls: [{ ...event.toolCalls![0]!, argumentsDelta: `${event.toolCalls![0]!.argumentsDelta}}` }] }
        : event
    )
    assert.isAbove(open.filter((event) => event.toolCalls?.[0]?.index === 0).length, 1000)
    const error = outcome(broken)
    assert.strictEqual(error.error?._tag, "MalformedToolArguments")
    assert.deepStrictEqual(error, outcome([...reference, finish]))
  })

  it("thousands of interleaved calls, indices jumping back and forth, one of them malformed", () => {
    for (const corrupt of [false, true]) {
      const { interleaved, whole } = streams(11, 3000, 20, corrupt)
      assert.deepStrictEqual(outcome(interleaved), outcome(whole))
    }
  })
})
