/**
 * Request encoding as properties: any prompt of system, user and assistant text, tool calls (with
 * or without provider ids, their arguments any JSON object written with any whitespace) and
 * their results (success or typed failure, any JSON, in any order in the tool message), with any
 * tools and tool choice, encodes, for each of the four formats, to JSON that validates against
 * that provider's request Schema (written from its API reference; excess members refused), and
 * keeps the history's invariants:
 *
 * - every result answers a call of the assistant turn right before it, every call is answered
 *   once, in the calls' order (OpenAI Chat `tool_call_id`, Responses `call_id`, Anthropic
 *   `tool_use_id` with the `tool_result` blocks first in their user message, Gemini
 *   `functionResponse` by name and position);
 * - the arguments are the model's exact text where the format takes text (OpenAI Chat,
 *   Responses) and its parsed object where it takes an object (Anthropic, Gemini); the results
 *   are the stored exact text (OpenAI Chat, Responses, Anthropic) or its parsed value (Gemini),
 *   a failure flagged where the format can flag it (Anthropic `is_error`, Gemini `error`);
 * - encoding is deterministic: the same prompt gives the same bytes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Provider } from "@toolgate/adapters"
import { ModelStream } from "@toolgate/core"
import { Arbitrary, Effect, Result, Schema } from "effect"
import { Prompt } from "effect/ai"
import { encoders, validators } from "./support/Requests.js"

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

const names = ["lookup_contact", "create_task", "assign_owner"] as const

/** One call as generated: its name, whether the provider gave it an id, its arguments and how they are written. */
const CallArb = Arbitrary.all({
  name: int(0, names.length - 1),
  withId: Arbitrary.schema(Schema.Boolean),
  args: Arbitrary.schema(Schema.Record(Schema.String, Schema.Json)),
  indent: int(0, 3),
  result: Arbitrary.schema(Schema.Json),
  failed: Arbitrary.schema(Schema.Boolean),
  order: int(0, 1000)
})

const RoundArb = Arbitrary.all({
  user: Arbitrary.array(Arbitrary.schema(Schema.String), { minLength: 1, maxLength: 2 }),
  text: Arbitrary.array(Arbitrary.schema(Schema.String), { maxLength: 2 }),
  calls: Arbitrary.array(CallArb, { maxLength: 3 })
})

const PromptArb = Arbitrary.all({
  system: Arbitrary.array(Arbitrary.schema(Schema.String), { maxLength: 2 }),
  rounds: Arbitrary.array(RoundArb, { minLength: 1, maxLength: 3 }),
  tools: Arbitrary.array(
    Arbitrary.all({ name: int(0, names.length - 1), described: Arbitrary.schema(Schema.Boolean) }),
    { maxLength: 3 }
  ),
  choice: int(0, 4),
  maxOutputTokens: Arbitrary.schema(
    Schema.UndefinedOr(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 8192 })))
  )
})

interface Generated {
  readonly request: ModelStream.ModelRequest
  /** Per round: its calls as written (id, name, exact arguments text, parsed value) and results. */
  readonly rounds: ReadonlyArray<
    ReadonlyArray<{
      readonly id: string | null
      readonly name: string
      readonly argumentsText: string
      readonly args: Record<string, unknown>
      readonly resultText: string
      readonly failed: boolean
    }>
  >
}

const indents = [undefined, 1, 2, "\t"] as const

const build = (input: typeof PromptArb extends Arbitrary.Arbitrary<infer A> ? A : never): Generated => {
  const messages: Array<Prompt.Message> = input.system.map((content) => Prompt.makeMessage("system", { content }))
  const rounds = input.rounds.map((round, r) => {
    messages.push(Prompt.makeMessage("user", { content: round.user.map((text) => Prompt.makePart("text", { text })) }))
    const calls = round.calls.map((call, k) => {
      const argumentsText = JSON.stringify(call.args, null, indents[call.indent])
      return {
        id: call.withId ? `call_${r}_${k}` : null,
        name: names[call.name]!,
        argumentsText,
        args: JSON.parse(argumentsText) as Record<string, unknown>,
        resultText: JSON.stringify(call.result),
        failed: call.failed,
        order: call.order
      }
    })
    messages.push(Prompt.makeMessage("assistant", {
      content: [
        ...round.text.map((text) => Prompt.makePart("text", { text })),
        ...calls.map((call) =>
          ModelStream.toolCallPart({
            id: call.id,
            name: call.name,
            argumentsText: call.argumentsText,
            arguments: call.args
          })
        )
      ]
    }))
    if (calls.length > 0) {
      // Results in any order: the encoders put them back in the calls' order. Results of calls
      // without an id keep their relative order per name (that is how they are paired): their
      // slots in the shuffled order are filled with their calls in call order.
      const shuffled = calls.toSorted((a, b) => a.order - b.order)
      for (const name of names) {
        const anonymous = calls.filter((call) => call.id === null && call.name === name)
        let next = 0
        shuffled.forEach((call, i) => {
          if (call.id === null && call.name === name) shuffled[i] = anonymous[next++]!
        })
      }
      messages.push(Prompt.makeMessage("tool", {
        content: shuffled.map((call) =>
          ModelStream.toolResultPart({
            id: call.id,
            name: call.name,
            isFailure: call.failed,
            resultText: call.resultText
          })
        )
      }))
    }
    return calls
  })
  const toolNames = [...new Set(input.tools.map((t) => names[t.name]!))]
  const tools = toolNames.map((name, i) => ({
    name,
    ...(input.tools[i]?.described === true ? { description: `${name} for the CRM` } : {}),
    parameters: { type: "object", properties: { lead_id: { type: "string" } }, required: ["lead_id"] } as const
  }))
  const choices: ReadonlyArray<ModelStream.ToolChoice | undefined> = [
    undefined,
    "auto",
    "none",
    "required",
    toolNames.length > 0 ? { tool: toolNames[0]! } : "auto"
  ]
  return {
    request: {
      prompt: Prompt.fromMessages(messages),
      tools,
      toolChoice: choices[input.choice],
      maxOutputTokens: input.maxOutputTokens
    },
    rounds
  }
}

type Json = Record<string, any>

/** The history's invariants, per format, against what was generated. */
const checkHistory = (provider: Provider.Name, body: Json, generated: Generated) => {
  const calls = generated.rounds.flat()
  switch (provider) {
    case "openai-chat": {
      const sent = body.messages.filter((m: Json) => m.role === "assistant").flatMap((m: Json) => m.tool_calls ?? [])
      expect(sent.map((c: Json) => c.function.arguments)).toEqual(calls.map((c) => c.argumentsText))
      const ids = sent.map((c: Json) => c.id)
      expect(new Set(ids).size).toBe(ids.length)
      // Each run of tool messages answers the assistant message before it, call by call.
      body.messages.forEach((m: Json, i: number) => {
        if (m.tool_calls === undefined) return
        const answers = body.messages.slice(i + 1, i + 1 + m.tool_calls.length)
        expect(answers.map((a: Json) => [a.role, a.tool_call_id])).toEqual(
          m.tool_calls.map((c: Json) => ["tool", c.id])
        )
      })
      expect(body.messages.filter((m: Json) => m.role === "tool").map((m: Json) => m.content)).toEqual(
        calls.map((c) => c.resultText)
      )
      return
    }
    case "openai-responses": {
      const items = body.input as Array<Json>
      expect(items.filter((i) => i.type === "function_call").map((i) => i.arguments)).toEqual(
        calls.map((c) => c.argumentsText)
      )
      expect(items.filter((i) => i.type === "function_call_output").map((i) => i.output)).toEqual(
        calls.map((c) => c.resultText)
      )
      items.forEach((item, i) => {
        if (item.type !== "function_call_output") return
        expect(items.slice(0, i).some((c) => c.type === "function_call" && c.call_id === item.call_id)).toBe(true)
      })
      return
    }
    case "anthropic": {
      const messages = body.messages as Array<Json>
      const uses = messages.filter((m) => m.role === "assistant" && Array.isArray(m.content)).flatMap((m) =>
        m.content.filter((b: Json) => b.type === "tool_use")
      )
      expect(uses.map((u: Json) => u.input)).toEqual(calls.map((c) => c.args))
      messages.forEach((m, i) => {
        const ids = Array.isArray(m.content) && m.role === "assistant"
          ? m.content.filter((b: Json) => b.type === "tool_use").map((b: Json) => b.id)
          : []
        if (ids.length === 0) return
        const next = messages[i + 1]!
        expect(next.role).toBe("user")
        // The tool_result blocks come first, in the calls' order.
        expect(next.content.slice(0, ids.length).map((b: Json) => [b.type, b.tool_use_id])).toEqual(
          ids.map((id: string) => ["tool_result", id])
        )
      })
      const results = messages.flatMap((m) =>
        Array.isArray(m.content) ? m.content.filter((b: Json) => b.type === "tool_result") : []
      )
      expect(results.map((b: Json) => [b.content, b.is_error === true])).toEqual(
        calls.map((c) => [c.resultText, c.failed])
      )
      return
    }
    case "gemini": {
      const contents = body.contents as Array<Json>
      const functionCalls = contents.flatMap((c) => c.parts.filter((p: Json) => p.functionCall !== undefined))
      expect(functionCalls.map((p: Json) => [p.functionCall.name, p.functionCall.args])).toEqual(
        calls.map((c) => [c.name, c.args])
      )
      contents.forEach((content, i) => {
        const made = content.parts.filter((p: Json) => p.functionCall !== undefined)
        if (made.length === 0) return
        const next = contents[i + 1]!
        expect(next.parts.map((p: Json) => [p.functionResponse.name, p.functionResponse.id])).toEqual(
          made.map((p: Json) => [p.functionCall.name, p.functionCall.id])
        )
      })
      const responses = contents.flatMap((c) => c.parts.filter((p: Json) => p.functionResponse !== undefined))
      expect(responses.map((p: Json) => p.functionResponse.response)).toEqual(
        calls.map((c) => c.failed ? { error: JSON.parse(c.resultText) } : { output: JSON.parse(c.resultText) })
      )
      return
    }
  }
}

describe("any prompt of text, calls and results", () => {
  for (const provider of Provider.names) {
    const validate = validators[provider]
    it.effect.prop(
      `${provider}: encodes to JSON that validates against the request Schema, with the history's invariants`,
      { input: PromptArb },
      ({ input }) =>
        Effect.sync(() => {
          const generated = build(input)
          const encoded = encoders[provider](generated.request)
          if (Result.isFailure(encoded)) throw new Error(`refused: ${String(encoded.failure)}`)
          const text = JSON.stringify(encoded.success)
          const body = JSON.parse(text) as Json
          const checked = validate(body)
          if (checked._tag === "Failure") throw new Error(`${String(checked.cause)}\n${text}`)
          checkHistory(provider, body, generated)
          expect(JSON.stringify(Result.getOrThrow(encoders[provider](build(input).request)))).toBe(text)
        }),
      { arbitrary: { runs: 150 } }
    )
  }
})
