/**
 * Tool definitions as the providers write them, read into one shape: a name, a description and
 * the JSON Schema of the arguments.
 *
 * Accepted entries (a list of them, or one of the wrappers `{ "tools": [...] }` and
 * `{ "functions": [...] }`), so a `tools` array copied from any provider's request works as is:
 * - OpenAI Chat: `{ "type": "function", "function": { "name", "description", "parameters" } }`
 * - OpenAI Responses (and plain): `{ "type": "function", "name", "description", "parameters" }`
 * - Anthropic: `{ "name", "description", "input_schema" }`
 * - Gemini: `{ "functionDeclarations": [{ "name", "description", "parameters" }] }` (also
 *   `function_declarations`); `parameters` is Gemini's OpenAPI 3.0 subset (`"type": "OBJECT"`,
 *   `nullable`, `format`, …) and is converted to JSON Schema 2020-12; `parametersJsonSchema`
 *   (also `parameters_json_schema`) is JSON Schema and is taken as is.
 *
 * Provider-hosted tools that declare no function (`{ "type": "web_search" }`,
 * `{ "googleSearch": {} }`) are skipped: the model never calls them as functions. A tool without
 * a schema takes any object. The dialect of each JSON Schema is read from its `$schema` (see
 * `ToolValidator`).
 *
 * A tool may carry its key policy as an `"idempotency"` member (beside `"function"` in the OpenAI
 * Chat shape, or inside it; in the function declaration for Gemini): `keyFields`, `freeText` and
 * `window`, read and checked by `KeyPolicy.make` of `@toolgate/core`:
 *
 * ```json
 * { "type": "function", "function": { "name": "create_task", "parameters": { … } },
 *   "idempotency": { "keyFields": ["email"], "freeText": ["title"],
 *                    "window": { "size": "hour", "timeZone": "Europe/Berlin" } } }
 * ```
 *
 * @since 0.1.0
 */
import { KeyPolicy } from "@toolgate/core"
import * as Effect from "effect/Effect"
import type * as JsonSchema from "effect/JsonSchema"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { GeminiSchemaError, toJsonSchema } from "./internal/geminiSchema.js"

/**
 * A tool definition that cannot be used: the file is not JSON, holds no function tool, a tool
 * has no name or is defined twice, its schema is not a JSON Schema toolgate can validate
 * (invalid, an unsupported `$schema`, a `$ref` it cannot resolve, or a `$ref` cycle that never
 * consumes a value), or its `"idempotency"` key policy breaks a rule of `KeyPolicy.make`. `tool`
 * is the tool's name when one is known.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolDefinitionError extends Schema.TaggedError<ToolDefinitionError>()("ToolDefinitionError", {
  tool: Schema.NullOr(Schema.String),
  reason: Schema.String
}) {
  override get message(): string {
    return this.tool === null ? this.reason : `tool ${this.tool}: ${this.reason}`
  }
}

/**
 * How a definition was written.
 *
 * @since 0.1.0
 * @category models
 */
export type Format = "openai-chat" | "openai-responses" | "anthropic" | "gemini"

/**
 * One tool definition.
 *
 * - `parameters`: the JSON Schema of the arguments (Gemini's OpenAPI subset already converted),
 *   as it can be sent to OpenAI (`parameters`) or Anthropic (`input_schema`).
 * - `keyPolicy`: the tool's `"idempotency"` member, checked (`undefined` when it has none).
 * - `entry`: the entry as written, for the members toolgate does not read (such as `webhook`); for
 *   OpenAI Chat the outer object (its `function` member holds the definition), for Gemini the
 *   function declaration.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolDefinition {
  readonly name: string
  readonly description: string | undefined
  readonly parameters: JsonSchema.JsonSchema
  readonly format: Format
  readonly keyPolicy?: KeyPolicy.KeyPolicy | undefined
  readonly entry: Readonly<Record<string, unknown>>
}

type Json = Record<string, unknown>
const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const anyObject: JsonSchema.JsonSchema = { type: "object" }

const fail = (reason: string, tool: string | null = null) => new ToolDefinitionError({ tool, reason })

/** Gemini's tools that declare no function (https://ai.google.dev/api/caching#Tool), in either spelling. */
const geminiHostedTools = new Set([
  "googleSearch",
  "googleSearchRetrieval",
  "codeExecution",
  "urlContext",
  "retrieval",
  "computerUse",
  "fileSearch",
  "googleMaps",
  "enterpriseWebSearch"
])
const isGeminiHostedTool = (key: string) =>
  geminiHostedTools.has(key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()))

const declarationsOf = (entry: Json): unknown => entry.functionDeclarations ?? entry.function_declarations

/** The entry's `"idempotency"` member (on the entry, or inside its `function`), checked. */
const keyPolicyOf = (
  entry: Json,
  inner: Json | undefined,
  name: string
): KeyPolicy.KeyPolicy | undefined | ToolDefinitionError => {
  if (entry.idempotency !== undefined && inner?.idempotency !== undefined) {
    return fail("it has two \"idempotency\" members (beside and inside \"function\"); keep one", name)
  }
  const given = entry.idempotency ?? inner?.idempotency
  if (given === undefined) return undefined
  const policy = KeyPolicy.make(given, name)
  return Result.isSuccess(policy) ? policy.success : fail(policy.failure.message.replace(`tool ${name}: `, ""), name)
}

const one = (entry: unknown, position: string): ToolDefinition | ToolDefinitionError | undefined => {
  if (!isObject(entry)) return fail(`${position} is not an object`)
  const wrapped = isObject(entry.function)
  const def = wrapped ? entry.function as Json : entry
  if (typeof def.name !== "string" || def.name === "") {
    // a provider-hosted tool ({ "type": "web_search" }) declares no function
    if (!wrapped && typeof entry.type === "string" && entry.type !== "function") return undefined
    return fail(`${position} has no string "name"`)
  }
  const name = def.name
  const description = typeof def.description === "string" ? def.description : undefined
  const format: Format = wrapped ? "openai-chat" : "input_schema" in def ? "anthropic" : "openai-responses"
  const parameters = def.parameters ?? def.input_schema
  if (parameters !== undefined && !isObject(parameters)) {
    return fail("its parameters must be a JSON Schema object", name)
  }
  const keyPolicy = keyPolicyOf(entry, wrapped ? def : undefined, name)
  if (keyPolicy instanceof ToolDefinitionError) return keyPolicy
  return {
    name,
    description,
    parameters: (parameters as JsonSchema.JsonSchema | undefined) ?? anyObject,
    format,
    keyPolicy,
    entry
  }
}

const gemini = (declaration: unknown, position: string): ToolDefinition | ToolDefinitionError => {
  if (!isObject(declaration) || typeof declaration.name !== "string" || declaration.name === "") {
    return fail(`${position} has no string "name"`)
  }
  const name = declaration.name
  const jsonSchema = declaration.parametersJsonSchema ?? declaration.parameters_json_schema
  const openApi = declaration.parameters
  if (jsonSchema !== undefined && openApi !== undefined) {
    return fail("it has both parameters and parametersJsonSchema; Gemini accepts one", name)
  }
  const given = jsonSchema ?? openApi
  if (given !== undefined && !isObject(given)) return fail("its parameters must be a schema object", name)
  let parameters: JsonSchema.JsonSchema = anyObject
  if (jsonSchema !== undefined) parameters = jsonSchema as JsonSchema.JsonSchema
  else if (openApi !== undefined) {
    try {
      parameters = toJsonSchema(openApi as Json)
    } catch (error) {
      if (error instanceof GeminiSchemaError) return fail(`its Gemini schema cannot be read: ${error.reason}`, name)
      if (error instanceof RangeError) return fail("its Gemini schema is nested too deeply", name)
      throw error
    }
  }
  const keyPolicy = keyPolicyOf(declaration, undefined, name)
  if (keyPolicy instanceof ToolDefinitionError) return keyPolicy
  return {
    name,
    description: typeof declaration.description === "string" ? declaration.description : undefined,
    parameters,
    format: "gemini",
    keyPolicy,
    entry: declaration
  }
}

/**
 * Reads tool definitions from parsed JSON (see the module docs for the shapes). Fails with
 * {@link ToolDefinitionError} when there is no function tool, an entry is not a tool, a tool has
 * no name or its name is defined twice, or a Gemini schema cannot be converted.
 *
 * @since 0.1.0
 * @category parsing
 */
export const fromJson = (json: unknown): Effect.Effect<ReadonlyArray<ToolDefinition>, ToolDefinitionError> =>
  Effect.suspend(() => {
    const list = isObject(json) && Array.isArray(json.tools)
      ? json.tools
      : isObject(json) && Array.isArray(json.functions)
      ? json.functions
      : isObject(json) && Array.isArray(declarationsOf(json))
      ? [json]
      : json
    if (!Array.isArray(list)) {
      return Effect.fail(fail("the tool definitions must be an array of tools (or { \"tools\": [...] })"))
    }
    const out: Array<ToolDefinition> = []
    for (let i = 0; i < list.length; i++) {
      const entry: unknown = list[i]
      const declarations = isObject(entry) ? declarationsOf(entry) : undefined
      const found: Array<ToolDefinition | ToolDefinitionError | undefined> = []
      if (declarations !== undefined) {
        if (!Array.isArray(declarations)) {
          return Effect.fail(fail(`tool entry ${i}: functionDeclarations must be an array`))
        }
        declarations.forEach((d, j) => found.push(gemini(d, `tool entry ${i}, function declaration ${j}`)))
      } else if (isObject(entry) && Object.keys(entry).length > 0 && Object.keys(entry).every(isGeminiHostedTool)) {
        continue
      } else {
        found.push(one(entry, `tool entry ${i}`))
      }
      for (const result of found) {
        if (result === undefined) continue
        if (result instanceof ToolDefinitionError) return Effect.fail(result)
        if (out.some((d) => d.name === result.name)) return Effect.fail(fail("it is defined twice", result.name))
        out.push(result)
      }
    }
    if (out.length === 0) return Effect.fail(fail("the tool definitions hold no function tool"))
    return Effect.succeed(out)
  })

/**
 * Reads tool definitions from JSON text (a tools file). Fails with {@link ToolDefinitionError}
 * when the text is not JSON, and as {@link fromJson}.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (text: string): Effect.Effect<ReadonlyArray<ToolDefinition>, ToolDefinitionError> =>
  Effect.suspend(() => {
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (error) {
      return Effect.fail(fail(`the tool definitions are not JSON: ${(error as Error).message}`))
    }
    return fromJson(json)
  })
