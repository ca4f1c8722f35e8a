/**
 * Tool definitions in every provider's shape read into one shape, and Gemini's OpenAPI 3.0
 * subset (uppercase types, `nullable`, `format: enum`, int64 counts as strings, numeric enums as
 * strings, Vertex `defs`/`ref`) converted to JSON Schema 2020-12.
 */
import { describe, expect, it } from "@effect/vitest"
import { ToolDefinition } from "@toolgate/adapters"
import { Effect } from "effect"

const read = (json: unknown) => Effect.runSync(ToolDefinition.fromJson(json))
const reason = (json: unknown) => Effect.runSync(Effect.flip(ToolDefinition.fromJson(json))).message

const schema = { type: "object", properties: { lead: { type: "string" } }, required: ["lead"] }

describe("ToolDefinition.fromJson: the providers' shapes", () => {
  it("reads OpenAI Chat, OpenAI Responses, Anthropic and Gemini entries in one list", () => {
    const tools = read([
      { type: "function", function: { name: "a", description: "A", parameters: schema }, webhook: "http://x/a" },
      { type: "function", name: "b", parameters: schema, strict: true },
      { name: "c", description: "C", input_schema: schema },
      {
        functionDeclarations: [{ name: "d", parameters: { type: "OBJECT", properties: { lead: { type: "STRING" } } } }]
      },
      { function_declarations: [{ name: "e", parameters_json_schema: schema }] }
    ])
    expect(tools.map((t) => [t.name, t.format])).toEqual([
      ["a", "openai-chat"],
      ["b", "openai-responses"],
      ["c", "anthropic"],
      ["d", "gemini"],
      ["e", "gemini"]
    ])
    expect(tools[0]!.description).toBe("A")
    expect(tools[0]!.entry.webhook).toBe("http://x/a")
    expect(tools[1]!.parameters).toBe(schema)
    expect(tools[2]!.parameters).toBe(schema)
    expect(tools[3]!.parameters).toEqual({ type: "object", properties: { lead: { type: "string" } } })
    expect(tools[4]!.parameters).toBe(schema)
  })

  it("accepts the { tools } and { functions } wrappers and a bare Gemini tool", () => {
    expect(read({ tools: [{ name: "a" }] }).map((t) => t.name)).toEqual(["a"])
    expect(read({ functions: [{ name: "a", parameters: schema }] }).map((t) => t.name)).toEqual(["a"])
    expect(read({ functionDeclarations: [{ name: "a" }, { name: "b" }] }).map((t) => t.name)).toEqual(["a", "b"])
  })

  it("gives a tool without a schema any object", () => {
    expect(read([{ name: "a" }])[0]!.parameters).toEqual({ type: "object" })
    expect(read([{ functionDeclarations: [{ name: "a" }] }])[0]!.parameters).toEqual({ type: "object" })
  })

  it("skips provider-hosted tools, which declare no function", () => {
    const tools = read([
      { type: "web_search_preview" },
      { googleSearch: {} },
      { code_execution: {} },
      { name: "a", parameters: schema }
    ])
    expect(tools.map((t) => t.name)).toEqual(["a"])
  })

  it.each([
    ["not a list", { name: "a" }, "must be an array of tools"],
    ["an empty list", [], "no function tool"],
    ["only hosted tools", [{ googleSearch: {} }], "no function tool"],
    ["an entry without a name", [{ parameters: schema }], "tool entry 0 has no string \"name\""],
    ["an OpenAI Chat entry without a name", [{ type: "function", function: {} }], "has no string \"name\""],
    ["a number", [1], "tool entry 0 is not an object"],
    ["two tools with one name", [{ name: "a" }, { name: "a", input_schema: schema }], "tool a: it is defined twice"],
    ["parameters that are not an object", [{ name: "a", parameters: [] }], "tool a: its parameters must be"],
    ["declarations that are not a list", [{ functionDeclarations: {} }], "functionDeclarations must be an array"],
    [
      "both Gemini schemas",
      [{ functionDeclarations: [{ name: "a", parameters: {}, parametersJsonSchema: {} }] }],
      "both parameters and parametersJsonSchema"
    ]
  ])("rejects %s", (_, json, says) => {
    expect(reason(json)).toContain(says)
  })

  it("reads JSON text, and says when it is not JSON", () => {
    expect(Effect.runSync(ToolDefinition.parse("[{\"name\":\"a\"}]")).map((t) => t.name)).toEqual(["a"])
    const error = Effect.runSync(Effect.flip(ToolDefinition.parse("{ not json")))
    expect(error._tag).toBe("ToolDefinitionError")
    expect(error.message).toMatch(/^the tool definitions are not JSON: /)
  })
})

const gemini = (parameters: unknown) => read([{ functionDeclarations: [{ name: "g", parameters }] }])[0]!.parameters

describe("ToolDefinition: Gemini's OpenAPI subset as JSON Schema 2020-12", () => {
  it("maps Gemini's Type names (any case) to JSON Schema types; TYPE_UNSPECIFIED is no type", () => {
    expect(gemini({
      type: "OBJECT",
      properties: {
        s: { type: "STRING" },
        n: { type: "NUMBER" },
        i: { type: "integer" },
        b: { type: "Boolean" },
        a: { type: "ARRAY", items: { type: "OBJECT", properties: { z: { type: "NULL" } } } },
        u: { type: "TYPE_UNSPECIFIED", description: "anything" }
      },
      required: ["s"]
    })).toEqual({
      type: "object",
      properties: {
        s: { type: "string" },
        n: { type: "number" },
        i: { type: "integer" },
        b: { type: "boolean" },
        a: { type: "array", items: { type: "object", properties: { z: { type: "null" } } } },
        u: { description: "anything" }
      },
      required: ["s"]
    })
  })

  it("reads nullable, enum formats, int64 counts written as strings and numeric enums written as strings", () => {
    expect(gemini({
      type: "OBJECT",
      properties: {
        owner: { type: "STRING", nullable: true },
        stage: { type: "STRING", format: "enum", enum: ["won", "lost"] },
        room: { type: "INTEGER", format: "enum", enum: ["101", "201"] },
        tags: { type: "ARRAY", items: { type: "STRING" }, minItems: "1", maxItems: "3" },
        when: { type: "STRING", format: "date-time" },
        seats: { type: "INTEGER", format: "int32", minimum: 0, exclusiveMinimum: true }
      }
    })).toEqual({
      type: "object",
      properties: {
        owner: { type: ["string", "null"] },
        stage: { type: "string", enum: ["won", "lost"] },
        room: { type: "integer", enum: [101, 201] },
        tags: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 3 },
        when: { type: "string", format: "date-time" },
        seats: { type: "integer", format: "int32", exclusiveMinimum: 0 }
      }
    })
  })

  it("reads anyOf, and Vertex AI's defs and ref", () => {
    expect(gemini({
      type: "OBJECT",
      properties: {
        pet: { ref: "#/defs/Pet" },
        id: { anyOf: [{ type: "STRING" }, { type: "INTEGER" }] }
      },
      defs: { Pet: { type: "OBJECT", properties: { name: { type: "STRING" }, friend: { ref: "#/defs/Pet" } } } }
    })).toEqual({
      type: "object",
      properties: { pet: { $ref: "#/$defs/Pet" }, id: { anyOf: [{ type: "string" }, { type: "integer" }] } },
      $defs: { Pet: { type: "object", properties: { name: { type: "string" }, friend: { $ref: "#/$defs/Pet" } } } }
    })
  })

  it("rejects a type that is not one of Gemini's, naming where", () => {
    expect(
      reason([{
        functionDeclarations: [{ name: "g", parameters: { type: "OBJECT", properties: { x: { type: "TEXT" } } } }]
      }])
    )
      .toBe(
        "tool g: its Gemini schema cannot be read: parameters.properties.x: type \"TEXT\" is not a Gemini type (STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT, NULL)"
      )
  })

  it("leaves parametersJsonSchema as written (it is JSON Schema, not the OpenAPI subset)", () => {
    const jsonSchema = { type: "object", properties: { x: { type: ["string", "null"] } } }
    expect(read([{ functionDeclarations: [{ name: "g", parametersJsonSchema: jsonSchema }] }])[0]!.parameters).toBe(
      jsonSchema
    )
  })
})
