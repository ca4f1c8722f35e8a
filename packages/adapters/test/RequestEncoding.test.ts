/**
 * Request encoding: a provider-neutral `ModelRequest` as the body of an OpenAI Chat Completions
 * stream and of an Anthropic Messages stream (system and user text, assistant text, tools with
 * their JSON Schemas, tool choice, the output token limit, the stream options, provider options
 * merged last), and `UnsupportedRequest` for every prompt part the encoders do not carry yet.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { AnthropicRequest, OpenAiChatRequest } from "@toolgate/adapters"
import { ModelStream, ModelStreamError } from "@toolgate/core"
import { Result, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"

const CreateTask = Tool.make("create_task", {
  description: "Create a follow-up task for a lead",
  parameters: Schema.Struct({ lead_id: Schema.String, title: Schema.String })
})
const Crm = Toolkit.make(CreateTask)

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

const parameters = Tool.getJsonSchema(CreateTask)

describe("OpenAiChatRequest.encode", () => {
  it("writes messages, tools, tool choice, max_tokens and the stream options", () => {
    const body = Result.getOrThrow(OpenAiChatRequest.encode(request, { model: "gpt-4.1-mini" }))
    expect(body).toEqual({
      model: "gpt-4.1-mini",
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
  })

  it("names a tool to call, sends strict when asked, and leaves out what the request does not set", () => {
    const body = Result.getOrThrow(OpenAiChatRequest.encode({
      prompt: Prompt.make("Hi."),
      tools: [{ name: "t", parameters: { type: "object" }, strict: true }],
      toolChoice: { tool: "t" }
    }, { model: "m" }))
    expect(body).toEqual({
      model: "m",
      messages: [{ role: "user", content: "Hi." }],
      tools: [{ type: "function", function: { name: "t", parameters: { type: "object" }, strict: true } }],
      tool_choice: { type: "function", function: { name: "t" } },
      stream: true,
      stream_options: { include_usage: true }
    })
    expect(Result.getOrThrow(OpenAiChatRequest.encode({ prompt: Prompt.make("Hi.") }, { model: "m" }))).not
      .toHaveProperty(
        "tools"
      )
  })

  it("merges providerOptions last: they win, and an undefined member is left out of the JSON", () => {
    const body = Result.getOrThrow(OpenAiChatRequest.encode({
      prompt: Prompt.make("Hi."),
      maxOutputTokens: 100,
      providerOptions: { temperature: 0.2, max_tokens: undefined, max_completion_tokens: 100, model: "o3" }
    }, { model: "m" }))
    expect(JSON.parse(JSON.stringify(body))).toEqual({
      model: "o3",
      messages: [{ role: "user", content: "Hi." }],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
      max_completion_tokens: 100
    })
  })
})

describe("AnthropicRequest.encode", () => {
  it("writes system, messages, tools, tool choice, max_tokens and stream", () => {
    const body = Result.getOrThrow(AnthropicRequest.encode(request, { model: "claude-sonnet-4-5" }))
    expect(body).toEqual({
      model: "claude-sonnet-4-5",
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
  })

  it("takes max_tokens from the config, else 4,096; maps each tool choice; several system messages are blocks", () => {
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
})

describe("UnsupportedRequest", () => {
  const unsupported = [
    [
      "a file part",
      Prompt.make([{
        role: "user",
        content: [{ type: "file", mediaType: "image/png", data: new Uint8Array([1]) }]
      }]),
      "message 0 (user): a file part"
    ],
    [
      "an assistant's tool call",
      Prompt.make([{ role: "user", content: "Hi." }, {
        role: "assistant",
        content: [{ type: "tool-call", id: "call_1", name: "t", params: {}, providerExecuted: false }]
      }]),
      "message 1 (assistant): a tool-call part"
    ],
    [
      "a tool message",
      Prompt.make([{ role: "user", content: "Hi." }, {
        role: "tool",
        content: [{ type: "tool-result", id: "call_1", name: "t", isFailure: false, result: {} }]
      }]),
      "message 1 (tool): a tool message (tool results are not encoded yet)"
    ]
  ] as const

  for (const [label, prompt, reason] of unsupported) {
    it(`${label} is an UnsupportedRequest naming the message and the part, for both formats`, () => {
      for (
        const [provider, result] of [
          ["openai-chat", OpenAiChatRequest.encode({ prompt }, { model: "m" })],
          ["anthropic", AnthropicRequest.encode({ prompt }, { model: "m" })]
        ] as const
      ) {
        assert(Result.isFailure(result))
        expect(result.failure).toBeInstanceOf(ModelStreamError.UnsupportedRequest)
        expect(result.failure).toMatchObject({ provider, reason })
        expect(result.failure.message).toBe(`the ${provider} request cannot carry ${reason}`)
      }
    })
  }

  it("an assistant's reasoning is left out, its text kept", () => {
    const prompt = Prompt.make([{ role: "user", content: "Hi." }, {
      role: "assistant",
      content: [{ type: "reasoning", text: "thinking" }, { type: "text", text: "Hello." }]
    }])
    const body = Result.getOrThrow(OpenAiChatRequest.encode({ prompt }, { model: "m" }))
    expect(body.messages).toEqual([{ role: "user", content: "Hi." }, { role: "assistant", content: "Hello." }])
  })
})
