/**
 * The model-stream interface's helpers and errors: `toolsOf` (name, description, JSON Schema and
 * strict mode of each tool of a toolkit, in order), the history parts (`toolCallPart`,
 * `toolResultPart`: the exact JSON texts they keep, and what `argumentsTextOf` / `resultTextOf`
 * read from parts built without them), and the `ModelStreamError` classes (their tags, fields and
 * messages, which the inspect JSON and the error table show) with their guards.
 */
import { describe, expect, it } from "@effect/vitest"
import { AssemblyError, ModelStream, ModelStreamError } from "@toolgate/core"
import { Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"

describe("ModelStream.toolsOf", () => {
  it("gives each tool's name, description, parameters as JSON Schema and strict mode, in toolkit order", () => {
    const CreateTask = Tool.make("create_task", {
      description: "Create a follow-up task",
      parameters: Schema.Struct({ lead_id: Schema.String, due: Schema.optional(Schema.String) })
    })
    const Ping = Tool.make("ping").annotate(Tool.Strict, true)
    const tools = ModelStream.toolsOf(Toolkit.make(CreateTask, Ping))
    expect(tools.map((t) => t.name)).toEqual(["create_task", "ping"])
    expect(tools[0]).toEqual({
      name: "create_task",
      description: "Create a follow-up task",
      parameters: Tool.getJsonSchema(CreateTask)
    })
    expect(tools[0]!.parameters).toMatchObject({ type: "object", required: ["lead_id"] })
    expect(tools[1]).toMatchObject({ name: "ping", strict: true })
    expect(tools[1]).not.toHaveProperty("description")
  })
})

describe("ModelStream history parts", () => {
  it("toolCallPart keeps the arguments text exactly; a call without a provider id gets the empty id", () => {
    const text = "{ \"lead_id\" : \"L-7\",\n  \"title\":\"Call back\" }"
    const part = ModelStream.toolCallPart({
      id: null,
      name: "create_task",
      argumentsText: text,
      arguments: JSON.parse(text)
    })
    expect(part).toMatchObject({
      type: "tool-call",
      id: "",
      name: "create_task",
      params: { lead_id: "L-7", title: "Call back" },
      providerExecuted: false,
      options: { toolgate: { argumentsText: text } }
    })
    expect(ModelStream.argumentsTextOf(part)).toBe(text)
    // The part survives effect/ai's own Prompt codec (a journal may store the prompt as JSON).
    const prompt = Prompt.make([{ role: "assistant", content: [part] }])
    const again = Schema.decodeUnknownSync(Prompt.Prompt)(Schema.encodeSync(Prompt.Prompt)(prompt))
    const [message] = again.content
    expect(message!.role).toBe("assistant")
    expect(ModelStream.argumentsTextOf((message as Prompt.AssistantMessage).content[0] as Prompt.ToolCallPart)).toBe(
      text
    )
  })

  it("toolResultPart keeps the result text exactly, with its parsed value (or the text when it is not JSON)", () => {
    const ok = ModelStream.toolResultPart({ id: "call_1", name: "t", isFailure: false, resultText: "{\"id\":\"T-1\"}" })
    expect(ok).toMatchObject({ type: "tool-result", id: "call_1", isFailure: false, result: { id: "T-1" } })
    expect(ModelStream.resultTextOf(ok)).toBe("{\"id\":\"T-1\"}")
    const failed = ModelStream.toolResultPart({ id: null, name: "t", isFailure: true, resultText: "not json" })
    expect(failed).toMatchObject({ id: "", isFailure: true, result: "not json" })
    expect(ModelStream.resultTextOf(failed)).toBe("not json")
  })

  it("parts built without the texts: JSON.stringify of their values, or undefined when they cannot be written", () => {
    const call = Prompt.makePart("tool-call", { id: "c", name: "t", params: { a: 1 }, providerExecuted: false })
    expect(ModelStream.argumentsTextOf(call)).toBe("{\"a\":1}")
    expect(ModelStream.argumentsTextOf(Prompt.makePart("tool-call", {
      id: "c",
      name: "t",
      params: undefined,
      providerExecuted: false
    }))).toBe("{}")
    const result = Prompt.makePart("tool-result", {
      id: "c",
      name: "t",
      isFailure: false,
      result: [1, "x"],
      providerExecuted: false
    })
    expect(ModelStream.resultTextOf(result)).toBe("[1,\"x\"]")
    expect(ModelStream.argumentsTextOf(Prompt.makePart("tool-call", {
      id: "c",
      name: "t",
      params: { n: 1n },
      providerExecuted: false
    }))).toBeUndefined()
  })
})

describe("ModelStreamError", () => {
  const errors = [
    new ModelStreamError.ProviderHttpError({
      status: 429,
      retryAfterMs: 1_000,
      code: "rate_limit",
      providerMessage: "slow down"
    }),
    new ModelStreamError.TransportError({ phase: "connect", reason: "ECONNREFUSED" }),
    new ModelStreamError.StreamTimeout({ finishReason: null, phase: "idle", budgetMs: 750 }),
    new ModelStreamError.StreamAborted({ finishReason: null, reason: "the user left" }),
    new ModelStreamError.NotAnEventStream({ found: "json", excerpt: "{\"id\":1}", contentType: "application/json" }),
    new ModelStreamError.UnsupportedRequest({ provider: "anthropic", reason: "message 0 (user): a file part" })
  ]

  it("keeps the tags and messages callers read", () => {
    expect(errors.map((e) => [e._tag, e.message])).toEqual([
      ["ProviderHttpError", "the provider answered HTTP 429 (rate_limit), retry after 1000 ms: slow down"],
      ["TransportError", "no response from the provider: ECONNREFUSED"],
      ["StreamTimeout", "stream timed out: no byte within 750 ms"],
      ["StreamAborted", "stream aborted: the user left"],
      [
        "NotAnEventStream",
        "the response is application/json: a JSON body, not an event stream; did the request set stream: true? (the body starts \"{\\\"id\\\":1}\")"
      ],
      ["UnsupportedRequest", "the anthropic request cannot carry message 0 (user): a file part"]
    ])
  })

  it("guards: transport failures, model-stream errors (with the stream-level assembly failures)", () => {
    const inBand = new AssemblyError.ProviderStreamError({ finishReason: null, code: null, providerMessage: "x" })
    expect(errors.map(ModelStreamError.isTransportFailure)).toEqual([true, true, true, true, true, false])
    expect([...errors, inBand].every(ModelStreamError.isModelStreamError)).toBe(true)
    expect(
      ModelStreamError.isModelStreamError(
        new AssemblyError.IncompleteStream({ finishReason: null, pendingToolCalls: 0 })
      )
    )
      .toBe(false)
  })
})
