/**
 * Gemini's `Schema` (the OpenAPI 3.0 subset of `FunctionDeclaration.parameters`) as JSON Schema
 * 2020-12. Gemini's own forms are rewritten here: the `Type` enum names (`"OBJECT"`,
 * `"INTEGER"`, …, `"TYPE_UNSPECIFIED"`: no type), int64 counts sent as strings (`"maxItems": "3"`),
 * enum values written as strings for numeric types (`{ type: INTEGER, format: enum, enum: ["101"] }`),
 * `format: "enum"` (a marker, no format), and Vertex AI's `defs` / `ref: "#/defs/Name"`. The OpenAPI
 * 3.0 semantics (`nullable`, boolean `exclusiveMinimum`/`exclusiveMaximum`, `example`) are then
 * converted by effect's `JsonSchema.fromSchemaOpenApi3_0`: `nullable: true` adds `"null"` to an
 * explicit `type`, and an `enum` must list `null` itself to allow it (OpenAPI 3.0.3, "nullable").
 *
 * Sources: https://ai.google.dev/api/caching#Schema and
 * https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/Schema.
 *
 * @internal
 */
import * as JsonSchema from "effect/JsonSchema"

type Json = { [key: string]: unknown }
const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** A Gemini schema that cannot be read; `reason` is one line. */
export class GeminiSchemaError extends Error {
  constructor(readonly reason: string) {
    super(reason)
  }
}

const types: Record<string, string | undefined> = {
  STRING: "string",
  NUMBER: "number",
  INTEGER: "integer",
  BOOLEAN: "boolean",
  ARRAY: "array",
  OBJECT: "object",
  NULL: "null",
  TYPE_UNSPECIFIED: undefined
}

/** The int64 fields of Gemini's `Schema`, which its JSON mapping may write as strings. */
const counts = ["minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"]

const fromDefs = (ref: string) => ref.startsWith("#/defs/") ? `#/components/schemas/${ref.slice(7)}` : ref

const rewrite = (schema: unknown, at: string, depth: number): unknown => {
  if (depth > 256) throw new GeminiSchemaError(`${at}: the schema is nested too deeply`)
  if (!isObject(schema)) return schema
  const out: Json = { ...schema }
  if ("type" in out) {
    const name = out.type
    if (typeof name !== "string" || !(name.toUpperCase() in types)) {
      throw new GeminiSchemaError(
        `${at}: type ${
          JSON.stringify(name)
        } is not a Gemini type (STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT, NULL)`
      )
    }
    const type = types[name.toUpperCase()]
    if (type === undefined) delete out.type
    else out.type = type
  }
  for (const key of counts) {
    if (typeof out[key] === "string" && /^\d+$/.test(out[key] as string)) out[key] = Number(out[key])
  }
  if (out.format === "enum") delete out.format
  if ((out.type === "integer" || out.type === "number") && Array.isArray(out.enum)) {
    out.enum = out.enum.map((v) =>
      typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v
    )
  }
  if ("ref" in out && !("$ref" in out)) {
    out.$ref = out.ref
    delete out.ref
  }
  if (typeof out.$ref === "string") out.$ref = fromDefs(out.$ref)
  if (isObject(out.properties)) {
    const properties: Json = {}
    for (const [key, value] of Object.entries(out.properties)) {
      properties[key] = rewrite(value, `${at}.properties.${key}`, depth + 1)
    }
    out.properties = properties
  }
  for (const key of ["items", "additionalProperties", "not"]) {
    if (isObject(out[key])) out[key] = rewrite(out[key], `${at}.${key}`, depth + 1)
  }
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const list = out[key]
    if (Array.isArray(list)) out[key] = list.map((item, i) => rewrite(item, `${at}.${key}[${i}]`, depth + 1))
  }
  return out
}

const convert = (schema: unknown, at: string): Json => {
  try {
    const document = JsonSchema.fromSchemaOpenApi3_0(schema as JsonSchema.JsonSchema)
    const out: Json = { ...document.schema }
    if (Object.keys(document.definitions).length > 0) out.$defs = document.definitions
    return out
  } catch (error) {
    throw new GeminiSchemaError(`${at}: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/**
 * A Gemini `Schema` as a JSON Schema 2020-12 object. Throws a {@link GeminiSchemaError} for a
 * type that is not one of Gemini's, or an OpenAPI schema effect's converter rejects.
 */
export const toJsonSchema = (schema: Json): Json => {
  const { defs, ...root } = schema
  const out = convert(rewrite(root, "parameters", 0), "parameters")
  if (isObject(defs)) {
    const converted: Json = isObject(out.$defs) ? { ...out.$defs } : {}
    for (const [name, def] of Object.entries(defs)) {
      converted[name] = convert(rewrite(def, `parameters.defs.${name}`, 1), `parameters.defs.${name}`)
    }
    out.$defs = converted
  }
  return out
}
