import { describe, expect, it } from "@effect/vitest"
import { Assembler, FinishReason } from "@toolgate/core"
import { Effect, Stream } from "effect"

const finish = (reason: string) => ({
  finish: { reason, class: FinishReason.classify(FinishReason.openAiChat, reason), terminal: true }
})

describe("Assembler", () => {
  it.effect("assembles interleaved calls by index", () =>
    Effect.gen(function*() {
      const turn = yield* Stream.make(
        { text: "hi" },
        { toolCalls: [{ index: 1, id: "b", name: "g", argumentsDelta: "{\"y\"" }] },
        { toolCalls: [{ index: 0, id: "a", name: "f", argumentsDelta: "{}" }] },
        { toolCalls: [{ index: 1, argumentsDelta: ":2}" }] },
        finish("tool_calls")
      ).pipe(Assembler.assemble())
      expect(turn.text).toBe("hi")
      expect(turn.toolCalls.map((c) => [c.index, c.id, c.arguments])).toEqual([[0, "a", {}], [1, "b", { y: 2 }]])
    }))
})
