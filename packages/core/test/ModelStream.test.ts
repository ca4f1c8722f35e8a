/**
 * The model-stream interface's helpers and errors: `toolsOf` (name, description, JSON Schema and
 * strict mode of each tool of a toolkit, in order) and the `ModelStreamError` classes (their tags,
 * fields and messages, which the inspect JSON and the error table show) with their guards.
 */
import { describe, expect, it } from "@effect/vitest"
import { AssemblyError, ModelStream, ModelStreamError } from "@toolgate/core"
import { Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

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
