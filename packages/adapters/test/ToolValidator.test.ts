/**
 * JSON-Schema validation of tool calls: exactly what is declared (additionalProperties, formats,
 * Gemini's types), recursion through the value supported, `$ref` loops that never consume the
 * value rejected when the tools are read, arguments passed through untouched, and the same
 * verdicts and errors through `validate` and through the toolkit of `toToolkit`. A property test
 * checks ajv's verdicts against an independent validator (@cfworker/json-schema).
 */
import { Validator } from "@cfworker/json-schema"
import { assert, describe, expect, it } from "@effect/vitest"
import { ToolDefinition, ToolValidator } from "@toolgate/adapters"
import { Assembler, ToolCall } from "@toolgate/core"
import { Arbitrary, Effect, Schema } from "effect"
import { Tool } from "effect/ai"

type Json = Record<string, unknown>

const compile = (parameters: Json, name = "t") =>
  ToolValidator.make([{ name, description: undefined, parameters, format: "openai-responses", entry: {} }])

const validator = (parameters: Json) => Effect.runSync(compile(parameters))
const rejection = (parameters: Json) => Effect.runSync(Effect.flip(compile(parameters)))
const check = (parameters: Json, args: unknown) => validator(parameters).check("t", args)!

const call = (index: number, name: string, args: Json) =>
  new Assembler.AssembledToolCall({
    index,
    id: `call_${index}`,
    name,
    argumentsText: JSON.stringify(args),
    arguments: args
  })
const turn = (...calls: ReadonlyArray<Assembler.AssembledToolCall>) =>
  new Assembler.AssembledTurn({ text: "", toolCalls: calls, finishReason: "tool_calls" })

describe("ToolValidator: $ref loops that never consume the value are rejected when the tools are read", () => {
  it.each([
    ["a self-reference", { $ref: "#" }, "# → #"],
    [
      "a two-step cycle",
      { $defs: { A: { $ref: "#/$defs/B" }, B: { $ref: "#/$defs/A" } }, $ref: "#/$defs/A" },
      "#/$defs/A → #/$defs/B → #/$defs/A"
    ],
    [
      "a two-step cycle under a property",
      {
        type: "object",
        properties: { owner: { $ref: "#/$defs/A" } },
        $defs: { A: { $ref: "#/$defs/B" }, B: { $ref: "#/$defs/A" } }
      },
      "#/$defs/A → #/$defs/B → #/$defs/A"
    ],
    ["a loop through allOf", { type: "object", allOf: [{ $ref: "#" }] }, "# → #/allOf/0 → #"],
    ["a loop through anyOf", { anyOf: [{ type: "string" }, { $ref: "#" }] }, "# → #/anyOf/1 → #"],
    ["a loop through not", { not: { $ref: "#" } }, "# → #/not → #"],
    [
      "a loop through if/then",
      JSON.parse("{\"if\":{\"type\":\"object\"},\"then\":{\"$ref\":\"#\"}}"),
      "# → #/then → #"
    ],
    ["draft-07 definitions", {
      definitions: { A: { $ref: "#/definitions/A" } },
      properties: { a: { $ref: "#/definitions/A" } }
    }, "#/definitions/A → #/definitions/A"],
    [
      "refs by $id",
      {
        $defs: { A: { $id: "https://x.test/a", $ref: "b" }, B: { $id: "https://x.test/b", $ref: "a" } },
        properties: { a: { $ref: "https://x.test/a" } }
      },
      "#/$defs/A → #/$defs/B → #/$defs/A"
    ],
    [
      "an anchor",
      { $defs: { A: { $anchor: "loop", allOf: [{ $ref: "#loop" }] } } },
      "#/$defs/A → #/$defs/A/allOf/0 → #/$defs/A"
    ]
  ])("%s", (_, parameters, chain) => {
    const error = rejection(parameters as Json)
    expect(error._tag).toBe("ToolDefinitionError")
    expect(error.tool).toBe("t")
    expect(error.message).toContain(`loops without consuming the value: ${chain} (`)
    expect(error.message).not.toContain("\n")
  })
})

describe("ToolValidator: recursion through the value is a tree and is validated", () => {
  const tree = {
    type: "object",
    properties: { title: { type: "string" }, sub: { $ref: "#" } },
    required: ["title"],
    additionalProperties: false
  }

  it("accepts a deep valid tree and points at the broken leaf", () => {
    expect(check(tree, { title: "a", sub: { title: "b", sub: { title: "c" } } })).toEqual([])
    expect(check(tree, { title: "a", sub: { title: "b", sub: { title: 3, x: 1 } } })).toEqual([
      { path: ["sub", "sub", "x"], message: "is not declared (additionalProperties is false)" },
      { path: ["sub", "sub", "title"], message: "must be string, got integer" }
    ])
  })

  it("validates mutual recursion through properties and items", () => {
    const org = {
      type: "object",
      properties: { owner: { $ref: "#/$defs/Person" } },
      $defs: {
        Person: {
          type: "object",
          properties: {
            name: { type: "string" },
            reports: { type: "array", items: { $ref: "#/$defs/Person" } },
            employer: { $ref: "#/$defs/Company" }
          },
          required: ["name"]
        },
        Company: { type: "object", properties: { ceo: { anyOf: [{ type: "null" }, { $ref: "#/$defs/Person" }] } } }
      }
    }
    expect(check(org, { owner: { name: "A", reports: [{ name: "B" }], employer: { ceo: { name: "C" } } } })).toEqual([])
    expect(check(org, { owner: { name: "A", reports: [{ name: "B" }, {}] } })).toEqual([
      { path: ["owner", "reports", 1, "name"], message: "is required" }
    ])
    expect(check(org, { owner: { name: "A", employer: { ceo: 7 } } })).toEqual([
      { path: ["owner", "employer", "ceo"], message: "must be null, got integer" },
      { path: ["owner", "employer", "ceo"], message: "must be object, got integer" },
      { path: ["owner", "employer", "ceo"], message: "must match a schema in anyOf" }
    ])
  })

  it("reports arguments nested too deeply for the validator as one issue, never a throw", () => {
    let deep: Json = { title: "leaf" }
    for (let i = 0; i < 20_000; i++) deep = { title: "n", sub: deep }
    const found = check(tree, deep)
    expect(found).toEqual([{ path: [], message: "are nested too deeply to validate" }])
  })
})

describe("ToolValidator: exactly what is declared", () => {
  const crm = {
    type: "object",
    properties: {
      lead: { type: "string", pattern: "^lead-\\d+$" },
      stage: { enum: ["new", "won", "lost"] },
      seats: { type: "integer", minimum: 1 },
      email: { type: "string", format: "email" },
      due: { type: "string", format: "date" },
      tags: { type: "array", items: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] } },
      meta: { type: "object", properties: {}, unevaluatedProperties: false }
    },
    required: ["lead"],
    additionalProperties: false
  }
  it.each([
    [{ lead: "lead-1" }, []],
    [{ lead: "lead-1", stage: "won", seats: 3, email: "a@b.example", due: "2025-10-16", tags: [{ sku: "x" }] }, []],
    [{}, [{ path: ["lead"], message: "is required" }]],
    [{ lead: "lead-1", extra: true }, [{
      path: ["extra"],
      message: "is not declared (additionalProperties is false)"
    }]],
    [{ lead: "x" }, [{ path: ["lead"], message: "must match pattern \"^lead-\\d+$\"" }]],
    [{ lead: "lead-1", stage: "open" }, [{
      path: ["stage"],
      message: "must be one of [\"new\",\"won\",\"lost\"], got \"open\""
    }]],
    [{ lead: "lead-1", seats: 1.5 }, [{ path: ["seats"], message: "must be integer, got number" }]],
    [{ lead: "lead-1", seats: "3" }, [{ path: ["seats"], message: "must be integer, got string" }]],
    [{ lead: "lead-1", seats: 0 }, [{ path: ["seats"], message: "must be >= 1" }]],
    [{ lead: "lead-1", email: "nope" }, [{ path: ["email"], message: "must match format \"email\"" }]],
    [{ lead: "lead-1", due: "16/10/2025" }, [{ path: ["due"], message: "must match format \"date\"" }]],
    [{ lead: "lead-1", tags: [{ sku: "a" }, { sku: "b" }, {}] }, [{
      path: ["tags", 2, "sku"],
      message: "is required"
    }]],
    [{ lead: "lead-1", meta: { x: 1 } }, [{
      path: ["meta", "x"],
      message: "is not declared (unevaluatedProperties is false)"
    }]]
  ])("%j", (args, issues) => {
    expect(check(crm, args)).toEqual(issues)
  })

  it("validates patternProperties and propertyNames", () => {
    const keyed = {
      type: "object",
      patternProperties: { "^x-": { type: "integer" } },
      propertyNames: { maxLength: 5 },
      additionalProperties: false
    }
    expect(check(keyed, { "x-a": 1 })).toEqual([])
    expect(check(keyed, { "x-a": "1", y: 2 })).toEqual([
      { path: ["y"], message: "is not declared (additionalProperties is false)" },
      { path: ["x-a"], message: "must be integer, got string" }
    ])
    expect(check(keyed, { "x-long": 1 }).map((i) => i.message)).toContain("property name must be valid")
  })

  it("reads any key, a lone surrogate or __proto__ included", () => {
    const closed = { type: "object", properties: { a: { type: "string" } }, additionalProperties: false }
    expect(check(closed, JSON.parse("{\"\\udc00\": 1}"))).toEqual([
      { path: ["\udc00"], message: "is not declared (additionalProperties is false)" }
    ])
    expect(check(closed, JSON.parse("{\"__proto__\": {\"a\": 1}}"))).toEqual([
      { path: ["__proto__"], message: "is not declared (additionalProperties is false)" }
    ])
  })

  it("reads multipleOf in decimal arithmetic, as JSON numbers are written", () => {
    const price = { type: "object", properties: { p: { type: "number", multipleOf: 0.01 }, n: { multipleOf: 3 } } }
    for (const p of [19.99, 0.3, 4.35, 100, -0.07]) expect(check(price, { p })).toEqual([])
    expect(check(price, { p: 0.0100000001 })).toEqual([{ path: ["p"], message: "must be multiple of 0.01" }])
    expect(check(price, { n: 1e21 })).toEqual([{ path: ["n"], message: "must be multiple of 3" }])
    expect(check(price, { n: 3e21 })).toEqual([])
  })

  it("ignores unknown keywords and unknown formats, as the specification says", () => {
    const odd = {
      type: "object",
      properties: { x: { type: "string", format: "enum", "x-ui": "select", propertyOrdering: ["a"] } },
      strict: true
    }
    expect(check(odd, { x: "anything" })).toEqual([])
  })

  it("never changes the arguments: no coercion, no defaults, no removal", () => {
    const schema = {
      type: "object",
      properties: {
        n: { type: "number" },
        flag: { type: "boolean", default: true },
        inner: { type: "object", properties: { a: { type: "string" } } }
      }
    }
    const args = { n: 1, inner: { a: "x", undeclared: [1, { deep: null }] }, other: "kept" }
    const before = structuredClone(args)
    expect(check(schema, args)).toEqual([])
    expect(args).toStrictEqual(before)
  })

  it("validates Gemini's uppercase types after reading them", () => {
    const [definition] = Effect.runSync(ToolDefinition.fromJson([{
      functionDeclarations: [{
        name: "g",
        parameters: {
          type: "OBJECT",
          properties: {
            n: { type: "INTEGER", nullable: true },
            s: { type: "STRING", format: "enum", enum: ["a", "b"] }
          },
          required: ["n"]
        }
      }]
    }]))
    const v = Effect.runSync(ToolValidator.make([definition!]))
    expect(v.check("g", { n: null, s: "a" })).toEqual([])
    expect(v.check("g", { n: 2 })).toEqual([])
    expect(v.check("g", { n: "2", s: "c" })).toEqual([
      { path: ["n"], message: "must be integer or null, got string" },
      { path: ["s"], message: "must be one of [\"a\",\"b\"], got \"c\"" }
    ])
    expect(v.check("g", {})).toEqual([{ path: ["n"], message: "is required" }])
  })

  it("reads each dialect: $schema, or draft-07 forms", () => {
    const tuple = {
      type: "object",
      properties: { p: { items: [{ type: "string" }, { type: "integer" }], additionalItems: false } }
    }
    expect(check(tuple, { p: ["a", 1] })).toEqual([])
    expect(check(tuple, { p: ["a", 1, 2] })).toEqual([{ path: ["p"], message: "must NOT have more than 2 items" }])
    const draft06 = {
      $schema: "http://json-schema.org/draft-06/schema#",
      type: "object",
      properties: { a: { type: "string" } }
    }
    expect(check(draft06, { a: 1 })).toEqual([{ path: ["a"], message: "must be string, got integer" }])
    const recursive2019 = {
      $schema: "https://json-schema.org/draft/2019-09/schema",
      $recursiveAnchor: true,
      type: "object",
      properties: { sub: { $recursiveRef: "#" }, v: { type: "integer" } }
    }
    expect(check(recursive2019, { sub: { sub: { v: 1 } } })).toEqual([])
    expect(check(recursive2019, { sub: { v: "x" } })).toEqual([{
      path: ["sub", "v"],
      message: "must be integer, got string"
    }])
    const prefix2020 = { type: "object", properties: { p: { prefixItems: [{ type: "string" }], items: false } } }
    expect(check(prefix2020, { p: ["a", 1] })).toEqual([{ path: ["p"], message: "must NOT have more than 1 items" }])
  })

  it("reads properties named like draft-07 keywords as properties, not as the dialect", () => {
    const named = {
      type: "object",
      properties: {
        dependencies: { type: "object", properties: { a: { type: "string" } } },
        items: { type: "array", prefixItems: [{ type: "string" }], items: false }
      }
    }
    expect(check(named, { items: ["a"], dependencies: {} })).toEqual([])
    expect(check(named, { items: ["a", "b"] })).toEqual([{
      path: ["items"],
      message: "must NOT have more than 1 items"
    }])
  })

  it("lets two tools share an $id", () => {
    const a = { $id: "https://x.test/args", type: "object", properties: { a: { type: "string" } } }
    const b = { $id: "https://x.test/args", type: "object", properties: { a: { type: "integer" } } }
    const v = Effect.runSync(ToolValidator.make([
      { name: "a", description: undefined, parameters: a, format: "openai-responses", entry: {} },
      { name: "b", description: undefined, parameters: b, format: "openai-responses", entry: {} }
    ]))
    expect(v.check("a", { a: "x" })).toEqual([])
    expect(v.check("b", { a: 1 })).toEqual([])
    expect(v.check("b", { a: "x" })).toHaveLength(1)
    expect(v.check("c", {})).toBeUndefined()
  })
})

describe("ToolValidator.make: schemas it cannot use are one-line ToolDefinitionErrors", () => {
  it.each([
    [
      "an invalid schema",
      { type: "strin" },
      "its JSON Schema is invalid: #/type must be equal to one of the allowed values"
    ],
    [
      "Gemini types outside a Gemini entry",
      { type: "OBJECT" },
      "uppercase types such as \"OBJECT\" are Gemini's OpenAPI types"
    ],
    [
      "an unsupported $schema",
      { $schema: "http://json-schema.org/draft-04/schema#" },
      "its $schema \"http://json-schema.org/draft-04/schema#\" is not supported"
    ],
    [
      "a $ref to nothing",
      { properties: { a: { $ref: "#/$defs/Missing" } } },
      "its JSON Schema cannot be compiled: can't resolve reference #/$defs/Missing"
    ],
    [
      "a remote $ref",
      { properties: { a: { $ref: "https://example.com/s.json" } } },
      "can't resolve reference https://example.com/s.json"
    ],
    [
      "an invalid pattern",
      { properties: { a: { type: "string", pattern: "(" } } },
      "its JSON Schema cannot be compiled"
    ]
  ])("%s", (_, parameters, says) => {
    const error = rejection(parameters as Json)
    expect(error.message).toContain(says)
    expect(error.message).toMatch(/^tool t: /)
    expect(error.message).not.toContain("\n")
  })
})

describe("ToolValidator.validate and toToolkit: the same verdicts and errors", () => {
  const definitions = Effect.runSync(ToolDefinition.fromJson([
    {
      name: "create_task",
      parameters: {
        type: "object",
        properties: { lead: { type: "string" } },
        required: ["lead"],
        additionalProperties: false
      }
    },
    { name: "note", parameters: { type: "object", properties: { text: { type: "string" } } } }
  ]))
  const v = Effect.runSync(ToolValidator.make(definitions))
  const toolkit = ToolValidator.toToolkit(v)

  it.effect("gives the calls untouched when every call is valid", () =>
    Effect.gen(function*() {
      const t = turn(
        call(0, "create_task", { lead: "l-1" }),
        call(1, "note", { text: "x", undeclared: { kept: true } })
      )
      const calls = yield* ToolValidator.validate(v)(t)
      expect(calls).toBe(t.toolCalls)
      const viaToolkit = yield* ToolCall.validate(toolkit)(t)
      expect(viaToolkit.map((c) => c.params)).toEqual(t.toolCalls.map((c) => c.arguments))
      viaToolkit.forEach((c, i) => {
        expect(c.params).toBe(t.toolCalls[i]!.arguments)
        expect(c.arguments).toBe(t.toolCalls[i]!.arguments)
      })
    }))

  it.effect("fails with UnknownTool for the first unknown name, all or nothing", () =>
    Effect.gen(function*() {
      const t = turn(call(0, "note", { text: "x" }), call(1, "delete_everything", {}))
      const error = yield* Effect.flip(ToolValidator.validate(v)(t))
      assert(error._tag === "UnknownTool")
      expect(error).toMatchObject({
        index: 1,
        id: "call_1",
        toolName: "delete_everything",
        available: ["create_task", "note"]
      })
      expect(yield* Effect.flip(ToolCall.validate(toolkit)(t))).toEqual(error)
    }))

  it.effect("fails with the same ToolArgumentsInvalid both ways", () =>
    Effect.gen(function*() {
      const t = turn(
        call(0, "note", { text: "ok" }),
        call(1, "create_task", { lead: 7, owner: "x" }),
        call(2, "note", { text: 1 })
      )
      const error = yield* Effect.flip(ToolValidator.validate(v)(t))
      assert(error._tag === "ToolArgumentsInvalid")
      expect({ index: error.index, id: error.id, toolName: error.toolName, path: error.path, issues: error.issues })
        .toEqual({
          index: 1,
          id: "call_1",
          toolName: "create_task",
          path: "owner",
          issues: "owner: is not declared (additionalProperties is false); lead: must be string, got integer"
        })
      expect(error.message).toBe(
        "tool call 1 (create_task) has invalid arguments: owner: is not declared (additionalProperties is false); lead: must be string, got integer"
      )
      expect(yield* Effect.flip(ToolCall.validate(toolkit)(t))).toEqual(error)
    }))

  it("bounds the issues of a call that breaks everything", () => {
    const wide = { type: "object", additionalProperties: false }
    const args = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`member_${i}`, i]))
    const error = ToolCall.argumentsInvalid({ index: 0, id: null, name: "t" }, check(wide, args))
    expect(error.issues.length).toBeLessThanOrEqual(220)
    expect(error.issues).toMatch(/; and \d+ more$/)
  })

  it("gives the model each tool's JSON Schema", () => {
    const tools = Object.values(toolkit.tools) as ReadonlyArray<Tool.Any>
    expect(tools.map((tool) => Tool.getJsonSchema(tool))).toEqual(definitions.map((d) => d.parameters))
  })
})

// ---------------------------------------------------------------------------------------------
// ajv against an independent validator

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

/** Tool schemas the property runs on: what tool definitions use, recursion included. */
const shapes: ReadonlyArray<Json> = [
  {
    type: "object",
    properties: {
      title: { type: "string", minLength: 1, maxLength: 8 },
      priority: { enum: ["low", "high"] },
      seats: { type: "integer", minimum: 1, maximum: 5 },
      amount: { type: "number", exclusiveMinimum: 0 },
      notify: { type: "boolean" },
      tags: { type: "array", items: { type: "string" }, maxItems: 2, uniqueItems: true },
      contact: {
        type: "object",
        properties: { phone: { type: ["string", "null"] } },
        required: ["phone"],
        additionalProperties: false
      }
    },
    required: ["title", "priority"],
    additionalProperties: false
  },
  {
    type: "object",
    properties: { title: { type: "string" }, sub: { $ref: "#" }, kids: { type: "array", items: { $ref: "#" } } },
    required: ["title"],
    additionalProperties: false
  },
  {
    type: "object",
    properties: {
      id: { anyOf: [{ type: "string", pattern: "^[a-z]+$" }, { type: "integer", minimum: 0 }] },
      kind: { const: "deal" },
      value: { oneOf: [{ type: "number", multipleOf: 2 }, { type: "number", multipleOf: 3 }] },
      price: { type: "number", multipleOf: 0.01 },
      pair: { type: "array", prefixItems: [{ type: "string" }, { type: "integer" }], items: false, minItems: 1 }
    },
    dependentRequired: { value: ["kind"] },
    minProperties: 1,
    maxProperties: 3
  },
  {
    type: "object",
    properties: { node: { $ref: "#/$defs/Node" } },
    $defs: {
      Node: {
        type: "object",
        properties: { v: { type: "integer" }, next: { anyOf: [{ type: "null" }, { $ref: "#/$defs/Node" }] } },
        required: ["v"],
        unevaluatedProperties: false
      }
    }
  }
]

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** Whether every string and key of a JSON value is well-formed UTF-16. */
const wellFormed = (json: unknown): boolean =>
  typeof json === "string"
    ? !loneSurrogate.test(json)
    : typeof json !== "object" || json === null
    ? true
    : Object.entries(json).every(([key, value]) => !loneSurrogate.test(key) && wellFormed(value))

/** Numbers binary floating point gets wrong as multiples. */
const tricky = [0.3, 0.1 + 0.2, 19.99, 4.35, 1e21, 1.6832062013854484e114, 0.0100000001, -6, 2.5]

const strings = ["", "a", "abc", "low", "high", "deal", "ABC", "toolongstring", "x-1", "é"]

/**
 * A value shaped like `schema`, built from a list of choices: mostly what the schema describes,
 * sometimes a member missing, a member added, a wrong type or a value out of range, so both
 * verdicts occur.
 */
const shaped = (root: Json, choices: ReadonlyArray<number>, junk: ReadonlyArray<unknown>): unknown => {
  let at = 0
  const next = (n: number) => choices[at++ % choices.length]! % n
  const resolve = (schema: Json): Json =>
    typeof schema.$ref === "string"
      ? schema.$ref === "#" ? root : ((root.$defs as Json)[schema.$ref.slice("#/$defs/".length)] as Json)
      : schema
  const build = (raw: Json, depth: number): unknown => {
    const schema = resolve(raw)
    if (next(12) === 0) return junk.length === 0 ? null : junk[next(junk.length)]
    if (Array.isArray(schema.anyOf ?? schema.oneOf)) {
      const list = (schema.anyOf ?? schema.oneOf) as Array<Json>
      return build(list[next(list.length)]!, depth)
    }
    if ("const" in schema) return next(4) === 0 ? "other" : schema.const
    if (Array.isArray(schema.enum)) {
      return next(5) === 0
        ? strings[next(strings.length)]
        : schema.enum[next(schema.enum.length)]
    }
    const type = Array.isArray(schema.type) ? schema.type[next(schema.type.length)] : schema.type
    switch (type) {
      case "string":
        return strings[next(strings.length)]
      case "integer":
        return next(7) - 1
      case "number":
        return next(3) === 0 ? tricky[next(tricky.length)] : (next(13) - 2) / (next(3) + 1)
      case "boolean":
        return next(2) === 0
      case "null":
        return null
      case "array": {
        const prefix = (schema.prefixItems as Array<Json> | undefined) ?? []
        const length = depth > 4 ? 0 : next(4)
        return Array.from(
          { length },
          (_, i) =>
            build(
              prefix[i] ?? (typeof schema.items === "object" ? schema.items as Json : { type: "string" }),
              depth + 1
            )
        )
      }
      default: {
        const out: Json = {}
        const properties = (schema.properties ?? {}) as Record<string, Json>
        for (const [key, value] of Object.entries(properties)) {
          if (depth > 5 || next(3) === 0) continue
          out[key] = build(value, depth + 1)
        }
        if (next(6) === 0) out[`extra_${next(3)}`] = junk.length === 0 ? 1 : junk[next(junk.length)]
        return out
      }
    }
  }
  return build(root, 0)
}

describe("ToolValidator against @cfworker/json-schema", () => {
  const compiled = shapes.map((shape) => ({
    ours: validator(shape),
    reference: new Validator(shape as never, "2020-12", false)
  }))
  it.prop(
    "for any value shaped like a tool schema, ajv's verdict is the reference validator's",
    {
      pick: int(0, shapes.length - 1),
      choices: Arbitrary.array(int(0, 1_000_000), { minLength: 1, maxLength: 64 }),
      // @cfworker/json-schema throws on a lone surrogate in a key (encodeURI); ajv does not (tested above)
      junk: Arbitrary.array(
        Arbitrary.schema(Schema.Json).pipe(Arbitrary.filter(wellFormed)),
        { maxLength: 3 }
      )
    },
    ({ choices, junk, pick }) => {
      const value = shaped(shapes[pick]!, choices, junk)
      const { ours, reference } = compiled[pick]!
      const mine = ours.check("t", value)!.length === 0
      expect({ value, valid: mine }).toEqual({ value, valid: reference.validate(value).valid })
    },
    { arbitrary: { runs: 2000 } }
  )
})
