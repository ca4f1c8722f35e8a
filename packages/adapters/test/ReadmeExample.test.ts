/**
 * The README's request example runs: `test/readme/tool-request.ts` (the README's block, verbatim)
 * against the fake provider on 127.0.0.1, reached through the `OPENAI_BASE_URL` it reads. The
 * provider refuses the first, streaming request with OpenAI's 400 for a model that does not
 * stream; the example's `fallback` policy asks again without a stream. What went over the wire
 * carries both tools (the strict one closed), the step-1 call with the model's exact arguments
 * text and its stored result; the example's program returns the next step's validated call.
 */
import { expect, it } from "@effect/vitest"
import { FakeProvider } from "@toolgate/testing"
import { Effect } from "effect"

it.live("the README's request example sends the tools and the history, and falls back to no stream", () =>
  Effect.gen(function*() {
    const seen: Array<FakeProvider.Request> = []
    const fake = yield* FakeProvider.make({
      plan: (request) => {
        seen.push(request)
        return {
          source: FakeProvider.openAiChat({
            toolCalls: [{ name: "create_task", arguments: { lead_id: "L-1042", title: "Send pricing" } }]
          }),
          form: "asked",
          fault: { _tag: "StreamRejected" }
        }
      }
    })
    process.env.OPENAI_BASE_URL = `${fake.url}/v1`
    process.env.OPENAI_API_KEY = "sk-readme-test"
    // What the example prints (and the log lines of its fallback, which effect's logger prints).
    const log: Array<Array<unknown>> = []
    const original = console.log
    console.log = (...args: Array<unknown>) => log.push(args)
    const example = yield* Effect.promise(() => import("../../../test/readme/tool-request.js")).pipe(
      Effect.ensuring(Effect.sync(() => {
        delete process.env.OPENAI_BASE_URL
        delete process.env.OPENAI_API_KEY
      }))
    )
    const calls = yield* example.program
    expect(calls.map((call) => [call.name, call.params])).toEqual([
      ["create_task", { lead_id: "L-1042", title: "Send pricing" }]
    ])
    // The import ran the example too (its last statement), which prints the calls: wait for it.
    yield* Effect.gen(function*() {
      while (!log.some((args) => Array.isArray(args[0]))) yield* Effect.sleep("10 millis")
    }).pipe(Effect.timeout("10 seconds"), Effect.ensuring(Effect.sync(() => (console.log = original))))
    expect(log.filter((args) => Array.isArray(args[0]))).toEqual([[[
      "create_task {\"lead_id\":\"L-1042\",\"title\":\"Send pricing\"}"
    ]]])
    // Each run: the streaming request refused, then the same request without a stream.
    expect(seen.filter(FakeProvider.asksForStream).length).toBe(2)
    const plain = seen.filter((r) => !FakeProvider.asksForStream(r))
    expect(plain.length).toBe(2)
    expect(plain[0]!.rawBody).toBe(plain[1]!.rawBody)
    const body = plain[0]!.body as {
      messages: Array<{ role: string; tool_calls?: Array<{ function: { arguments: string } }>; content: unknown }>
      tools: Array<{ function: { name: string; strict?: boolean; parameters: { additionalProperties?: boolean } } }>
    }
    expect(body.tools.map((t) => [t.function.name, t.function.strict, t.function.parameters.additionalProperties]))
      .toEqual([["lookup_contact", undefined, true], ["create_task", true, false]])
    expect(body.messages[2]!.tool_calls![0]!.function.arguments).toBe("{\"email\": \"dana@acme.io\"}")
    expect(body.messages[3]).toEqual({
      role: "tool",
      tool_call_id: "call_1",
      content: "{\"lead_id\":\"L-1042\",\"owner\":null}"
    })
    expect(plain[0]!.headers.authorization).toBe("Bearer sk-readme-test")
  }))
