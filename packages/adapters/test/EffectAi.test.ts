import { describe, expect, it } from "@effect/vitest"
import { EffectAi } from "@toolgate/adapters"
import { Assembler, AssemblyError } from "@toolgate/core"
import { Effect, Layer, Schema, Stream } from "effect"
import { AiError, LanguageModel, type Response, Tool, Toolkit } from "effect/ai"

const CreateTask = Tool.make("create_task", {
  parameters: Schema.Struct({ title: Schema.String, priority: Schema.optional(Schema.String) }),
  success: Schema.String
})
const AssignOwner = Tool.make("assign_owner", {
  parameters: Schema.Struct({ deal_id: Schema.String, owner_id: Schema.String }),
  success: Schema.String
})
const Tools = Toolkit.make(CreateTask, AssignOwner)

const usage = { inputTokens: { total: 11, cacheRead: 3 }, outputTokens: { total: 7 } }

/** A `LanguageModel` (built with effect/ai's own `LanguageModel.make`) whose stream is scripted. */
const scripted = (parts: ReadonlyArray<Response.StreamPartEncoded>, failure?: AiError.AiError) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: () => Effect.succeed([]),
      streamText: () =>
        failure === undefined
          ? Stream.fromIterable(parts)
          : Stream.concat(Stream.fromIterable(parts), Stream.fail(failure))
    })
  )

/** What an app does: stream with its toolkit, tool resolution left to toolgate, then the gate. */
const gated = LanguageModel.streamText({
  prompt: "move D-1042 forward",
  toolkit: Tools,
  disableToolCallResolution: true
}).pipe(
  EffectAi.toStreamEvents,
  Assembler.assemble()
)

const streamedCall: ReadonlyArray<Response.StreamPartEncoded> = [
  { type: "tool-params-start", id: "call_1", name: "create_task" },
  { type: "tool-params-delta", id: "call_1", delta: "{\"title\":" },
  { type: "tool-params-delta", id: "call_1", delta: "\"Send quote\"}" },
  { type: "tool-params-end", id: "call_1" },
  { type: "tool-call", id: "call_1", name: "create_task", params: { title: "Send quote" } }
]

describe("EffectAi", () => {
  it.effect("gates a LanguageModel.streamText turn end to end", () =>
    Effect.gen(function*() {
      const turn = yield* gated.pipe(Effect.provide(scripted([
        { type: "response-metadata", id: "resp_1" },
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "On it" },
        { type: "text-delta", id: "t", delta: "." },
        { type: "text-end", id: "t" },
        { type: "reasoning-delta", id: "r", delta: "not text" },
        ...streamedCall,
        { type: "tool-call", id: "call_2", name: "assign_owner", params: { deal_id: "D-1042", owner_id: "usr_7731" } },
        { type: "tool-params-start", id: "srv_1", name: "web_search", providerExecuted: true },
        { type: "tool-params-delta", id: "srv_1", delta: "{\"q\":\"x\"}" },
        { type: "finish", reason: "tool-calls", usage }
      ])))
      expect(turn.text).toBe("On it.")
      expect(turn.finishReason).toBe("tool-calls")
      expect(turn.usage).toEqual({ inputTokens: 11, cachedInputTokens: 3, outputTokens: 7 })
      expect(turn.toolCalls.map((c) => [c.id, c.name, c.argumentsText, c.arguments])).toEqual([
        ["call_1", "create_task", "{\"title\":\"Send quote\"}", { title: "Send quote" }],
        ["call_2", "assign_owner", "{\"deal_id\":\"D-1042\",\"owner_id\":\"usr_7731\"}", {
          deal_id: "D-1042",
          owner_id: "usr_7731"
        }]
      ])
    }))

  it.effect.each(
    [
      ["no finish part", [], "IncompleteStream"],
      ["a length finish", [{ type: "finish", reason: "length", usage }], "TokenLimitExceeded"],
      ["a content-filter finish", [{ type: "finish", reason: "content-filter", usage }], "UnexpectedFinishReason"],
      [
        "an error part",
        [{ type: "error", error: { _tag: "RateLimitError", message: "slow down" } }],
        "ProviderStreamError"
      ]
    ] as const
  )("%s releases no call (%s)", ([, tail, tag]) =>
    Effect.gen(function*() {
      const error = yield* gated.pipe(
        Effect.provide(scripted([...streamedCall, ...tail])),
        Effect.flip
      )
      expect(error._tag).toBe(tag)
    }))

  it.effect("streamed arguments that are not one JSON object are MalformedToolArguments, not repaired", () =>
    Effect.gen(function*() {
      const error = yield* gated.pipe(
        Effect.provide(scripted([
          { type: "tool-params-start", id: "call_1", name: "create_task" },
          { type: "tool-params-delta", id: "call_1", delta: "{\"title\": \"Send" },
          { type: "finish", reason: "tool-calls", usage }
        ])),
        Effect.flip
      )
      expect(error).toBeInstanceOf(AssemblyError.MalformedToolArguments)
    }))

  it.effect("a params delta for a call that never started, or a call renamed, is a ToolCallProtocolError", () =>
    Effect.gen(function*() {
      for (
        const parts of [
          [{ type: "tool-params-delta", id: "call_9", delta: "{}" }],
          [...streamedCall.slice(0, 4), {
            type: "tool-call",
            id: "call_1",
            name: "assign_owner",
            params: { deal_id: "D", owner_id: "u" }
          }]
        ] as const
      ) {
        const error = yield* gated.pipe(
          Effect.provide(scripted([...parts, { type: "finish", reason: "tool-calls", usage }])),
          Effect.flip
        )
        expect(error._tag).toBe("ToolCallProtocolError")
      }
    }))

  it.effect("a failure of the parts stream passes through unchanged", () =>
    Effect.gen(function*() {
      const failure = AiError.make({
        module: "Test",
        method: "streamText",
        reason: new AiError.NetworkError({
          reason: "TransportError",
          method: "POST",
          url: "https://example.test",
          description: "socket hang up"
        })
      })
      const error = yield* gated.pipe(Effect.provide(scripted(streamedCall, failure)), Effect.flip)
      expect(error).toBe(failure)
    }))

  it("translates an error part's AiError reason tag into the ProviderStreamError code", () => {
    const translate = EffectAi.translator()
    const event = translate({
      type: "error",
      error: { reason: { _tag: "RateLimitError" }, message: "slow down" }
    } as EffectAi.Part)
    expect(event?.failure).toMatchObject({
      _tag: "ProviderStreamError",
      code: "RateLimitError",
      providerMessage: "slow down"
    })
  })

  it("params JSON cannot write (nested too deeply) are a MalformedStreamEvent", () => {
    let params: Record<string, unknown> = {}
    for (let i = 0; i < 20_000; i++) params = { a: params }
    const event = EffectAi.translator()(
      { type: "tool-call", id: "c", name: "f", params, providerExecuted: false } as EffectAi.Part
    )
    expect(event?.failure?._tag).toBe("MalformedStreamEvent")
  })
})
