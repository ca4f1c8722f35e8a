/**
 * Fuzz: whatever the body, every provider decoder (and `auto`) ends in a completed turn or a
 * typed assembly error, never a defect (a thrown exception, a `Die`), and a failed stream never
 * releases a tool call. `Fixture.run` turns anything but a typed assembly error into a defect,
 * which falsifies the property.
 */
import { describe, expect, it } from "@effect/vitest"
import { Provider } from "@toolgate/adapters"
import { Fixture } from "@toolgate/testing"
import { Arbitrary, Effect, Predicate, Schema } from "effect"

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

const modes: ReadonlyArray<Provider.Name | "auto"> = [...Provider.names, "auto"]
const fixtures = Fixture.loadAll()

/** A run's invariants: no release from a failure; a completed turn's calls all have object arguments. */
const sound = (result: Fixture.Run) => {
  if (result.outcome === "error") {
    expect(result.released).toBe(false)
    expect(result.toolCalls).toEqual([])
  } else {
    for (const call of result.toolCalls) expect(Predicate.isObject(call.arguments)).toBe(true)
  }
}

/** Runs a body through every decoder; each must end soundly. */
const everyDecoder = (body: ReadonlyArray<Uint8Array>) =>
  Effect.forEach(modes, (mode) => Effect.map(Fixture.run(mode, body), sound), { discard: true })

/** SSE-ish token soup: field names, separators, line ends, JSON punctuation and provider words. */
const token = Arbitrary.schema(Schema.Union([
  Schema.Literals([
    "data: ",
    "data:",
    "event: ",
    "id: 1",
    "retry: 5",
    ": ping",
    "\n",
    "\r\n",
    "\r",
    "\n\n",
    "{",
    "}",
    "[",
    "]",
    "\"",
    ",",
    ":",
    "[DONE]",
    "\"error\"",
    "\"type\"",
    "\"choices\"",
    "\"candidates\"",
    "\"functionCall\"",
    "\"message_start\"",
    "\"response.completed\"",
    "\uFEFF",
    "é",
    "😀"
  ]),
  Schema.String
]))

/** A JSON path choice list: at each level, descend into a child or replace there. */
const mutate = (value: unknown, choices: ReadonlyArray<number>, replacement: unknown, depth = 0): unknown => {
  const c = choices[depth % Math.max(1, choices.length)] ?? 0
  const container = Array.isArray(value) || Predicate.isObject(value)
  const keys = container ? Object.keys(value as object) : []
  if (keys.length === 0 || c % 4 === 0 || depth > 12) return replacement
  const key = keys[c % keys.length]!
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) }
  copy[key] = mutate(copy[key], choices, replacement, depth + 1)
  return copy
}

/** Replaces the `data:` payload of a block with `f(payload)`; blocks without JSON data stay. */
const mapData = (block: Fixture.Block, f: (payload: unknown) => unknown): Fixture.Block => {
  const line = block.findIndex((l) => l.startsWith("data:"))
  if (line < 0) return block
  let payload: unknown
  try {
    payload = JSON.parse(block[line]!.slice(5))
  } catch {
    return block
  }
  const out = [...block]
  out[line] = `data: ${JSON.stringify(f(payload))}`
  return out
}

describe("fuzz", () => {
  it.effect.prop(
    "random bytes",
    { bytes: Arbitrary.array(int(0, 255), { maxLength: 400 }), split: int(0, 400) },
    ({ bytes, split }) => {
      const body = Uint8Array.from(bytes)
      return everyDecoder([body.subarray(0, split), body.subarray(split)])
    },
    { arbitrary: { runs: 100 } }
  )

  it.effect.prop(
    "random SSE-ish token soup",
    { tokens: Arbitrary.array(token, { maxLength: 80 }) },
    ({ tokens }) => everyDecoder([Fixture.bytes(tokens.join(""))]),
    { arbitrary: { runs: 150 } }
  )

  it.effect.prop(
    "random valid-JSON-but-wrong-shape events: a fixture with one payload's node replaced by random JSON",
    {
      pick: int(0, fixtures.length - 1),
      at: int(0, 10_000),
      choices: Arbitrary.array(int(0, 1000), { minLength: 1, maxLength: 8 }),
      replacement: Arbitrary.schema(Schema.Json),
      auto: Arbitrary.schema(Schema.Boolean)
    },
    ({ at, auto, choices, pick, replacement }) =>
      Effect.gen(function*() {
        const fixture = fixtures[pick]!
        const list = Fixture.blocks(fixture)
        const i = at % list.length
        list[i] = mapData(list[i]!, (payload) => mutate(payload, choices, replacement))
        sound(yield* Fixture.run(auto ? "auto" : fixture.provider, [Fixture.unblocks(list)]))
      }),
    { arbitrary: { runs: 300 } }
  )

  it.effect.prop(
    "random event orders: a fixture's events reordered, dropped and repeated",
    {
      pick: int(0, fixtures.length - 1),
      order: Arbitrary.array(int(0, 10_000), { maxLength: 60 }),
      auto: Arbitrary.schema(Schema.Boolean)
    },
    ({ auto, order, pick }) =>
      Effect.gen(function*() {
        const fixture = fixtures[pick]!
        const list = Fixture.blocks(fixture)
        const shuffled = order.map((n) => list[n % list.length]!)
        sound(yield* Fixture.run(auto ? "auto" : fixture.provider, [Fixture.unblocks(shuffled, "\r\n")]))
      }),
    { arbitrary: { runs: 300 } }
  )

  it.effect.prop(
    "random JSON payloads as events, and after a valid start",
    {
      payloads: Arbitrary.array(Arbitrary.schema(Schema.Json), { minLength: 1, maxLength: 6 }),
      pick: int(0, fixtures.length - 1),
      prefix: int(0, 6)
    },
    ({ payloads, pick, prefix }) =>
      Effect.gen(function*() {
        const fixture = fixtures[pick]!
        const start = Fixture.blocks(fixture).slice(0, prefix)
        const body = [...start, ...payloads.map((p) => [`data: ${JSON.stringify(p)}`])]
        yield* everyDecoder([Fixture.unblocks(body)])
      }),
    { arbitrary: { runs: 150 } }
  )

  describe("nesting deeper than JSON.stringify can write is a typed error, not a RangeError", () => {
    const depth = 20_000
    const deep = "{\"a\":".repeat(depth) + "1" + "}".repeat(depth)
    const path = "$" + ".a".repeat(depth)
    it.effect.each(
      [
        [
          "gemini",
          `data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":${deep}}}]},"finishReason":"STOP"}]}\n\n`
        ],
        [
          "gemini",
          `data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true}},` +
          `{"functionCall":{"partialArgs":[{"jsonPath":"${path}","numberValue":1}]}}]},"finishReason":"STOP"}]}\n\n`
        ],
        [
          "anthropic",
          `data: {"type":"message_start","message":{"id":"m"}}\n\n` +
          `data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":${deep}}}\n\n`
        ]
      ] as const
    )("%s", ([provider, body]) =>
      Effect.gen(function*() {
        const result = yield* Fixture.runText(provider, body)
        expect([result.error, result.released]).toEqual(["MalformedStreamEvent", false])
      }))
  })
})
