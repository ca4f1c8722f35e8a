/**
 * The same gate, as a property: any turn (any text, any calls with any arguments, any finish
 * reason of the format's table), written once as a stream (`SseScript`, as the provider streams
 * it) and once as the whole JSON body the provider answers without a stream, assembles to the
 * same result under both finish profiles: the same outcome, error tag, finish reason, text and
 * released calls. For OpenAI Chat the arguments are any text, valid JSON or not (the body carries
 * them as a string, as the stream does); Anthropic's body carries them as an object, so they are
 * any JSON object there.
 */
import { describe, expect, it } from "@effect/vitest"
import { NonStreaming } from "@toolgate/adapters"
import { Fixture, Random, SseScript } from "@toolgate/testing"
import { Arbitrary, Effect, Schema, Stream } from "effect"

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

const names = ["lookup_contact", "create_task", "assign_owner"]

const CallArb = Arbitrary.all({
  name: int(0, names.length - 1),
  args: Arbitrary.schema(Schema.Record(Schema.String, Schema.Json)),
  /** OpenAI only: 0 the object's JSON, 1 a cut of it, 2 any string. */
  form: int(0, 2),
  raw: Arbitrary.schema(Schema.String)
})

const TurnArb = Arbitrary.all({
  text: Arbitrary.schema(Schema.String),
  calls: Arbitrary.array(CallArb, { maxLength: 3 }),
  finish: int(0, 4),
  seed: int(0, 2 ** 31)
})

type Turn = typeof TurnArb extends Arbitrary.Arbitrary<infer A> ? A : never

const chatReasons = ["tool_calls", "stop", "length", "content_filter", "tool_calls"]
const anthropicReasons = ["tool_use", "end_turn", "max_tokens", "refusal", "stop_sequence"]

const argumentsOf = (call: Turn["calls"][number], provider: "openai-chat" | "anthropic") => {
  const json = JSON.stringify(call.args)
  if (provider === "anthropic" || call.form === 0) return json
  return call.form === 1 ? json.slice(0, Math.max(1, json.length - 1)) : call.raw
}

const bodies = (provider: "openai-chat" | "anthropic", turn: Turn) => {
  const random = Random.make(turn.seed)
  const calls = turn.calls.map((call, k) => ({
    id: provider === "anthropic" ? `toolu_01${k}` : `call_${k}`,
    name: names[call.name]!,
    text: argumentsOf(call, provider),
    args: call.args
  }))
  const frames: Array<string> = []
  const text = turn.text === "" ? [] : SseScript.pieces(turn.text, random)
  if (provider === "openai-chat") {
    const reason = chatReasons[turn.finish]!
    SseScript.openAiChat({
      id: "chatcmpl-1",
      created: 1,
      model: "m",
      systemFingerprint: "fp",
      text,
      calls: calls.map((c) => ({ id: c.id, name: c.name, pieces: SseScript.pieces(c.text, random) })),
      finishReason: reason
    }, (frame) => frames.push(frame))
    const json = {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: turn.text === "" ? null : turn.text,
          ...(calls.length === 0 ? {} : {
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: "function",
              function: { name: c.name, arguments: c.text }
            }))
          })
        },
        finish_reason: reason
      }]
    }
    return { sse: frames.join(""), json: JSON.stringify(json, null, 2) }
  }
  const reason = anthropicReasons[turn.finish]!
  SseScript.anthropic({
    id: "msg_01",
    model: "m",
    text,
    calls: calls.map((c) => ({ id: c.id, name: c.name, pieces: SseScript.pieces(c.text, random) })),
    stopReason: reason,
    inputTokens: 1
  }, (frame) => frames.push(frame))
  const json = {
    id: "msg_01",
    type: "message",
    role: "assistant",
    model: "m",
    content: [
      ...(turn.text === "" ? [] : [{ type: "text", text: turn.text }]),
      ...calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.args }))
    ],
    stop_reason: reason,
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 }
  }
  return { sse: frames.join(""), json: JSON.stringify(json) }
}

describe("a turn as a stream and as a whole body assembles the same", () => {
  for (const provider of ["openai-chat", "anthropic"] as const) {
    it.effect.prop(
      `${provider}: the same outcome, finish reason, text and calls, under both finish profiles`,
      { turn: TurnArb },
      ({ turn }) =>
        Effect.gen(function*() {
          const { json, sse } = bodies(provider, turn)
          for (const finishProfile of ["compatible", "strict"] as const) {
            const streamed = yield* Fixture.run(provider, [Fixture.bytes(sse)], { finishProfile })
            const whole = yield* Fixture.runEvents(
              Stream.make(Fixture.bytes(json)).pipe(NonStreaming.decode(provider, { finishProfile }))
            )
            expect(Fixture.outcome(whole)).toEqual(Fixture.outcome(streamed))
          }
        }),
      { arbitrary: { runs: 200 } }
    )
  }
})
