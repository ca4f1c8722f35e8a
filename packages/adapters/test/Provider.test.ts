import { describe, expect, it } from "@effect/vitest"
import { Provider } from "@toolgate/adapters"
import { Fixture } from "@toolgate/testing"
import { Effect } from "effect"

const detect = (data: unknown, event = "message") =>
  Provider.detect({ event, data: typeof data === "string" ? data : JSON.stringify(data) })

describe("Provider", () => {
  it("lists every format, auto excluded", () => {
    expect(Provider.names).toEqual(["openai-chat", "openai-responses", "anthropic", "gemini"])
  })

  describe("detect", () => {
    it.each(
      [
        ["[DONE]", "openai-chat"],
        [{ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [] }, "openai-chat"],
        [{ choices: [{ index: 0, delta: { content: "x" } }] }, "openai-chat"],
        [{ error: { message: "rate limited", type: "requests", code: "429" } }, "openai-chat"],
        [{ type: "response.created", sequence_number: 0, response: {} }, "openai-responses"],
        [{ type: "response.output_text.delta", delta: "x" }, "openai-responses"],
        [{ type: "error", sequence_number: 3, error: { type: "server_error" } }, "openai-responses"],
        [{ type: "message_start", message: { id: "msg_1" } }, "anthropic"],
        [{ type: "ping" }, "anthropic"],
        [{ type: "content_block_delta", index: 0, delta: {} }, "anthropic"],
        [{ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, "anthropic"],
        [{ candidates: [{ content: { parts: [{ text: "x" }] } }] }, "gemini"],
        [{ promptFeedback: { blockReason: "SAFETY" } }, "gemini"],
        [{ usageMetadata: { promptTokenCount: 1 } }, "gemini"],
        [{ error: { code: 503, message: "over capacity", status: "UNAVAILABLE" } }, "gemini"]
      ] as const
    )("%j is %s", (data, name) => {
      expect(detect(data)).toBe(name)
    })

    it.each([["not json"], [{}], [[1, 2]], [{ type: "unknown_type" }], [42], [{ error: "text" }]] as const)(
      "%j is not recognised",
      (data) => {
        expect(detect(data)).toBeUndefined()
      }
    )
  })

  describe("auto", () => {
    it.effect("an undetectable first event is a MalformedStreamEvent and detects nothing", () =>
      Effect.gen(function*() {
        const detected: Array<string> = []
        const result = yield* Fixture.runText(
          "auto",
          Fixture.sse([{ data: { hello: "world" } }, { data: { choices: [{ delta: {}, finish_reason: "stop" }] } }]),
          { onDetected: (name) => detected.push(name) }
        )
        expect([result.error, detected]).toEqual(["MalformedStreamEvent", []])
      }))

    it.effect("a body that is only a raw JSON error reads as a ProviderStreamError", () =>
      Effect.gen(function*() {
        const result = yield* Fixture.runText(
          "auto",
          "{\n  \"error\": {\n    \"message\": \"invalid api key\"\n  }\n}\n"
        )
        expect(result.error).toBe("ProviderStreamError")
      }))

    it.effect("after detecting a format that reads no unframed text, unframed lines change nothing", () =>
      Effect.gen(function*() {
        const result = yield* Fixture.runText(
          "auto",
          Fixture.sse([{ data: { choices: [{ index: 0, delta: { content: "hi" }, finish_reason: "stop" }] } }]) +
            "{\"error\": {\"message\": \"ignored\"}}\n"
        )
        expect([result.outcome, result.text]).toEqual(["complete", "hi"])
      }))

    it.effect("an empty body is IncompleteStream and detects nothing", () =>
      Effect.gen(function*() {
        const detected: Array<string> = []
        const result = yield* Fixture.runText("auto", "", { onDetected: (name) => detected.push(name) })
        expect([result.error, detected]).toEqual(["IncompleteStream", []])
      }))
  })
})
