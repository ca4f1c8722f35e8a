/**
 * The fake provider's multi-step scripting: which step a request is, read from the tool results
 * its body carries in each provider's request format (the shapes of the providers' API references:
 * OpenAI Chat `tool` messages, Responses `function_call_output` items, Anthropic `tool_result`
 * blocks, Gemini `functionResponse` parts), and a plan that answers each step of a script; and a
 * cut point given as a fraction of the body.
 */
import { describe, expect, it } from "@effect/vitest"
import { FakeProvider } from "@toolgate/testing"
import { Effect } from "effect"

const call = (id: string) => ({ id, type: "function", function: { name: "create_task", arguments: "{}" } })

const bodies = {
  "openai-chat": {
    messages: [
      { role: "system", content: "You qualify leads." },
      { role: "user", content: "Lead 42." },
      { role: "assistant", content: null, tool_calls: [call("call_1"), call("call_2")] },
      { role: "tool", tool_call_id: "call_1", content: "{\"id\":\"t1\"}" },
      { role: "tool", tool_call_id: "call_2", content: "{\"id\":\"t2\"}" },
      { role: "assistant", content: "Routing.", tool_calls: [call("call_3")] },
      { role: "tool", tool_call_id: "call_3", content: "{\"error\":\"OutcomeUnknown\"}" }
    ]
  },
  "openai-responses": {
    input: [
      { role: "user", content: "Lead 42." },
      { type: "function_call", call_id: "call_1", name: "create_task", arguments: "{}" },
      { type: "function_call", call_id: "call_2", name: "create_task", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: "{}" },
      { type: "function_call_output", call_id: "call_2", output: "{}" },
      { type: "function_call", call_id: "call_3", name: "assign_owner", arguments: "{}" },
      { type: "function_call_output", call_id: "call_3", output: "{}" }
    ]
  },
  anthropic: {
    messages: [
      { role: "user", content: "Lead 42." },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_1", name: "create_task", input: {} }, {
          type: "tool_use",
          id: "toolu_2",
          name: "create_task",
          input: {}
        }]
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "{}" }, {
          type: "tool_result",
          tool_use_id: "toolu_2",
          content: "{}",
          is_error: true
        }]
      },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_3", name: "assign_owner", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_3", content: "{}" }] }
    ]
  },
  gemini: {
    contents: [
      { role: "user", parts: [{ text: "Lead 42." }] },
      { role: "model", parts: [{ functionCall: { name: "create_task", args: {} } }, { functionCall: { name: "x" } }] },
      {
        role: "user",
        parts: [{ functionResponse: { name: "create_task", response: {} } }, {
          functionResponse: { name: "x", response: {} }
        }]
      },
      { role: "model", parts: [{ functionCall: { name: "assign_owner", args: {} } }] },
      { role: "user", parts: [{ functionResponse: { name: "assign_owner", response: {} } }] }
    ]
  }
} as const

describe("FakeProvider multi-step scripting", () => {
  it.each(Object.entries(bodies))("%s: a request that sends back two steps' results is step 3", (_, body) => {
    expect(FakeProvider.toolResultsOf(body)).toBe(3)
    expect(FakeProvider.stepOf(body)).toBe(3)
  })

  it("a first request (no result, or not a known body) is step 1", () => {
    for (
      const body of [{ messages: [{ role: "user", content: "hi" }] }, { input: "hi" }, { contents: [] }, null, "x"]
    ) {
      expect(FakeProvider.stepOf(body)).toBe(1)
      expect(FakeProvider.toolResultsOf(body)).toBe(0)
    }
  })

  it("steps answers each step of the script in the format asked, the last one past its end", () => {
    const script: ReadonlyArray<FakeProvider.Scenario> = [
      { text: "one", toolCalls: [{ name: "a", arguments: {} }] },
      { text: "two" }
    ]
    const request = (body: unknown, seq = 1): FakeProvider.Request => ({
      key: "k",
      attempt: 1,
      seq,
      path: "/v1/chat/completions",
      headers: {},
      body,
      rawBody: JSON.stringify(body)
    })
    const plan = FakeProvider.steps(script, { answer: (r, step) => ({ paceMs: step * 10 + r.seq }) })
    expect(plan(request({ messages: [] }))).toEqual({ paceMs: 11, source: FakeProvider.openAiChat(script[0]!) })
    expect(plan(request(bodies["openai-chat"], 2))).toEqual({ paceMs: 32, source: FakeProvider.openAiChat(script[1]!) })
    expect(FakeProvider.steps(script, { format: "anthropic" })(request(bodies.anthropic))).toEqual({
      source: FakeProvider.anthropic(script[1]!)
    })
  })
})

describe("FakeProvider cut points", () => {
  it.live("a fraction cuts the same body at that share of its bytes", () =>
    Effect.gen(function*() {
      const scenario: FakeProvider.Scenario = {
        text: "Creating the task.",
        toolCalls: [{ name: "create_task", arguments: { lead: "lead-1", title: "Call back about pilot pricing" } }]
      }
      const provider = yield* FakeProvider.make({
        seed: 3,
        plan: (request) => ({
          source: FakeProvider.openAiChat(scenario),
          // the same request answered again with the same bytes, cut at half of them
          ...(request.seq === 2
            ? { repeatPrevious: true, fault: { _tag: "Truncate", afterBytes: { fraction: 0.5 } } }
            : {})
        })
      })
      const whole = yield* Effect.promise(() =>
        fetch(provider.url, { method: "POST", body: "{}" }).then((r) => r.text())
      )
      const cut = yield* Effect.promise(() => fetch(provider.url, { method: "POST", body: "{}" }).then((r) => r.text()))
      const log = (yield* provider.stats).log
      expect(log.map((r) => r.outcome)).toEqual(["completed", "truncated"])
      expect(log[1]!.bytesWritten).toBe(Buffer.byteLength(cut))
      expect(cut).toBe(whole.slice(0, Math.round(whole.length / 2)))
    }).pipe(Effect.scoped))
})
