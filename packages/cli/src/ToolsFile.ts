/**
 * Tool definitions read from a JSON file (`--tools FILE`), turned into an `effect/ai` `Toolkit`
 * whose parameter Schemas come from the JSON Schemas in the file.
 *
 * Accepted shapes, so a file written for any provider works as is:
 * - OpenAI Chat: `[{ "type": "function", "function": { "name", "parameters" } }]`
 * - OpenAI Responses / plain: `[{ "name", "parameters" }]`
 * - Anthropic: `[{ "name", "input_schema" }]`
 * - Gemini: `[{ "functionDeclarations": [{ "name", "parameters" }] }]`
 * - any of these wrapped as `{ "tools": [...] }`.
 *
 * A tool may also carry `"webhook": "http://…"` (used by `toolgate run`). JSON Schemas are
 * translated by effect's `SchemaRepresentation.fromJsonSchemaDocument` (Draft 2020-12; Draft-07
 * style `definitions` are accepted through `JsonSchema.fromSchemaDraft07`).
 *
 * @since 0.1.0
 */
import { Data, Effect, JsonSchema, Schema, SchemaRepresentation } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WebhookFailure } from "./Webhook.js"

/**
 * A tools file that cannot be used: not JSON, no tools, a tool without a name, or a JSON Schema
 * the translator rejects.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolsFileError extends Data.TaggedError("ToolsFileError")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

/**
 * One tool definition from the file.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolDefinition {
  readonly name: string
  readonly description: string | undefined
  readonly parameters: JsonSchema.JsonSchema
  readonly webhook: string | undefined
}

type Json = Record<string, unknown>
const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Reads tool definitions from the file's text.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (text: string): Effect.Effect<ReadonlyArray<ToolDefinition>, ToolsFileError> =>
  Effect.suspend(() => {
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (e) {
      return Effect.fail(new ToolsFileError({ reason: `the tools file is not JSON: ${(e as Error).message}` }))
    }
    const list = isObject(json) && Array.isArray(json.tools) ? json.tools : json
    if (!Array.isArray(list) || list.length === 0) {
      return Effect.fail(new ToolsFileError({ reason: "the tools file must hold a non-empty array of tools" }))
    }
    const out: Array<ToolDefinition> = []
    for (const entry of list) {
      const declarations = isObject(entry) && Array.isArray(entry.functionDeclarations)
        ? entry.functionDeclarations
        : [entry]
      for (const item of declarations) {
        const def = isObject(item) && isObject(item.function) ? { ...item.function, webhook: item.webhook } : item
        if (!isObject(def) || typeof def.name !== "string" || def.name === "") {
          return Effect.fail(new ToolsFileError({ reason: "every tool needs a string `name`" }))
        }
        const parameters = def.parameters ?? def.input_schema ?? { type: "object", properties: {} }
        if (!isObject(parameters)) {
          return Effect.fail(
            new ToolsFileError({ reason: `tool ${def.name}: its parameters must be a JSON Schema object` })
          )
        }
        out.push({
          name: def.name,
          description: typeof def.description === "string" ? def.description : undefined,
          parameters: parameters as JsonSchema.JsonSchema,
          webhook: typeof def.webhook === "string" ? def.webhook : undefined
        })
      }
    }
    return Effect.succeed(out)
  })

/**
 * Builds a toolkit from definitions: each tool's parameters Schema is translated from its JSON
 * Schema; its result is any JSON (what its webhook answers) and its failure a
 * `Webhook.WebhookFailure`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toToolkit = (
  definitions: ReadonlyArray<ToolDefinition>
): Effect.Effect<Toolkit.Toolkit<Record<string, Tool.Any>>, ToolsFileError> =>
  Effect.suspend(() => {
    const tools: Array<Tool.Any> = []
    for (const def of definitions) {
      let parameters: Schema.Top
      try {
        const document = "definitions" in def.parameters
          ? JsonSchema.fromSchemaDraft07(def.parameters)
          : JsonSchema.fromSchemaDraft2020_12(def.parameters)
        parameters = SchemaRepresentation.fromJsonSchemaDocument(document)
      } catch (e) {
        return Effect.fail(
          new ToolsFileError({ reason: `tool ${def.name}: its JSON Schema cannot be used: ${(e as Error).message}` })
        )
      }
      tools.push(Tool.make(def.name, {
        description: def.description,
        parameters: parameters as Schema.Codec<unknown, unknown>,
        success: Schema.Json,
        failure: WebhookFailure
      }))
    }
    return Effect.succeed(Toolkit.make(...tools) as unknown as Toolkit.Toolkit<Record<string, Tool.Any>>)
  })
