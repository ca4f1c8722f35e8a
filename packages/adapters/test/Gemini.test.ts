import { describe, expect, it } from "@effect/vitest"
import { Fixture } from "@toolgate/testing"
import { Effect } from "effect"

// Builders for GenerateContentResponse chunks (https://ai.google.dev/api/generate-content).
const chunk = (parts: ReadonlyArray<unknown> | undefined, extra: object = {}, candidate: object = {}) => ({
  data: {
    candidates: [{ ...(parts === undefined ? {} : { content: { parts, role: "model" } }), index: 0, ...candidate }],
    ...extra
  }
})
const finish = (reason: string, parts?: ReadonlyArray<unknown>) => chunk(parts, {}, { finishReason: reason })
const call = (name: string, args?: object, id?: string) => ({
  functionCall: { name, ...(args === undefined ? {} : { args }), ...(id === undefined ? {} : { id }) }
})
const text = (t: string, thought?: boolean) => (thought === undefined ? { text: t } : { text: t, thought })
const open = (name: string) => ({ functionCall: { name, willContinue: true } })
const partial = (entries: ReadonlyArray<unknown>, willContinue = true) => ({
  functionCall: { partialArgs: entries, ...(willContinue ? { willContinue: true } : {}) }
})
const close = { functionCall: {} }

const body = (frames: ReadonlyArray<Fixture.Frame>) => Fixture.sse(frames, "\r\n")
const run = (frames: ReadonlyArray<Fixture.Frame>) => Fixture.runText("gemini", body(frames))

describe("Gemini", () => {
  describe("function calls", () => {
    it.effect("every functionCall part is its own call, never merged, ids null unless sent", () =>
      Effect.gen(function*() {
        const result = yield* run([
          chunk([call("create_task", { title: "a" }), call("create_task", { title: "b" })]),
          chunk([call("create_task", { title: "c" }, "fc-7")]),
          chunk([call("get_pipeline_summary")]),
          finish("STOP", [text("")])
        ])
        expect(result.toolCalls).toEqual([
          { id: null, name: "create_task", arguments: { title: "a" } },
          { id: null, name: "create_task", arguments: { title: "b" } },
          { id: "fc-7", name: "create_task", arguments: { title: "c" } },
          { id: null, name: "get_pipeline_summary", arguments: {} }
        ])
      }))

    it.effect("a functionCall after the finish chunk is a ToolCallProtocolError", () =>
      Effect.gen(function*() {
        const result = yield* run([finish("STOP", [text("ok")]), chunk([call("f", {})])])
        expect([result.error, result.finishReason]).toEqual(["ToolCallProtocolError", "STOP"])
      }))

    it.effect("text after the finish is harmless", () =>
      Effect.gen(function*() {
        const result = yield* run([finish("STOP", [text("a")]), chunk([text("b")])])
        expect([result.outcome, result.text]).toEqual(["complete", "ab"])
      }))

    it.effect.each(
      [
        ["a functionCall without a name", [{ functionCall: { args: {} } }]],
        ["a functionCall with array args", [{ functionCall: { name: "f", args: [1] } }]],
        ["a functionCall with a numeric name", [{ functionCall: { name: 1 } }]],
        ["a functionCall with a numeric id", [{ functionCall: { name: "f", id: 1 } }]],
        ["a functionCall that is a string", [{ functionCall: "f()" }]],
        ["a part that is not an object", [3]],
        ["a text that is not a string", [{ text: {} }]]
      ] as const
    )("%s is a MalformedStreamEvent", ([, parts]) =>
      Effect.gen(function*() {
        const result = yield* run([chunk(parts), finish("STOP")])
        expect(result.error).toBe("MalformedStreamEvent")
      }))

    it.effect("a bad part leaves out later calls of its chunk but its text and finish reason still count", () =>
      Effect.gen(function*() {
        const result = yield* run([chunk([text("a"), { functionCall: { args: {} } }, call("f", {}), text("b")], {}, {
          finishReason: "STOP"
        })])
        expect([result.error, result.text, result.finishReason]).toEqual(["MalformedStreamEvent", "ab", "STOP"])
      }))
  })

  describe("chunks", () => {
    it.effect("reads only the candidate with index 0 and skips thought text", () =>
      Effect.gen(function*() {
        const result = yield* run([
          {
            data: {
              candidates: [{ index: 1, content: { parts: [text("other")] } }, { content: { parts: [text("mine")] } }]
            }
          },
          chunk([text("plan", true), text("!")]),
          finish("STOP")
        ])
        expect(result.text).toBe("mine!")
      }))

    it.effect("takes the finish reason from a candidate without content, and the usage", () =>
      Effect.gen(function*() {
        const turn = yield* Fixture.assembleText(
          "gemini",
          body([chunk([text("x")]), {
            data: {
              candidates: [{ finishReason: "STOP", index: 0 }],
              usageMetadata: {
                promptTokenCount: 3,
                candidatesTokenCount: 4,
                totalTokenCount: 9,
                cachedContentTokenCount: 1
              }
            }
          }])
        )
        expect([turn.finishReason, turn.usage]).toEqual([
          "STOP",
          { inputTokens: 3, outputTokens: 4, totalTokens: 9, cachedInputTokens: 1 }
        ])
      }))

    it.effect.each(
      [
        ["STOP", "complete", null],
        ["MAX_TOKENS", "error", "TokenLimitExceeded"],
        ["SAFETY", "error", "UnexpectedFinishReason"],
        ["UNEXPECTED_TOOL_CALL", "error", "UnexpectedFinishReason"]
      ] as const
    )("finishReason %s gives %s", ([reason, outcome, error]) =>
      Effect.gen(function*() {
        const result = yield* run([finish(reason, [text("t")])])
        expect([result.outcome, result.error, result.finishReason]).toEqual([outcome, error, reason])
      }))

    it.effect("a blocked prompt's blockReason is the finish reason", () =>
      Effect.gen(function*() {
        const result = yield* run([{ data: { promptFeedback: { blockReason: "SAFETY" } } }])
        expect([result.error, result.finishReason]).toEqual(["UnexpectedFinishReason", "SAFETY"])
      }))

    it.effect("a body without a finishReason is IncompleteStream", () =>
      Effect.gen(function*() {
        const result = yield* run([chunk([call("f", {})])])
        expect(result.error).toBe("IncompleteStream")
      }))

    it.effect.each(
      [
        ["candidates that are not an array", { candidates: {} }],
        ["a candidate that is not an object", { candidates: [1] }],
        ["content that is not an object", { candidates: [{ content: "x" }] }],
        ["parts that are not an array", { candidates: [{ content: { parts: {} } }] }],
        ["a finishReason that is not a string", { candidates: [{ finishReason: 1 }] }],
        ["a payload that is not an object", [1]],
        ["a payload that is not JSON", "{"]
      ] as const
    )("%s is a MalformedStreamEvent", ([, data]) =>
      Effect.gen(function*() {
        const result = yield* run([{ data }, finish("STOP")])
        expect(result.error).toBe("MalformedStreamEvent")
      }))

    it.effect("an error payload as an SSE event is a ProviderStreamError; its text still counts", () =>
      Effect.gen(function*() {
        const result = yield* run([{
          data: {
            error: { code: 429, message: "quota", status: "RESOURCE_EXHAUSTED" },
            candidates: [{ content: { parts: [text("partial")] } }]
          }
        }])
        expect(result.failure).toMatchObject({
          _tag: "ProviderStreamError",
          code: "RESOURCE_EXHAUSTED",
          providerMessage: "quota"
        })
        expect(result.text).toBe("partial")
      }))
  })

  describe("the unframed error tail", () => {
    const events = body([chunk([text("Sure,")]), chunk([text(" one moment")])])
    const tail = [
      "{",
      "  \"error\": {",
      "    \"code\": 503,",
      "    \"message\": \"over capacity: {retry} [later]\",",
      "    \"status\": \"UNAVAILABLE\",",
      "    \"details\": [",
      "      {",
      "        \"@type\": \"type.googleapis.com/google.rpc.ErrorInfo\"",
      "      }",
      "    ]",
      "  }",
      "}"
    ]

    it.effect.each([["LF", "\n"], ["CRLF", "\r\n"], ["CR", "\r"]] as const)(
      "is a ProviderStreamError with %s line ends, with or without a final line end",
      ([, eol]) =>
        Effect.gen(function*() {
          for (const final of [eol, ""]) {
            const result = yield* Fixture.runText("gemini", events + tail.join(eol) + final)
            expect(Fixture.outcome(result)).toEqual({
              outcome: "error",
              finishReason: null,
              text: "Sure, one moment",
              toolCalls: [],
              error: "ProviderStreamError"
            })
            expect(result.failure).toMatchObject({ code: "UNAVAILABLE" })
          }
        })
    )

    it.effect("is found wherever the reads split the bytes", () =>
      Effect.gen(function*() {
        const bytes = Fixture.bytes(events + tail.join("\r\n"))
        for (let at = 0; at <= bytes.length; at++) {
          const result = yield* Fixture.run("gemini", [bytes.subarray(0, at), bytes.subarray(at)])
          expect(result.error).toBe("ProviderStreamError")
        }
      }))

    it.effect("arrives where it completes: after it, no event is read", () =>
      Effect.gen(function*() {
        const result = yield* Fixture.runText(
          "gemini",
          events + "{\"error\": {\"message\": \"boom\"}}\n\n" + body([finish("STOP")])
        )
        expect([result.error, result.finishReason]).toEqual(["ProviderStreamError", null])
      }))

    it.effect("unframed lines that are not an error object are dropped, as an SSE parser would", () =>
      Effect.gen(function*() {
        const result = yield* Fixture.runText(
          "gemini",
          "garbage line\n}\n{\"note\": \"no error here\"}\n{\n" + body([chunk([text("a")]), finish("STOP")])
        )
        expect([result.outcome, result.text]).toEqual(["complete", "a"])
      }))
  })

  describe("Vertex streamed arguments", () => {
    it.effect("builds nested objects, arrays, quoted names, numbers, booleans and nulls", () =>
      Effect.gen(function*() {
        const result = yield* run([
          chunk([open("create_task")]),
          chunk([partial([{ jsonPath: "$.title", stringValue: "Kick", willContinue: true }])]),
          chunk([
            partial([{ jsonPath: "$.title", stringValue: "off" }, { jsonPath: "$.owner.email", stringValue: "a@b" }])
          ]),
          chunk([partial([
            { jsonPath: "$.items[0].sku", stringValue: "K-1" },
            { jsonPath: "$.items[0]['qty']", numberValue: 2 },
            { jsonPath: "$.items[1][\"sku\"]", stringValue: "K-2" },
            { jsonPath: "$['odd key\\'s']", boolValue: false },
            { jsonPath: "$.note", nullValue: null },
            { jsonPath: "$.__proto__", stringValue: "data" }
          ])]),
          chunk([close]),
          finish("STOP", [text("")])
        ])
        expect(result.outcome).toBe("complete")
        const args = result.toolCalls[0]!.arguments as Record<string, unknown>
        expect(JSON.stringify(args)).toBe(
          JSON.stringify({
            title: "Kickoff",
            owner: { email: "a@b" },
            items: [{ sku: "K-1", qty: 2 }, { sku: "K-2" }],
            "odd key's": false,
            note: null,
            ["__proto__"]: "data"
          })
        )
        expect(Object.getPrototypeOf(args)).toBe(Object.prototype)
      }))

    it.effect("closes on the first nameless part without willContinue, even one carrying partialArgs", () =>
      Effect.gen(function*() {
        const result = yield* run([
          chunk([open("f"), partial([{ jsonPath: "$.a", numberValue: 1 }], false), call("g", { b: 2 })]),
          finish("STOP")
        ])
        expect(result.toolCalls).toEqual([
          { id: null, name: "f", arguments: { a: 1 } },
          { id: null, name: "g", arguments: { b: 2 } }
        ])
      }))

    it.effect.each(
      [
        ["a named functionCall while one is open", [open("f"), call("g", {})]],
        ["a second open while one is open", [open("f"), open("g")]],
        ["partialArgs with no call open", [partial([{ jsonPath: "$.a", numberValue: 1 }])]]
      ] as const
    )("%s is a ToolCallProtocolError", ([, parts]) =>
      Effect.gen(function*() {
        const result = yield* run([chunk(parts), chunk([close]), finish("STOP")])
        expect(result.error).toBe("ToolCallProtocolError")
      }))

    it.effect.each(
      [
        ["no jsonPath", [{ stringValue: "x" }]],
        ["a wildcard path", [{ jsonPath: "$.*", stringValue: "x" }]],
        ["the root", [{ jsonPath: "$", stringValue: "x" }]],
        ["a path without $", [{ jsonPath: "a.b", stringValue: "x" }]],
        ["no value", [{ jsonPath: "$.a" }]],
        ["two values", [{ jsonPath: "$.a", stringValue: "x", numberValue: 1 }]],
        ["a mistyped value", [{ jsonPath: "$.a", numberValue: "1" }]],
        ["a non-finite number", [{ jsonPath: "$.a", numberValue: null }]],
        ["a number after a string at one path", [{ jsonPath: "$.a", stringValue: "x" }, {
          jsonPath: "$.a",
          numberValue: 1
        }]],
        ["a member below a string", [{ jsonPath: "$.a", stringValue: "x" }, { jsonPath: "$.a.b", stringValue: "y" }]],
        ["an array index past the next element", [{ jsonPath: "$.a[1]", stringValue: "x" }]],
        ["an index on an object", [{ jsonPath: "$.a.b", stringValue: "x" }, { jsonPath: "$.a[0]", stringValue: "y" }]],
        ["an entry that is not an object", [1]]
      ] as const
    )("an unusable partialArgs entry (%s) is a MalformedStreamEvent", ([, entries]) =>
      Effect.gen(function*() {
        const result = yield* run([chunk([open("f")]), chunk([partial(entries)]), chunk([close]), finish("STOP")])
        expect(result.error).toBe("MalformedStreamEvent")
      }))

    it.effect("partialArgs that is not an array is a MalformedStreamEvent", () =>
      Effect.gen(function*() {
        const result = yield* run([chunk([open("f"), { functionCall: { partialArgs: {} } }]), finish("STOP")])
        expect(result.error).toBe("MalformedStreamEvent")
      }))

    it.effect.each(
      [
        ["STOP", "MalformedToolArguments"],
        ["MAX_TOKENS", "TokenLimitExceeded"],
        ["SAFETY", "UnexpectedFinishReason"]
      ] as const
    )("a call still open at finish %s gives %s", ([reason, error]) =>
      Effect.gen(function*() {
        const result = yield* run([
          chunk([open("create_task"), partial([{ jsonPath: "$.title", stringValue: "Kick", willContinue: true }])]),
          finish(reason)
        ])
        expect([result.error, result.finishReason]).toEqual([error, reason])
        if (error === "MalformedToolArguments") {
          expect(result.failure).toMatchObject({ toolName: "create_task", excerpt: "{\"title\":\"Kick\"" })
        }
      }))

    it.effect("a call still open when the body ends is IncompleteStream", () =>
      Effect.gen(function*() {
        const result = yield* run([chunk([open("f")])])
        expect(result.error).toBe("IncompleteStream")
      }))

    it.effect("continuing a call after it was cut by the finish is a ToolCallProtocolError", () =>
      Effect.gen(function*() {
        const result = yield* run([
          chunk([open("f")]),
          finish("STOP"),
          chunk([partial([{ jsonPath: "$.a", numberValue: 1 }])])
        ])
        expect(result.error).toBe("ToolCallProtocolError")
      }))
  })
})
