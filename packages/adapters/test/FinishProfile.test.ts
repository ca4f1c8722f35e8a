/**
 * The finish profile: `strict` releases calls only on OpenAI Chat `tool_calls` and Anthropic
 * `tool_use`; `compatible` (the decoders' default) also on `stop` / `end_turn` /
 * `stop_sequence`. Checked on the whole corpus: strict changes exactly the completed turns that
 * have calls and end with a text-turn reason, into `UnexpectedFinishReason`.
 */
import { describe, expect, it } from "@effect/vitest"
import { FinishProfile } from "@toolgate/adapters"
import { Fixture } from "@toolgate/testing"
import { Effect } from "effect"

const textTurnReasons = new Set(["stop", "end_turn", "stop_sequence"])

describe("FinishProfile", () => {
  describe("on the corpus", () => {
    for (const fixture of Fixture.loadAll()) {
      it.effect(`${fixture.name}: strict differs from compatible only where a text-turn reason carries calls`, () =>
        Effect.gen(function*() {
          const chunks = Fixture.chunk(fixture.bytes, [1, 7, 3, 5, 2, 6, 4])
          const compatible = yield* Fixture.run(fixture.provider, chunks, { finishProfile: "compatible" })
          const byDefault = yield* Fixture.run(fixture.provider, chunks)
          const strict = yield* Fixture.run(fixture.provider, chunks, { finishProfile: "strict" })
          expect(Fixture.outcome(compatible)).toEqual(fixture.expected)
          expect(Fixture.outcome(byDefault)).toEqual(fixture.expected)
          const rejected = fixture.expected.outcome === "complete" && fixture.expected.toolCalls.length > 0 &&
            textTurnReasons.has(fixture.expected.finishReason ?? "")
          expect(Fixture.outcome(strict)).toEqual(
            rejected
              ? { ...fixture.expected, outcome: "error", toolCalls: [], error: "UnexpectedFinishReason" }
              : fixture.expected
          )
          if (rejected) {
            expect(strict.failure).toMatchObject({
              finishClass: "success_no_calls",
              pendingToolCalls: fixture.expected.toolCalls.length
            })
          }
        }))
    }
    it("the corpus has such a case (Gemini's OpenAI-compatible endpoint sends stop with calls)", () => {
      expect(Fixture.loadAll().some((f) => f.name === "openai-chat__gemini-compat-no-index")).toBe(true)
    })
  })

  const chat = (reason: string, withCall: boolean) =>
    Fixture.sse([
      ...(withCall
        ? [{
          data: {
            choices: [{
              index: 0,
              delta: {
                tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }]
              }
            }]
          }
        }]
        : [{ data: { choices: [{ index: 0, delta: { content: "Hello." } }] } }]),
      { data: { choices: [{ index: 0, delta: {}, finish_reason: reason }] } },
      { data: "[DONE]" }
    ])
  const anthropic = (reason: string, withCall: boolean) =>
    Fixture.sse([
      { data: { type: "message_start", message: { id: "msg_1" } } },
      ...(withCall
        ? [
          { data: { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "t", name: "f" } } },
          { data: { type: "content_block_stop", index: 0 } }
        ]
        : [
          { data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "Hello." } } },
          { data: { type: "content_block_stop", index: 0 } }
        ]),
      { data: { type: "message_delta", delta: { stop_reason: reason } } },
      { data: { type: "message_stop" } }
    ])

  it.effect.each(
    [
      ["openai-chat", chat, "tool_calls", "stop"],
      ["anthropic", anthropic, "tool_use", "end_turn"],
      ["anthropic", anthropic, "tool_use", "stop_sequence"]
    ] as const
  )(
    "%s strict: %s releases calls, %s completes a text turn and rejects calls",
    ([provider, body, tool, text]) =>
      Effect.gen(function*() {
        const strict = { finishProfile: "strict" } as const
        const runs = yield* Effect.all([
          Fixture.runText(provider, body(tool, true), strict),
          Fixture.runText(provider, body(text, false), strict),
          Fixture.runText(provider, body(text, true), strict),
          Fixture.runText(provider, body(text, true), { finishProfile: "compatible" }),
          Fixture.runText("auto", body(text, true), strict)
        ])
        expect(runs.map((r) => r.error ?? r.toolCalls.length)).toEqual([
          1,
          0,
          "UnexpectedFinishReason",
          1,
          "UnexpectedFinishReason"
        ])
      })
  )

  it("forRequest: strict for the first-party hosts, compatible elsewhere and for a named OpenAI tool_choice", () => {
    const cases: ReadonlyArray<[Parameters<typeof FinishProfile.forRequest>[0], FinishProfile.FinishProfile]> = [
      [{ url: "https://api.openai.com/v1/chat/completions", provider: "openai-chat", body: {} }, "strict"],
      [{ url: "https://API.OpenAI.com/v1/chat/completions" }, "strict"],
      [{ url: "https://api.anthropic.com/v1/messages", provider: "anthropic", body: {} }, "strict"],
      [{
        url: "https://api.anthropic.com/v1/messages",
        provider: "anthropic",
        body: { tool_choice: { type: "tool", name: "f" } }
      }, "strict"],
      [{ url: "https://api.openai.com/v1/chat/completions", body: { tool_choice: "required" } }, "strict"],
      [{
        url: "https://api.openai.com/v1/chat/completions",
        provider: "openai-chat",
        body: { tool_choice: { type: "function", function: { name: "f" } } }
      }, "compatible"],
      [{ url: "http://localhost:4000/v1/chat/completions" }, "compatible"],
      [{ url: "https://gateway.example.test/openai/v1/chat/completions" }, "compatible"],
      [{ url: "https://api.openai.com.evil.test/v1" }, "compatible"],
      [{ url: "not a url" }, "compatible"]
    ]
    for (const [request, profile] of cases) {
      expect([request.url, FinishProfile.forRequest(request)]).toEqual([request.url, profile])
    }
    expect(FinishProfile.defaultProfile).toBe("compatible")
  })
})
