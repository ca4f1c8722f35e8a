/**
 * One body, one lifecycle (`test/fixtures/README.md` §2–§5), rule by rule for each provider: the
 * end event closes the body and nothing after it is read; a second response mixed in is a
 * `ToolCallProtocolError`; a Responses call cannot change once closed and its terminal snapshot
 * must agree with the stream; an Anthropic body opens with `message_start`; `data: [DONE]` is
 * ignored outside openai-chat; an untyped Anthropic error payload is a `ProviderStreamError`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Provider } from "@toolgate/adapters"
import { Fixture } from "@toolgate/testing"
import { Effect, Stream } from "effect"

const run = (provider: Provider.Name, frames: ReadonlyArray<Fixture.Frame>) =>
  Fixture.runText(provider, Fixture.sse(frames))

/** What a failed run reports, or its released calls' names when it completed. */
const verdict = (result: Fixture.Run) =>
  result.outcome === "complete"
    ? {
      outcome: "complete",
      finishReason: result.finishReason,
      text: result.text,
      calls: result.toolCalls.map((c) => c.name)
    }
    : { outcome: result.error, finishReason: result.finishReason, text: result.text, released: result.released }

describe("openai-chat: data: [DONE] ends the body", () => {
  const chunk = (delta: object, finish: string | null = null) => ({
    data: { id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] }
  })
  const call = chunk({
    tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }]
  })
  const done = { data: "[DONE]" }

  it.effect("a finish chunk after [DONE] is not read: the unfinished turn stays unfinished", () =>
    Effect.gen(function*() {
      const result = yield* run("openai-chat", [
        chunk({ content: "Hi" }),
        call,
        done,
        chunk({ content: "!" }, "tool_calls")
      ])
      expect(verdict(result)).toEqual({
        outcome: "ToolCallProtocolError",
        finishReason: null,
        text: "Hi",
        released: false
      })
      expect(result.failure?.message).toContain("after data: [DONE]")
    }))

  it.effect("a second response spliced in after [DONE] releases neither", () =>
    Effect.gen(function*() {
      const first = [chunk({ content: "A" }), call, chunk({}, "tool_calls"), done]
      const result = yield* run("openai-chat", [...first, ...first])
      expect(verdict(result)).toEqual({
        outcome: "ToolCallProtocolError",
        finishReason: "tool_calls",
        text: "A",
        released: false
      })
    }))

  it.effect("a repeated [DONE], comments and blank lines after it are harmless", () =>
    Effect.gen(function*() {
      const body = Fixture.sse([call, chunk({}, "tool_calls"), done, done]) + ": keep-alive\n\n\n\n"
      expect(verdict(yield* Fixture.runText("openai-chat", body))).toEqual({
        outcome: "complete",
        finishReason: "tool_calls",
        text: "",
        calls: ["f"]
      })
    }))

  it.effect("[DONE] is not a finish, and without [DONE] a finished turn is complete", () =>
    Effect.gen(function*() {
      expect((yield* run("openai-chat", [call, done])).error).toBe("IncompleteStream")
      expect((yield* run("openai-chat", [call, chunk({}, "tool_calls")])).outcome).toBe("complete")
    }))
})

describe("openai-responses", () => {
  let sequence = 0
  const ev = (type: string, fields: object = {}) => ({
    event: type,
    data: { type, sequence_number: sequence++, ...fields }
  })
  const created = (id = "resp_1") => ev("response.created", { response: { id, status: "in_progress", output: [] } })
  const item = (id: string, callId: string, name: string, args = "") => ({
    id,
    type: "function_call",
    status: "completed",
    arguments: args,
    call_id: callId,
    name
  })
  const added = (index: number, id: string, callId: string, name: string) =>
    ev("response.output_item.added", {
      output_index: index,
      item: { ...item(id, callId, name), status: "in_progress" }
    })
  const delta = (index: number, itemId: string, d: string) =>
    ev("response.function_call_arguments.delta", { output_index: index, item_id: itemId, delta: d })
  const argsDone = (index: number, itemId: string, args: string) =>
    ev("response.function_call_arguments.done", { output_index: index, item_id: itemId, arguments: args })
  const itemDone = (index: number, id: string, callId: string, name: string, args: string) =>
    ev("response.output_item.done", { output_index: index, item: item(id, callId, name, args) })
  const completed = (output: ReadonlyArray<object> = [], id = "resp_1") =>
    ev("response.completed", { response: { id, status: "completed", output } })

  const args = "{\"cmd\":\"rm -rf build\"}"
  const streamed = [
    added(0, "fc_1", "call_1", "shell"),
    delta(0, "fc_1", "{\"cmd\":"),
    delta(0, "fc_1", "\"rm -rf build\"}"),
    argsDone(0, "fc_1", args),
    itemDone(0, "fc_1", "call_1", "shell", args)
  ]

  describe("a closed call cannot change", () => {
    it.effect.each(
      [
        ["a delta after function_call_arguments.done", [
          added(0, "fc_1", "call_1", "shell"),
          delta(0, "fc_1", "{\"cmd\":\"rm -rf build"),
          argsDone(0, "fc_1", "{\"cmd\":\"rm -rf build"),
          delta(0, "fc_1", " /\"}")
        ]],
        ["a delta after output_item.done", [...streamed, delta(0, "fc_1", " ")]],
        ["a .done after output_item.done", [...streamed, argsDone(0, "fc_1", args)]],
        ["a second output_item.done", [...streamed, itemDone(0, "fc_1", "call_1", "shell", args)]]
      ] as const
    )("%s is a ToolCallProtocolError", ([, frames]) =>
      Effect.gen(function*() {
        const result = yield* run("openai-responses", [created(), ...frames, completed()])
        expect(verdict(result)).toMatchObject({ outcome: "ToolCallProtocolError", finishReason: null, released: false })
      }))
  })

  describe("the terminal snapshot must agree with the stream", () => {
    it.effect("it supplies the arguments when the stream carried none", () =>
      Effect.gen(function*() {
        const result = yield* run("openai-responses", [
          created(),
          added(0, "fc_1", "call_1", "shell"),
          itemDone(0, "fc_1", "call_1", "shell", ""),
          completed([item("fc_1", "call_1", "shell", args)])
        ])
        expect(result.outcome).toBe("complete")
        expect(result.toolCalls).toEqual([{ id: "call_1", name: "shell", arguments: { cmd: "rm -rf build" } }])
      }))

    it.effect("pairs by call_id when the snapshot entry has no item id", () =>
      Effect.gen(function*() {
        const { id: _, ...noId } = item("fc_1", "call_1", "shell", args)
        const result = yield* run("openai-responses", [created(), ...streamed, completed([noId])])
        expect(result.outcome).toBe("complete")
      }))

    it.effect("an empty output, or empty snapshot arguments, check nothing", () =>
      Effect.gen(function*() {
        expect((yield* run("openai-responses", [created(), ...streamed, completed([])])).outcome).toBe("complete")
        const empty = yield* run("openai-responses", [
          created(),
          ...streamed,
          completed([item("fc_1", "call_1", "shell")])
        ])
        expect(empty.outcome).toBe("complete")
      }))

    it.effect.each(
      [
        ["other arguments", [item("fc_1", "call_1", "shell", "{\"cmd\":\"rm -rf /\"}")]],
        ["another name", [item("fc_1", "call_1", "exec", args)]],
        ["another call_id", [item("fc_1", "call_2", "shell", args)]],
        ["a call the stream did not carry", [item("fc_1", "call_1", "shell", args), item("fc_9", "call_9", "x", "{}")]],
        ["the streamed call left out", [{ id: "msg_1", type: "message", content: [] }]],
        ["the same call twice", [item("fc_1", "call_1", "shell", args), item("fc_1", "call_1", "shell", args)]]
      ] as const
    )(
      "a snapshot with %s is a ToolCallProtocolError, reporting the terminal status",
      ([, output]) =>
        Effect.gen(function*() {
          const result = yield* run("openai-responses", [created(), ...streamed, completed(output)])
          expect(verdict(result)).toMatchObject({ outcome: "ToolCallProtocolError", finishReason: "completed" })
        })
    )

    it.effect.each(
      [
        ["an output that is not an array", { not: "an array" }],
        ["an entry that is not an object", [1]],
        ["arguments that are not a string", [{ ...item("fc_1", "call_1", "shell"), arguments: { cmd: 1 } }]]
      ] as const
    )("%s is a MalformedStreamEvent", ([, output]) =>
      Effect.gen(function*() {
        const result = yield* run("openai-responses", [
          created(),
          ...streamed,
          ev("response.completed", { response: { id: "resp_1", status: "completed", output } })
        ])
        expect(result.error).toBe("MalformedStreamEvent")
      }))
  })

  describe("one response per body", () => {
    it.effect("a second response.created spliced in before the terminal event releases neither", () =>
      Effect.gen(function*() {
        const result = yield* run("openai-responses", [
          created("resp_1"),
          ...streamed,
          created("resp_2"),
          added(1, "fc_2", "call_2", "shell"),
          completed([])
        ])
        expect(verdict(result)).toMatchObject({ outcome: "ToolCallProtocolError", finishReason: null, released: false })
      }))

    it.effect("a terminal event for another response is read to its end (its status counts) and fails", () =>
      Effect.gen(function*() {
        const result = yield* run("openai-responses", [created("resp_1"), ...streamed, completed([], "resp_2")])
        expect(verdict(result)).toMatchObject({ outcome: "ToolCallProtocolError", finishReason: "completed" })
      }))

    it.effect("repeats of the same id are fine, and a body may name its id first anywhere", () =>
      Effect.gen(function*() {
        const inProgress = ev("response.in_progress", { response: { id: "resp_1", status: "in_progress" } })
        expect((yield* run("openai-responses", [created(), inProgress, ...streamed, inProgress, completed()])).outcome)
          .toBe("complete")
        expect((yield* run("openai-responses", [...streamed, completed()])).outcome).toBe("complete")
      }))

    it.effect("a response id that is not a string is a MalformedStreamEvent", () =>
      Effect.gen(function*() {
        const result = yield* run("openai-responses", [
          created(),
          ev("response.in_progress", { response: { id: 7, status: "in_progress" } })
        ])
        expect(result.error).toBe("MalformedStreamEvent")
      }))
  })

  it.effect("data: [DONE] is ignored anywhere, before the terminal event and after it", () =>
    Effect.gen(function*() {
      const done = { data: "[DONE]" }
      const result = yield* run("openai-responses", [done, created(), done, ...streamed, done, completed(), done, done])
      expect(result.outcome).toBe("complete")
    }))
})

describe("anthropic", () => {
  const ev = (type: string, fields: object = {}) => ({ event: type, data: { type, ...fields } })
  const start = (id = "msg_1") => ev("message_start", { message: { id, content: [], usage: { input_tokens: 3 } } })
  const textBlock = ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } })
  const text = (t: string) => ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: t } })
  const tool = [
    ev("content_block_start", { index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "f", input: {} } }),
    ev("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: "{\"a\":1}" } }),
    ev("content_block_stop", { index: 1 })
  ]
  const stopReason = (reason: string | null) => ev("message_delta", { delta: { stop_reason: reason } })
  const messageStop = ev("message_stop")
  const ping = { event: "ping", data: "{\"type\": \"ping\"}" }

  it.effect("a stop_reason after message_stop does not rescue it: ToolCallProtocolError, finishReason null", () =>
    Effect.gen(function*() {
      const result = yield* run("anthropic", [start(), ...tool, messageStop, stopReason("tool_use"), messageStop])
      expect(verdict(result)).toEqual({
        outcome: "ToolCallProtocolError",
        finishReason: null,
        text: "",
        released: false
      })
    }))

  it.effect("nothing after message_stop is read: a relay's footer text does not count", () =>
    Effect.gen(function*() {
      const result = yield* run("anthropic", [
        start(),
        textBlock,
        text("Done."),
        stopReason("end_turn"),
        messageStop,
        ping,
        ev("content_block_start", { index: 1, content_block: { type: "text", text: "" } })
      ])
      expect(verdict(result)).toEqual({
        outcome: "ToolCallProtocolError",
        finishReason: "end_turn",
        text: "Done.",
        released: false
      })
    }))

  it.effect("after message_stop pings, [DONE], comments and blank lines are fine", () =>
    Effect.gen(function*() {
      const body =
        Fixture.sse([start(), ...tool, stopReason("tool_use"), messageStop, ping, { data: "[DONE]" }, ping]) +
        ": bye\n\n"
      expect(verdict(yield* Fixture.runText("anthropic", body))).toMatchObject({ outcome: "complete", calls: ["f"] })
    }))

  it.effect.each(
    [
      ["content_block_start", [textBlock, text("Hi")], null],
      ["a text delta (for a block never started: its text is not read either)", [text("Hi")], null],
      ["an unknown event type", [ev("message_resumed")], null],
      ["message_delta", [stopReason("tool_use")], "tool_use"],
      ["message_stop", [messageStop], null]
    ] as const
  )(
    "a body that opens (after pings) with %s is a ToolCallProtocolError, read to its end",
    ([, frames, reason]) =>
      Effect.gen(function*() {
        const result = yield* run("anthropic", [ping, ...frames, start(), ...tool, stopReason("tool_use"), messageStop])
        expect(verdict(result)).toEqual({
          outcome: "ToolCallProtocolError",
          finishReason: reason,
          text: "",
          released: false
        })
      })
  )

  it.effect("an error before message_start stays a ProviderStreamError", () =>
    Effect.gen(function*() {
      const result = yield* run("anthropic", [
        ping,
        ev("error", { error: { type: "overloaded_error", message: "Overloaded" } })
      ])
      expect(result.failure).toMatchObject({ _tag: "ProviderStreamError", code: "overloaded_error" })
    }))

  it.effect.each(
    [
      ["mid-message", [start(), textBlock, text("Hi")]],
      ["as the first event", []]
    ] as const
  )("an error payload without a type (LiteLLM after its timeout) is a ProviderStreamError with its message: %s", ([
    ,
    frames
  ]) =>
    Effect.gen(function*() {
      const untyped = {
        data: {
          error: { message: "litellm.Timeout: Connection timed out after 20.0 seconds.", type: "timeout", code: 408 }
        }
      }
      const result = yield* run("anthropic", [...frames, untyped, stopReason("end_turn"), messageStop])
      expect(result.failure).toMatchObject({
        _tag: "ProviderStreamError",
        code: "timeout",
        providerMessage: "litellm.Timeout: Connection timed out after 20.0 seconds."
      })
    }))

  it.effect("an untyped payload that is not an error is still a MalformedStreamEvent", () =>
    Effect.gen(function*() {
      expect((yield* run("anthropic", [start(), { data: { error: null } }])).error).toBe("MalformedStreamEvent")
      expect((yield* run("anthropic", [start(), { data: { hello: 1 } }])).error).toBe("MalformedStreamEvent")
    }))

  it.effect("data: [DONE] before and inside the message is ignored", () =>
    Effect.gen(function*() {
      const done = { data: "[DONE]" }
      const result = yield* run("anthropic", [done, start(), done, ...tool, done, stopReason("tool_use"), messageStop])
      expect(result.outcome).toBe("complete")
    }))
})

describe("gemini", () => {
  const chunk = (parts: ReadonlyArray<object>, finishReason?: string) => ({
    data: { candidates: [{ content: { parts, role: "model" }, index: 0, ...(finishReason ? { finishReason } : {}) }] }
  })

  it.effect("data: [DONE] is ignored anywhere, even between the lines of an unframed error tail", () =>
    Effect.gen(function*() {
      const done = { data: "[DONE]" }
      const ok = yield* run("gemini", [
        done,
        chunk([{ text: "Hi" }]),
        done,
        chunk([{ functionCall: { name: "f" } }], "STOP"),
        done
      ])
      expect(verdict(ok)).toMatchObject({ outcome: "complete", calls: ["f"] })
      const tail = Fixture.sse([chunk([{ text: "Hi" }])]) + "{\n  \"error\": {\ndata: [DONE]\n\n" +
        "    \"code\": 503, \"message\": \"over capacity\", \"status\": \"UNAVAILABLE\"\n  }\n}\n"
      const failed = yield* Fixture.runText("gemini", tail)
      expect(failed.failure).toMatchObject({ _tag: "ProviderStreamError", providerMessage: "over capacity" })
    }))
})

describe("the end event is marked on the core event", () => {
  const ends = (provider: Provider.Name, body: string) =>
    Stream.make(Fixture.bytes(body)).pipe(
      Provider.decode(provider),
      Stream.runCollect,
      Effect.map((events) => events.flatMap((e, i) => e.end === true ? [i] : []))
    )

  it.effect.each(
    [
      ["openai-chat", "openai-chat__single-tool"],
      ["openai-responses", "openai-responses__single-tool"],
      ["anthropic", "anthropic__single-tool"],
      ["gemini", "gemini__single-tool"]
    ] as const
  )("%s: exactly one event, the last, is the end", ([provider, name]) =>
    Effect.gen(function*() {
      const fixture = Fixture.load(provider).find((f) => f.name === name)!
      const events = yield* Stream.make(fixture.bytes).pipe(Provider.decode(provider), Stream.runCollect)
      const marked = events.flatMap((e, i) => e.end === true ? [i] : [])
      expect(marked).toEqual([events.length - 1])
      expect(yield* ends(provider, new TextDecoder().decode(fixture.bytes))).toEqual(marked)
    }))
})

describe("auto: data: [DONE] does not pick the format", () => {
  it.effect.each(
    [
      ["openai-responses", "openai-responses__single-tool", "complete"],
      ["anthropic", "anthropic__single-tool", "complete"],
      ["gemini", "gemini__single-tool", "complete"],
      ["openai-chat", "openai-chat__single-tool", "ToolCallProtocolError"]
    ] as const
  )(
    "%s: a body that opens with [DONE] reads as it does with the provider named",
    ([provider, name, expected]) =>
      Effect.gen(function*() {
        const fixture = Fixture.load(provider).find((f) => f.name === name)!
        const body = "data: [DONE]\n\n" + new TextDecoder().decode(fixture.bytes)
        const detected: Array<Provider.Name> = []
        const auto = yield* Fixture.runText("auto", body, { onDetected: (n) => detected.push(n) })
        const named = yield* Fixture.runText(provider, body)
        expect(detected).toEqual([provider])
        expect(Fixture.outcome(auto)).toEqual(Fixture.outcome(named))
        expect(auto.error ?? auto.outcome).toBe(expected)
      })
  )

  it.effect("a body of nothing but [DONE] is OpenAI Chat's, and incomplete", () =>
    Effect.gen(function*() {
      const detected: Array<Provider.Name> = []
      const result = yield* Fixture.runText("auto", "data: [DONE]\n\ndata: [DONE]\n\n", {
        onDetected: (n) => detected.push(n)
      })
      expect([detected, result.error]).toEqual([["openai-chat"], "IncompleteStream"])
    }))
})
