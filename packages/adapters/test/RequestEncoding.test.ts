/**
 * Request encoding: a provider-neutral `ModelRequest` as the body of an OpenAI Chat Completions,
 * an OpenAI Responses, an Anthropic Messages and a Gemini `generateContent` request. Text
 * (system, user, assistant), tools with their JSON Schemas, tool choice, the output token limit,
 * streaming or not, provider options merged last; the history of tool calls (the exact arguments
 * text) and tool results (the exact result text, success and typed failure), paired by id or,
 * without ids, by name and position; strict mode (objects closed, or `UnsupportedRequest` when a
 * schema cannot be strict); and `UnsupportedRequest` for every prompt part the encoders cannot
 * carry.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { AnthropicRequest, GeminiRequest, Provider } from "@toolgate/adapters"
import { ModelStream, ModelStreamError } from "@toolgate/core"
import { Result, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { encoders } from "./support/Requests.js"

const CreateTask = Tool.make("create_task", {
  description: "Create a follow-up task for a lead",
  parameters: Schema.Struct({ lead_id: Schema.String, title: Schema.String })
})
const Crm = Toolkit.make(CreateTask)
const parameters = Tool.getJsonSchema(CreateTask)

const request: ModelStream.ModelRequest = {
  prompt: Prompt.make([
    { role: "system", content: "You qualify inbound leads." },
    { role: "user", content: [{ type: "text", text: "New lead L-7 from Acme." }] },
    { role: "assistant", content: [{ type: "text", text: "On it." }] },
    { role: "user", content: [{ type: "text", text: "Thanks." }, { type: "text", text: "Be quick." }] }
  ]),
  tools: ModelStream.toolsOf(Crm),
  toolChoice: "required",
  maxOutputTokens: 512
}

type Format = Provider.Name
const formats = Provider.names

/** The JSON the transport sends: `undefined` members left out. */
const json = (body: unknown) => JSON.parse(JSON.stringify(body))
const encodeJson = (format: Format, r: ModelStream.ModelRequest, stream?: boolean) =>
  json(Result.getOrThrow(encoders[format](r, stream)))
const failure = (format: Format, r: ModelStream.ModelRequest) => {
  const result = encoders[format](r)
  assert(Result.isFailure(result))
  expect(result.failure).toBeInstanceOf(ModelStreamError.UnsupportedRequest)
  expect(result.failure.provider).toBe(format)
  return result.failure.reason
}

/** A model turn that called two tools, the results (one a typed failure), and the user again. */
const argsA = "{\"lead_id\": \"L-7\",\n \"title\":\"Call back\"}"
const argsB = "{\"lead_id\":\"L-7\",\"title\":\"Send \\u00e9 deck\"}"
const okText = "{\"id\":\"T-1\",\"status\":\"open\"}"
const failedText = "{\"_tag\":\"ToolExecutionFailed\",\"message\":\"the CRM refused the title\"}"
const history = (ids: readonly [string | null, string | null]) =>
  Prompt.make([
    { role: "system", content: "You qualify inbound leads." },
    { role: "user", content: "New lead L-7." },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Creating two tasks." },
        ModelStream.toolCallPart({
          id: ids[0],
          name: "create_task",
          argumentsText: argsA,
          arguments: JSON.parse(argsA)
        }),
        ModelStream.toolCallPart({
          id: ids[1],
          name: "create_task",
          argumentsText: argsB,
          arguments: JSON.parse(argsB)
        })
      ]
    },
    {
      role: "tool",
      content: [
        // Out of order on purpose: the encoders send results in the calls' order.
        ModelStream.toolResultPart({ id: ids[1], name: "create_task", isFailure: true, resultText: failedText }),
        ModelStream.toolResultPart({ id: ids[0], name: "create_task", isFailure: false, resultText: okText })
      ]
    },
    { role: "user", content: "And now?" }
  ])

describe("text, tools, tool choice, token limit, stream", () => {
  it("OpenAI Chat", () => {
    expect(encodeJson("openai-chat", request)).toEqual({
      model: "m",
      messages: [
        { role: "system", content: "You qualify inbound leads." },
        { role: "user", content: "New lead L-7 from Acme." },
        { role: "assistant", content: "On it." },
        { role: "user", content: [{ type: "text", text: "Thanks." }, { type: "text", text: "Be quick." }] }
      ],
      tools: [{
        type: "function",
        function: { name: "create_task", description: "Create a follow-up task for a lead", parameters }
      }],
      tool_choice: "required",
      max_tokens: 512,
      stream: true,
      stream_options: { include_usage: true }
    })
    // Not streaming: stream false and no stream_options (the API refuses them without a stream).
    const plain = encodeJson("openai-chat", request, false)
    expect(plain.stream).toBe(false)
    expect(plain).not.toHaveProperty("stream_options")
  })

  it("OpenAI Responses: every tool says strict, false unless asked (the API would default to true)", () => {
    expect(encodeJson("openai-responses", request)).toEqual({
      model: "m",
      input: [
        { role: "system", content: "You qualify inbound leads." },
        { role: "user", content: "New lead L-7 from Acme." },
        { role: "assistant", content: "On it." },
        { role: "user", content: [{ type: "input_text", text: "Thanks." }, { type: "input_text", text: "Be quick." }] }
      ],
      tools: [{
        type: "function",
        name: "create_task",
        description: "Create a follow-up task for a lead",
        parameters,
        strict: false
      }],
      tool_choice: "required",
      max_output_tokens: 512,
      stream: true
    })
    expect(encodeJson("openai-responses", { ...request, toolChoice: { tool: "create_task" } }, false)).toMatchObject({
      tool_choice: { type: "function", name: "create_task" },
      stream: false
    })
  })

  it("Anthropic", () => {
    expect(encodeJson("anthropic", request)).toEqual({
      model: "m",
      max_tokens: 512,
      system: "You qualify inbound leads.",
      messages: [
        { role: "user", content: "New lead L-7 from Acme." },
        { role: "assistant", content: "On it." },
        { role: "user", content: [{ type: "text", text: "Thanks." }, { type: "text", text: "Be quick." }] }
      ],
      tools: [{ name: "create_task", description: "Create a follow-up task for a lead", input_schema: parameters }],
      tool_choice: { type: "any" },
      stream: true
    })
    expect(encodeJson("anthropic", request, false).stream).toBe(false)
  })

  it("Anthropic: max_tokens from the config, else 4,096; each tool choice; several system messages are blocks", () => {
    const two = Prompt.make([{ role: "system", content: "A." }, { role: "system", content: "B." }, {
      role: "user",
      content: "Hi."
    }])
    const body = (choice: ModelStream.ToolChoice | undefined, maxOutputTokens?: number) =>
      Result.getOrThrow(AnthropicRequest.encode({ prompt: two, toolChoice: choice }, { model: "m", maxOutputTokens }))
    expect(body(undefined)).toEqual({
      model: "m",
      max_tokens: AnthropicRequest.defaultMaxOutputTokens,
      system: [{ type: "text", text: "A." }, { type: "text", text: "B." }],
      messages: [{ role: "user", content: "Hi." }],
      stream: true
    })
    expect(AnthropicRequest.defaultMaxOutputTokens).toBe(4096)
    expect(body(undefined, 64).max_tokens).toBe(64)
    expect([body("auto"), body("none"), body("required"), body({ tool: "t" })].map((b) => b.tool_choice)).toEqual([
      { type: "auto" },
      { type: "none" },
      { type: "any" },
      { type: "tool", name: "t" }
    ])
  })

  it("Gemini: systemInstruction, contents, functionDeclarations with the JSON Schema, toolConfig, generationConfig", () => {
    expect(encodeJson("gemini", request)).toEqual({
      systemInstruction: { parts: [{ text: "You qualify inbound leads." }] },
      contents: [
        { role: "user", parts: [{ text: "New lead L-7 from Acme." }] },
        { role: "model", parts: [{ text: "On it." }] },
        { role: "user", parts: [{ text: "Thanks." }, { text: "Be quick." }] }
      ],
      tools: [{
        functionDeclarations: [{
          name: "create_task",
          description: "Create a follow-up task for a lead",
          parametersJsonSchema: parameters
        }]
      }],
      toolConfig: { functionCallingConfig: { mode: "ANY" } },
      generationConfig: { maxOutputTokens: 512 }
    })
    const choice = (c: ModelStream.ToolChoice) => encodeJson("gemini", { ...request, toolChoice: c }).toolConfig
    expect([choice("auto"), choice("none"), choice({ tool: "create_task" })]).toEqual([
      { functionCallingConfig: { mode: "AUTO" } },
      { functionCallingConfig: { mode: "NONE" } },
      { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["create_task"] } }
    ])
    expect(GeminiRequest.path("gemini-2.5-flash", true)).toBe("/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    expect(GeminiRequest.path("models/gemini-2.5-flash", false)).toBe("/models/gemini-2.5-flash:generateContent")
  })

  it("OpenAI Chat: names a tool to call, and leaves out what the request does not set", () => {
    expect(encodeJson("openai-chat", {
      prompt: Prompt.make("Hi."),
      tools: [{ name: "t", parameters: { type: "object" } }],
      toolChoice: { tool: "t" }
    })).toEqual({
      model: "m",
      messages: [{ role: "user", content: "Hi." }],
      tools: [{ type: "function", function: { name: "t", parameters: { type: "object" } } }],
      tool_choice: { type: "function", function: { name: "t" } },
      stream: true,
      stream_options: { include_usage: true }
    })
    for (const format of formats) {
      expect(encodeJson(format, { prompt: Prompt.make("Hi.") })).not.toHaveProperty("tools")
    }
  })

  it("providerOptions are merged last and win; an undefined member is left out; stream stays the config's", () => {
    expect(encodeJson("openai-chat", {
      prompt: Prompt.make("Hi."),
      maxOutputTokens: 100,
      providerOptions: {
        temperature: 0.2,
        max_tokens: undefined,
        max_completion_tokens: 100,
        model: "o3",
        stream: false,
        stream_options: { include_usage: false }
      }
    })).toEqual({
      model: "o3",
      messages: [{ role: "user", content: "Hi." }],
      temperature: 0.2,
      max_completion_tokens: 100,
      stream: true,
      stream_options: { include_usage: true }
    })
    expect(encodeJson("gemini", { prompt: Prompt.make("Hi."), providerOptions: { generationConfig: { seed: 7 } } }))
      .toMatchObject({ generationConfig: { seed: 7 } })
    expect(encodeJson("openai-responses", { prompt: Prompt.make("Hi."), providerOptions: { store: false } }))
      .toMatchObject({ store: false, stream: true })
  })
})

describe("the history: assistant tool calls and tool results", () => {
  const twoCalls = history(["call_A", "call_B"])

  it("OpenAI Chat: tool_calls with the exact arguments text; one tool message per result, in call order", () => {
    const body = encodeJson("openai-chat", { prompt: twoCalls })
    expect(body.messages.slice(2)).toEqual([
      {
        role: "assistant",
        content: "Creating two tasks.",
        tool_calls: [
          { id: "call_A", type: "function", function: { name: "create_task", arguments: argsA } },
          { id: "call_B", type: "function", function: { name: "create_task", arguments: argsB } }
        ]
      },
      { role: "tool", tool_call_id: "call_A", content: okText },
      { role: "tool", tool_call_id: "call_B", content: failedText },
      { role: "user", content: "And now?" }
    ])
    // Calls without text: content null, as the API documents for an assistant message with tool_calls.
    const bare = Prompt.make([{ role: "user", content: "Go." }, {
      role: "assistant",
      content: [ModelStream.toolCallPart({ id: "c1", name: "t", argumentsText: "{}", arguments: {} })]
    }, {
      role: "tool",
      content: [ModelStream.toolResultPart({ id: "c1", name: "t", isFailure: false, resultText: "null" })]
    }])
    expect(encodeJson("openai-chat", { prompt: bare }).messages[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }]
    })
  })

  it("OpenAI Responses: function_call and function_call_output items with call_id, exact texts", () => {
    const body = encodeJson("openai-responses", { prompt: twoCalls })
    expect(body.input.slice(2)).toEqual([
      { role: "assistant", content: "Creating two tasks." },
      { type: "function_call", call_id: "call_A", name: "create_task", arguments: argsA },
      { type: "function_call", call_id: "call_B", name: "create_task", arguments: argsB },
      { type: "function_call_output", call_id: "call_A", output: okText },
      { type: "function_call_output", call_id: "call_B", output: failedText },
      { role: "user", content: "And now?" }
    ])
  })

  it("Anthropic: tool_use blocks with the parsed input; tool_result blocks first, is_error on the failure", () => {
    const body = encodeJson("anthropic", { prompt: twoCalls })
    expect(body.messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: [
          { type: "text", text: "Creating two tasks." },
          { type: "tool_use", id: "call_A", name: "create_task", input: JSON.parse(argsA) },
          { type: "tool_use", id: "call_B", name: "create_task", input: JSON.parse(argsB) }
        ]
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_A", content: okText },
          { type: "tool_result", tool_use_id: "call_B", content: failedText, is_error: true },
          { type: "text", text: "And now?" }
        ]
      }
    ])
  })

  it("Gemini: functionCall parts with ids when the model gave some; functionResponse output / error", () => {
    const body = encodeJson("gemini", { prompt: twoCalls })
    expect(body.contents.slice(1)).toEqual([
      {
        role: "model",
        parts: [
          { text: "Creating two tasks." },
          { functionCall: { id: "call_A", name: "create_task", args: JSON.parse(argsA) } },
          { functionCall: { id: "call_B", name: "create_task", args: JSON.parse(argsB) } }
        ]
      },
      {
        role: "user",
        parts: [
          { functionResponse: { id: "call_A", name: "create_task", response: { output: JSON.parse(okText) } } },
          { functionResponse: { id: "call_B", name: "create_task", response: { error: JSON.parse(failedText) } } }
        ]
      },
      { role: "user", parts: [{ text: "And now?" }] }
    ])
  })

  it("calls without a provider id (Gemini): results paired by name and position; a made-up id where one is required", () => {
    const prompt = Prompt.make([
      { role: "user", content: "Go." },
      {
        role: "assistant",
        content: [
          ModelStream.toolCallPart({ id: null, name: "lookup", argumentsText: "{\"n\":1}", arguments: { n: 1 } }),
          ModelStream.toolCallPart({ id: null, name: "create_task", argumentsText: "{\"n\":2}", arguments: { n: 2 } }),
          ModelStream.toolCallPart({ id: null, name: "lookup", argumentsText: "{\"n\":3}", arguments: { n: 3 } })
        ]
      },
      {
        role: "tool",
        content: [
          ModelStream.toolResultPart({ id: null, name: "create_task", isFailure: false, resultText: "\"two\"" }),
          ModelStream.toolResultPart({ id: null, name: "lookup", isFailure: false, resultText: "\"one\"" }),
          ModelStream.toolResultPart({ id: null, name: "lookup", isFailure: true, resultText: "\"three\"" })
        ]
      }
    ])
    expect(encodeJson("gemini", { prompt }).contents.slice(1)).toEqual([
      {
        role: "model",
        parts: [
          { functionCall: { name: "lookup", args: { n: 1 } } },
          { functionCall: { name: "create_task", args: { n: 2 } } },
          { functionCall: { name: "lookup", args: { n: 3 } } }
        ]
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "lookup", response: { output: "one" } } },
          { functionResponse: { name: "create_task", response: { output: "two" } } },
          { functionResponse: { name: "lookup", response: { error: "three" } } }
        ]
      }
    ])
    expect(encodeJson("openai-chat", { prompt }).messages.slice(2)).toEqual([
      { role: "tool", tool_call_id: "toolgate_1_0", content: "\"one\"" },
      { role: "tool", tool_call_id: "toolgate_1_1", content: "\"two\"" },
      { role: "tool", tool_call_id: "toolgate_1_2", content: "\"three\"" }
    ])
    expect(encodeJson("anthropic", { prompt }).messages[1].content.map((b: { id: string }) => b.id)).toEqual([
      "toolgate_1_0",
      "toolgate_1_1",
      "toolgate_1_2"
    ])
  })

  it("the same prompt always encodes to the same bytes (a replay sends what the first run sent)", () => {
    for (const format of formats) {
      const first = JSON.stringify(
        Result.getOrThrow(encoders[format]({ prompt: twoCalls, tools: ModelStream.toolsOf(Crm) }))
      )
      const again = JSON.stringify(Result.getOrThrow(encoders[format]({
        prompt: history(["call_A", "call_B"]),
        tools: ModelStream.toolsOf(Crm)
      })))
      expect(again).toBe(first)
    }
  })

  it("parts built without toolgate's texts: JSON of their values, as effect/ai writes them", () => {
    const prompt = Prompt.make([{ role: "user", content: "Go." }, {
      role: "assistant",
      content: [{ type: "tool-call", id: "c1", name: "t", params: { a: 1 }, providerExecuted: false }]
    }, {
      role: "tool",
      content: [{ type: "tool-result", id: "c1", name: "t", isFailure: false, result: { ok: true } }]
    }])
    expect(encodeJson("openai-chat", { prompt }).messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{\"a\":1}" } }]
      },
      { role: "tool", tool_call_id: "c1", content: "{\"ok\":true}" }
    ])
  })

  it("a result's modelOutput text replaces its JSON", () => {
    const prompt = Prompt.make([{ role: "user", content: "Go." }, {
      role: "assistant",
      content: [{ type: "tool-call", id: "c1", name: "t", params: {}, providerExecuted: false }]
    }, {
      role: "tool",
      content: [{
        type: "tool-result",
        id: "c1",
        name: "t",
        isFailure: false,
        result: { big: "…" },
        modelOutput: [{ type: "text", text: "summary" }]
      }]
    }])
    expect(encodeJson("openai-chat", { prompt }).messages[2]).toEqual({
      role: "tool",
      tool_call_id: "c1",
      content: "summary"
    })
  })
})

describe("strict mode", () => {
  const closed = {
    type: "object",
    properties: {
      lead_id: { type: "string" },
      owner: {
        anyOf: [{ type: "object", properties: { id: { type: "string" } }, required: ["id"] }, { type: "null" }]
      },
      tags: { type: "array", items: { type: "object", properties: { t: { type: "string" } }, required: ["t"] } }
    },
    required: ["lead_id", "owner", "tags"],
    additionalProperties: true
  }
  const strictTool = (schema: object): ModelStream.ToolSpec => ({
    name: "assign",
    parameters: schema as ModelStream.ToolSpec["parameters"],
    strict: true
  })
  const closedExpected = {
    type: "object",
    properties: {
      lead_id: { type: "string" },
      owner: {
        anyOf: [{
          type: "object",
          properties: { id: { type: "string" } },
          required: ["id"],
          additionalProperties: false
        }, { type: "null" }]
      },
      tags: {
        type: "array",
        items: { type: "object", properties: { t: { type: "string" } }, required: ["t"], additionalProperties: false }
      }
    },
    required: ["lead_id", "owner", "tags"],
    additionalProperties: false
  }

  it("closes every object (additionalProperties absent or true becomes false), and sends strict: true", () => {
    const r = { prompt: Prompt.make("Hi."), tools: [strictTool(closed)] }
    expect(encodeJson("openai-chat", r).tools).toEqual([{
      type: "function",
      function: { name: "assign", parameters: closedExpected, strict: true }
    }])
    expect(encodeJson("openai-responses", r).tools).toEqual([{
      type: "function",
      name: "assign",
      parameters: closedExpected,
      strict: true
    }])
    expect(encodeJson("anthropic", r).tools).toEqual([{ name: "assign", input_schema: closedExpected, strict: true }])
    // Gemini has no strict mode: the schema goes as declared.
    expect(encodeJson("gemini", r).tools[0].functionDeclarations[0]).toEqual({
      name: "assign",
      parametersJsonSchema: closed
    })
    // The declared schema is not changed.
    expect(closed.additionalProperties).toBe(true)
  })

  it("an effect Tool annotated Strict, with every property required, is sent strict", () => {
    const Assign = Tool.make("assign_owner", {
      parameters: Schema.Struct({ lead_id: Schema.String, owner: Schema.NullOr(Schema.String) })
    }).annotate(Tool.Strict, true)
    const body = encodeJson("openai-chat", {
      prompt: Prompt.make("Hi."),
      tools: ModelStream.toolsOf(Toolkit.make(Assign))
    })
    expect(body.tools[0].function).toMatchObject({
      strict: true,
      parameters: { additionalProperties: false, required: ["lead_id", "owner"] }
    })
  })

  it("a schema that cannot be strict is an UnsupportedRequest naming the tool and the first problem", () => {
    const optional = { type: "object", properties: { a: { type: "string" }, b: { type: "string" } }, required: ["a"] }
    const map = {
      type: "object",
      properties: { fields: { type: "object", additionalProperties: { type: "string" } } },
      required: ["fields"]
    }
    const oneOf = {
      type: "object",
      properties: { v: { oneOf: [{ type: "string" }, { type: "number" }] } },
      required: ["v"]
    }
    const cases: Array<readonly [Format, object, string]> = [
      [
        "openai-chat",
        optional,
        "tool assign in strict mode: #/properties/b is optional, and OpenAI's strict mode needs every property required (make it required; a value that may be absent can be required and nullable, e.g. Schema.NullOr)"
      ],
      [
        "openai-responses",
        map,
        "tool assign in strict mode: #/properties/fields is a map (additionalProperties is a schema), which strict mode cannot close"
      ],
      [
        "openai-chat",
        oneOf,
        "tool assign in strict mode: #/properties/v uses `oneOf`, which strict mode does not support"
      ],
      ["openai-chat", { type: "array" }, "tool assign in strict mode: # is not an object schema (`type: \"object\"`)"],
      [
        "anthropic",
        map,
        "tool assign in strict mode: #/properties/fields is a map (additionalProperties is a schema), which strict mode cannot close"
      ]
    ]
    for (const [format, schema, reason] of cases) {
      expect(failure(format, { prompt: Prompt.make("Hi."), tools: [strictTool(schema)] })).toBe(reason)
    }
    // Anthropic's strict mode takes optional properties.
    expect(encodeJson("anthropic", { prompt: Prompt.make("Hi."), tools: [strictTool(optional)] }).tools[0])
      .toMatchObject({ strict: true, input_schema: { ...optional, additionalProperties: false } })
    // Not strict: sent as declared.
    expect(
      encodeJson("openai-chat", { prompt: Prompt.make("Hi."), tools: [{ name: "t", parameters: map as never }] })
        .tools[0].function.parameters
    ).toEqual(map)
  })
})

describe("UnsupportedRequest", () => {
  const call = (id: string) => ModelStream.toolCallPart({ id, name: "t", argumentsText: "{}", arguments: {} })
  const answer = (id: string) => ModelStream.toolResultPart({ id, name: "t", isFailure: false, resultText: "1" })
  const cases: Array<readonly [string, Prompt.Prompt, string]> = [
    [
      "a file part",
      Prompt.make([{ role: "user", content: [{ type: "file", mediaType: "image/png", data: new Uint8Array([1]) }] }]),
      "message 0 (user): a file part"
    ],
    [
      "a tool result with no call before it",
      Prompt.make([{ role: "user", content: "Hi." }, { role: "tool", content: [answer("call_1")] }]),
      "message 1 (tool): a result for t, but the message before made no tool call"
    ],
    [
      "a result that answers no call",
      Prompt.make([{ role: "user", content: "Hi." }, { role: "assistant", content: [call("c1")] }, {
        role: "tool",
        content: [answer("c2")]
      }]),
      "message 2 (tool): a result for call c2 (t), which no open call of message 1 matches"
    ],
    [
      "a second result for a call",
      Prompt.make([{ role: "user", content: "Hi." }, { role: "assistant", content: [call("c1")] }, {
        role: "tool",
        content: [answer("c1"), answer("c1")]
      }]),
      "message 2 (tool): a second result for call c1 (t)"
    ],
    [
      "a call without a result",
      Prompt.make([{ role: "user", content: "Hi." }, { role: "assistant", content: [call("c1"), call("c2")] }, {
        role: "tool",
        content: [answer("c1")]
      }, { role: "user", content: "Well?" }]),
      "message 1 (assistant): tool call c2 (t) has no result in the tool messages after it"
    ],
    [
      "a call at the end of the prompt",
      Prompt.make([{ role: "user", content: "Hi." }, { role: "assistant", content: [call("c1")] }]),
      "message 1 (assistant): tool call c1 (t) has no result in the tool messages after it"
    ],
    [
      "a provider-executed call",
      Prompt.make([{ role: "user", content: "Hi." }, {
        role: "assistant",
        content: [{ type: "tool-call", id: "ws", name: "web_search", params: {}, providerExecuted: true }]
      }]),
      "message 1 (assistant): a provider-executed tool call"
    ],
    [
      "arguments that cannot be written as JSON",
      Prompt.make([{ role: "user", content: "Hi." }, {
        role: "assistant",
        content: [{ type: "tool-call", id: "c", name: "t", params: { n: 1n }, providerExecuted: false }]
      }]),
      "message 1 (assistant): a tool call (t) whose arguments cannot be written as JSON"
    ]
  ]
  for (const [label, prompt, reason] of cases) {
    it(`${label}: every format refuses it before anything is sent`, () => {
      for (const format of formats) {
        expect(failure(format, { prompt })).toBe(reason)
        const result = encoders[format]({ prompt })
        assert(Result.isFailure(result))
        expect(result.failure.message).toBe(`the ${format} request cannot carry ${reason}`)
      }
    })
  }

  it("arguments that are not a JSON object: fine as OpenAI's text, refused where the format takes an object", () => {
    const prompt = Prompt.make([{ role: "user", content: "Hi." }, {
      role: "assistant",
      content: [ModelStream.toolCallPart({ id: "c1", name: "t", argumentsText: "{\"a\":", arguments: {} })]
    }, {
      role: "tool",
      content: [ModelStream.toolResultPart({ id: "c1", name: "t", isFailure: true, resultText: "1" })]
    }])
    expect(Result.isSuccess(encoders["openai-chat"]({ prompt }))).toBe(true)
    expect(Result.isSuccess(encoders["openai-responses"]({ prompt }))).toBe(true)
    expect(failure("anthropic", { prompt })).toBe("tool call c1 (t): its arguments are not a JSON object")
    expect(failure("gemini", { prompt })).toBe("tool call c1 (t): its arguments are not a JSON object")
  })

  it("an assistant's reasoning is left out, its text kept", () => {
    const prompt = Prompt.make([{ role: "user", content: "Hi." }, {
      role: "assistant",
      content: [{ type: "reasoning", text: "thinking" }, { type: "text", text: "Hello." }]
    }])
    expect(encodeJson("openai-chat", { prompt }).messages).toEqual([
      { role: "user", content: "Hi." },
      { role: "assistant", content: "Hello." }
    ])
  })
})
