/**
 * The Anthropic decoder reads `content_block_delta` payloads in the API's own spelling without
 * `JSON.parse` of the whole payload (`src/internal/anthropicDelta.ts`). These tests hold it to
 * `JSON.parse`: whatever it reads is exactly what `JSON.parse` gives, and the decoder's events for
 * any payload are those of the same payload read the general way.
 */
import { describe, expect, it } from "@effect/vitest"
import { Anthropic } from "@toolgate/adapters"
import { Arbitrary, Schema } from "effect"
import * as AnthropicDelta from "../src/internal/anthropicDelta.js"

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

const head = "{\"type\":\"content_block_delta\",\"index\":"
const inputMiddle = ",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":"
const textMiddle = ",\"delta\":{\"type\":\"text_delta\",\"text\":"

/** Code units that matter to JSON strings: quotes, escapes, control characters, surrogates (paired and lone). */
const units = [
  "a",
  "{",
  "\"",
  "\\",
  "/",
  "u",
  "0",
  "\n",
  "\u0000",
  "\u001f",
  "é",
  "\ud83d",
  "\ude00",
  "\udc00",
  " ",
  "}"
]
const heads = [
  head,
  head,
  head,
  head.replace("delta", "delta "),
  "{\"type\": \"content_block_delta\",\"index\":",
  " " + head
]
const indexTexts = [
  "0",
  "1",
  "7",
  "42",
  "123456789012345",
  "1234567890123456",
  "01",
  "00",
  "-1",
  "1.0",
  "1e2",
  " 1",
  "1 ",
  ""
]
const middles = [
  inputMiddle,
  inputMiddle,
  textMiddle,
  textMiddle,
  ",\"delta\":{\"type\":\"thinking_delta\",\"thinking\":",
  ",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\" :",
  ",\"delta\":{\"partial_json\":"
]
const tails = ["}}", "}}", "}}", "} }", "}}}", "}", "", ",\"x\":1}}", "}} ", "},\"index\":3}"]

/**
 * A payload near the wire spelling, from the choices: half of them in the exact spelling (any
 * index, either delta type, any string), the others with each part either exact or changed in a
 * way JSON may or may not accept.
 */
const payloadOf = (choices: ReadonlyArray<number>): string => {
  let at = 0
  const next = (n: number) => choices[at++ % choices.length]! % n
  let text = ""
  for (let n = next(12); n > 0; n--) text += units[next(units.length)]
  if (next(2) === 0) {
    const index = next(2) === 0 ? next(5) : next(1_000_000) % (10 ** next(7))
    return head + String(index) + (next(2) === 0 ? inputMiddle : textMiddle) + JSON.stringify(text) + "}}"
  }
  let literal = JSON.stringify(text)
  switch (next(8)) {
    case 0: // the raw characters between quotes, escapes not written
      literal = `"${text}"`
      break
    case 1: // cut short
      literal = literal.slice(0, next(literal.length + 1))
      break
    case 2: // a value that is not a string
      literal = ["null", "1", "{}", "[\"a\"]", "\"a\" \"b\"", "\"a\" "][next(6)]!
      break
  }
  return heads[next(heads.length)]! + indexTexts[next(indexTexts.length)]! + middles[next(middles.length)]! + literal +
    tails[next(tails.length)]!
}

/** The decoder's events for the body's events, a failure's excerpt left out (it quotes the payload as sent). */
const eventsOf = (payloads: ReadonlyArray<string>) => {
  const decoder = Anthropic.decoder()
  return payloads.map((data) => {
    const event = decoder.onEvent({ event: "message", data })
    if (event === undefined) return undefined
    const { failure, ...rest } = event as unknown as Record<string, unknown> & { failure?: object }
    if (failure === undefined) return { ...rest }
    const { excerpt: _, ...fields } = failure as Record<string, unknown>
    return { ...rest, failure: { tag: (failure as { _tag: string })._tag, ...fields } }
  })
}

const opening = [
  "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\"}}",
  "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"crm\",\"input\":{}}}",
  "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
  "{\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{}}}",
  "{\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}"
]

/** Events between the deltas that change what a delta may do: a block stops, the stop reason, the end, a ping, `[DONE]`. */
const between = [
  "{\"type\":\"content_block_stop\",\"index\":0}",
  "{\"type\":\"content_block_stop\",\"index\":1}",
  "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}",
  "{\"type\":\"message_stop\"}",
  "{\"type\":\"ping\"}",
  "[DONE]"
]

/** A payload near the wire spelling (most of the time) or one of the events `between`. */
const eventOf = (choices: ReadonlyArray<number>): string =>
  choices[0]! % 5 === 0 ? between[choices[choices.length - 1]! % between.length]! : payloadOf(choices)

describe("Anthropic content_block_delta in the wire spelling", () => {
  it("reads the API's spelling, and declines every other", () => {
    const wire = new AnthropicDelta.WireDelta()
    expect(wire.read(`${head}0${inputMiddle}"{\\"lead\\": \\"a"}}`)).toBe(AnthropicDelta.INPUT_DELTA)
    expect([wire.index, wire.value]).toEqual([0, "{\"lead\": \"a"])
    expect(wire.read(`${head}123456789012345${textMiddle}"Hi \\ud83d\\ude00"}}`)).toBe(AnthropicDelta.TEXT_DELTA)
    expect([wire.index, wire.value]).toEqual([123456789012345, "Hi 😀"])
    for (
      const declined of [
        `${head}01${inputMiddle}"a"}}`,
        `${head}1234567890123456${inputMiddle}"a"}}`,
        `${head}-1${inputMiddle}"a"}}`,
        `${head}1e2${inputMiddle}"a"}}`,
        `${head}1${inputMiddle}"a"}} `,
        `${head}1${inputMiddle}"a","x":1}}`,
        `${head}1${inputMiddle}"a"b"}}`,
        `${head}1${inputMiddle}"a\\"}}`,
        `${head}1${inputMiddle}"a\u0001"}}`,
        `${head}1${inputMiddle}"}}`,
        `${head}1,"delta":{"type":"thinking_delta","thinking":"a"}}`
      ]
    ) expect({ declined, kind: wire.read(declined) }).toEqual({ declined, kind: AnthropicDelta.NOT_WIRE_FORM })
  })

  it.prop(
    "whatever it reads is exactly what JSON.parse of the payload gives",
    { choices: Arbitrary.array(int(0, 1_000_000), { minLength: 1, maxLength: 40 }) },
    ({ choices }) => {
      const data = payloadOf(choices)
      const wire = new AnthropicDelta.WireDelta()
      const kind = wire.read(data)
      if (kind === AnthropicDelta.NOT_WIRE_FORM) return
      const delta = kind === AnthropicDelta.INPUT_DELTA
        ? { type: "input_json_delta", partial_json: wire.value }
        : { type: "text_delta", text: wire.value }
      expect({ data, read: { type: "content_block_delta", index: wire.index, delta } }).toEqual({
        data,
        read: JSON.parse(data)
      })
    },
    { arbitrary: { runs: 5000 } }
  )

  it.prop(
    "the decoder's events for any payload are those of the same payload read through JSON.parse",
    {
      choices: Arbitrary.array(Arbitrary.array(int(0, 1_000_000), { minLength: 1, maxLength: 40 }), {
        minLength: 1,
        maxLength: 8
      }),
      opened: int(0, 5)
    },
    ({ choices, opened }) => {
      const payloads = choices.map(eventOf)
      const before = opening.slice(0, opened)
      // A leading space: the same JSON value, never the wire spelling, so it is read by JSON.parse
      // (`[DONE]` is not JSON and is compared as it is).
      const general = payloads.map((p) => p === "[DONE]" ? p : ` ${p}`)
      expect(eventsOf([...before, ...payloads])).toEqual(eventsOf([...before, ...general]))
    },
    { arbitrary: { runs: 3000 } }
  )

  it("reads a good share of the generated payloads (the properties above are not vacuous)", () => {
    const wire = new AnthropicDelta.WireDelta()
    let read = 0
    for (let seed = 1; seed <= 2000; seed++) {
      const choices = Array.from({ length: 20 }, (_, i) => (seed * 7919 + i * 104729) % 1_000_003)
      if (wire.read(payloadOf(choices)) !== AnthropicDelta.NOT_WIRE_FORM) read++
    }
    expect(read).toBeGreaterThan(500)
  })
})
