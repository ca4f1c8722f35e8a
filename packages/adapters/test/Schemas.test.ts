/**
 * The documented payload Schemas accept every event of the fixture corpus, and reject shapes the
 * decoders report as `MalformedStreamEvent`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Anthropic, Gemini, OpenAiResponses } from "@toolgate/adapters"
import { Fixture } from "@toolgate/testing"
import { Schema } from "effect"

const payloads = (provider: "openai-responses" | "anthropic" | "gemini") =>
  Fixture.load(provider).flatMap((fixture) =>
    Fixture.blocks(fixture).flatMap((block) => {
      const data = block.filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart())
      if (data.length === 0) return []
      try {
        return [{ name: fixture.name, payload: JSON.parse(data.join("\n")) as unknown }]
      } catch {
        return [] // the event a cut fixture ends inside
      }
    })
  )

const cases = [
  ["openai-responses", OpenAiResponses.ResponsesEvent, {
    type: "response.function_call_arguments.delta",
    output_index: 0,
    item_id: "fc_1",
    delta: 1
  }],
  ["anthropic", Anthropic.MessagesEvent, {
    type: "content_block_delta",
    index: "0",
    delta: { type: "text_delta", text: "x" }
  }],
  ["gemini", Gemini.GenerateContentResponse, {
    candidates: [{ content: { parts: [{ functionCall: { name: "f", args: [1] } }] } }]
  }]
] as const

describe("payload Schemas", () => {
  for (const [provider, schema, malformed] of cases) {
    it(`${provider}: accepts every fixture event and rejects a malformed one`, () => {
      const is = Schema.is(schema as Schema.Top)
      const all = payloads(provider)
      expect(all.length).toBeGreaterThan(20)
      expect(all.filter((p) => !is(p.payload)).map((p) => p.name)).toEqual([])
      expect(is(malformed)).toBe(false)
    })
  }
})
