/**
 * Round trips through each provider's own formats: every completed turn of a provider's fixture
 * corpus (`test/fixtures/<provider>/`), assembled, then written back as the history of the next
 * request to that provider (the assistant's text and calls, a result for each call, success and
 * typed failure in turn, the user again), encodes to a body that validates against the provider's
 * request Schema (written from its API reference, excess members refused) and has the documented
 * shape: OpenAI Chat `tool_calls` whose `arguments` are the model's exact text and `tool` messages
 * with `tool_call_id`; Responses `function_call` items with the call's `call_id` and exact
 * `arguments`, `function_call_output` items; Anthropic `tool_use` blocks with the parsed `input`
 * and `tool_result` blocks first in the next user message, `is_error` on failures; Gemini
 * `functionCall` parts (without ids: Gemini sends none) and `functionResponse` parts paired by
 * name and position.
 */
import { describe, expect, it } from "@effect/vitest"
import { Provider } from "@toolgate/adapters"
import { Assembler, ModelStream } from "@toolgate/core"
import { Fixture } from "@toolgate/testing"
import { Effect, Exit, Result, Stream } from "effect"
import { Prompt } from "effect/ai"
import { encoders, validators } from "./support/Requests.js"

const resultText = (i: number) =>
  i % 2 === 0
    ? JSON.stringify({ ok: true, id: `R-${i}` })
    : JSON.stringify({ _tag: "ToolExecutionFailed", message: `call ${i} failed` })

/** The next request after an assembled turn: its text and calls, their results, the user again. */
const nextRequest = (turn: Assembler.AssembledTurn): ModelStream.ModelRequest => ({
  prompt: Prompt.make([
    { role: "user", content: "New lead L-1042 from Acme." },
    {
      role: "assistant",
      content: [
        ...(turn.text === "" ? [] : [Prompt.makePart("text", { text: turn.text })]),
        ...turn.toolCalls.map(ModelStream.toolCallPart)
      ]
    },
    ...(turn.toolCalls.length === 0 ? [] : [{
      role: "tool" as const,
      content: turn.toolCalls.map((call, i) =>
        ModelStream.toolResultPart({ id: call.id, name: call.name, isFailure: i % 2 === 1, resultText: resultText(i) })
      )
    }]),
    { role: "user", content: "What next?" }
  ])
})

type Json = Record<string, any>

/** What each provider's history must look like for the turn's calls (the documented shapes). */
const checkShape = (provider: Provider.Name, body: Json, turn: Assembler.AssembledTurn) => {
  const calls = turn.toolCalls
  switch (provider) {
    case "openai-chat": {
      const assistant = body.messages[1]
      expect(assistant.role).toBe("assistant")
      expect(assistant.content).toBe(turn.text === "" ? (calls.length > 0 ? null : []) : turn.text)
      if (calls.length === 0) return expect(assistant).not.toHaveProperty("tool_calls")
      expect(assistant.tool_calls).toEqual(calls.map((call) => ({
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: call.argumentsText }
      })))
      expect(body.messages.slice(2, 2 + calls.length)).toEqual(
        calls.map((call, i) => ({ role: "tool", tool_call_id: call.id, content: resultText(i) }))
      )
      return
    }
    case "openai-responses": {
      const items = body.input.slice(1)
      const functionCalls = items.filter((item: Json) => item.type === "function_call")
      expect(functionCalls).toEqual(calls.map((call) => ({
        type: "function_call",
        call_id: call.id,
        name: call.name,
        arguments: call.argumentsText
      })))
      expect(items.filter((item: Json) => item.type === "function_call_output")).toEqual(
        calls.map((call, i) => ({ type: "function_call_output", call_id: call.id, output: resultText(i) }))
      )
      return
    }
    case "anthropic": {
      const assistant = body.messages[1]
      const blocks = typeof assistant.content === "string" ? [] : assistant.content
      expect(blocks.filter((b: Json) => b.type === "tool_use")).toEqual(calls.map((call) => ({
        type: "tool_use",
        id: call.id,
        name: call.name,
        input: call.arguments
      })))
      if (calls.length === 0) return
      const results = body.messages[2]
      expect(results.role).toBe("user")
      expect(results.content).toEqual([
        ...calls.map((call, i) => ({
          type: "tool_result",
          tool_use_id: call.id,
          content: resultText(i),
          ...(i % 2 === 1 ? { is_error: true } : {})
        })),
        { type: "text", text: "What next?" }
      ])
      return
    }
    case "gemini": {
      const model = body.contents[1]
      expect(model.role).toBe("model")
      expect(model.parts.filter((p: Json) => p.functionCall !== undefined)).toEqual(calls.map((call) => ({
        functionCall: { ...(call.id === null ? {} : { id: call.id }), name: call.name, args: call.arguments }
      })))
      if (calls.length === 0) return
      expect(body.contents[2]).toEqual({
        role: "user",
        parts: calls.map((call, i) => ({
          functionResponse: {
            ...(call.id === null ? {} : { id: call.id }),
            name: call.name,
            response: i % 2 === 1 ? { error: JSON.parse(resultText(i)) } : { output: JSON.parse(resultText(i)) }
          }
        }))
      })
      return
    }
  }
}

describe("an assembled turn of each provider's fixtures, back into that provider's request history", () => {
  for (const provider of Provider.names) {
    const completed = Fixture.load(provider).filter((f) => f.expected.outcome === "complete")
    it("has completed turns with tool calls", () => {
      expect(completed.filter((f) => f.expected.toolCalls.length > 0).length).toBeGreaterThan(0)
    })
    for (const fixture of completed) {
      it.effect(`${provider}: ${fixture.name}`, () =>
        Effect.gen(function*() {
          const turn = yield* Stream.make(fixture.bytes).pipe(Provider.decode(provider), Assembler.assemble())
          const request = nextRequest(turn)
          const encoded = Result.getOrThrow(encoders[provider](request))
          const body = JSON.parse(JSON.stringify(encoded)) as Json
          const valid = validators[provider](body)
          if (Exit.isFailure(valid)) throw new Error(String(valid.cause))
          checkShape(provider, body, turn)
          // The same turn, assembled again, encodes to the same bytes: a replayed step asks the same.
          const again = yield* Stream.make(fixture.bytes).pipe(Provider.decode(provider), Assembler.assemble())
          expect(JSON.stringify(Result.getOrThrow(encoders[provider](nextRequest(again))))).toBe(
            JSON.stringify(encoded)
          )
        }))
    }
  }
})
