/**
 * A tool's JSON Schema made ready for a provider's strict mode, or the reason it cannot be.
 *
 * Strict mode constrains the model's sampling to the schema, and the providers accept only
 * schemas whose every object is closed: `additionalProperties: false` on each object
 * (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas, "additionalProperties:
 * false must always be set in objects"; Anthropic's strict tool use,
 * https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/strict-tool-use, the same).
 * OpenAI also requires every property to be listed in `required` ("All fields must be required";
 * an optional value is written as a required one whose type admits `null`), a root that is an
 * object and not an `anyOf`, and refuses a set of keywords (the list openai-node's
 * `toStrictJsonSchema` refuses: `allOf`, `oneOf`, `not`, `if`/`then`/`else`, `patternProperties`,
 * `dependentSchemas`, `prefixItems`, `uniqueItems`, …).
 *
 * What is changed, and why it is safe: an object whose `additionalProperties` is absent or `true`
 * (effect's `Tool.getJsonSchema` writes `true` for every `Schema.Struct`) is closed. That only
 * narrows what the model may send; whatever it sends under the closed schema is still valid under
 * the declared one, so toolgate's validation of the arguments against the tool's own Schema is
 * unchanged. Nothing else is rewritten: an optional property is not made required (that would
 * force the model to invent a value the tool does not need), a map (`additionalProperties` a
 * schema, `patternProperties`) is not closed (that would forbid every entry). Such a schema
 * cannot be strict, and the encoder refuses the request with `UnsupportedRequest` naming the
 * tool and the JSON Pointer of the first problem, before anything is sent, rather than send it
 * unconstrained (the caller asked for the guarantee) or let the provider reject it with a 400.
 *
 * @internal
 */
import type * as JsonSchema from "effect/JsonSchema"

/** A provider's strict-mode rules. */
export interface Rules {
  /** Who they are, for the reason text. */
  readonly name: string
  /** Every property must be in `required`. */
  readonly allRequired: boolean
  /** The root must be an object schema, not an `anyOf`. */
  readonly objectRoot: boolean
  /** Keywords that make a schema unusable in strict mode. */
  readonly unsupported: ReadonlySet<string>
}

/** OpenAI's rules (Chat Completions `function.strict`, Responses `strict`). */
export const openAi: Rules = {
  name: "OpenAI",
  allRequired: true,
  objectRoot: true,
  unsupported: new Set([
    "$anchor",
    "$dynamicAnchor",
    "$dynamicRef",
    "$recursiveAnchor",
    "$recursiveRef",
    "allOf",
    "contains",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "else",
    "if",
    "maxContains",
    "maxProperties",
    "minContains",
    "minProperties",
    "not",
    "oneOf",
    "patternProperties",
    "prefixItems",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
    "uniqueItems"
  ])
}

/** Anthropic's rules (strict tool use): closed objects; optional properties are allowed. */
export const anthropic: Rules = {
  name: "Anthropic",
  allRequired: false,
  objectRoot: true,
  unsupported: new Set(["patternProperties"])
}

type Json = { readonly [key: string]: unknown }
const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const escape = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1")

/** Keywords whose value is one subschema (`additionalProperties` is handled with the object rules). */
const single = ["items", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems"]
/** Keywords whose value is an array of subschemas. */
const arrays = ["anyOf", "oneOf", "allOf", "prefixItems"]
/** Keywords whose value is an object of subschemas. */
const maps = ["properties", "$defs", "definitions", "dependentSchemas", "patternProperties"]

const maxDepth = 256

class Problem {
  constructor(readonly reason: string) {}
}

const isObjectSchema = (node: Json): boolean =>
  node.type === "object" || (Array.isArray(node.type) && node.type.includes("object")) ||
  isObject(node.properties)

const walk = (node: unknown, at: string, rules: Rules, depth: number): unknown => {
  if (depth > maxDepth) throw new Problem(`${at} nests deeper than ${maxDepth} levels`)
  if (!isObject(node)) {
    if (typeof node === "boolean") throw new Problem(`${at} is a boolean schema`)
    return node
  }
  for (const keyword of rules.unsupported) {
    if (node[keyword] !== undefined) throw new Problem(`${at} uses \`${keyword}\`, which strict mode does not support`)
  }
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (single.includes(key) && (isObject(value) || typeof value === "boolean")) {
      out[key] = walk(value, `${at}/${key}`, rules, depth + 1)
    } else if (single.includes(key) && key === "items" && Array.isArray(value)) {
      out[key] = value.map((item, i) => walk(item, `${at}/items/${i}`, rules, depth + 1))
    } else if (arrays.includes(key) && Array.isArray(value)) {
      out[key] = value.map((item, i) => walk(item, `${at}/${key}/${i}`, rules, depth + 1))
    } else if (maps.includes(key) && isObject(value)) {
      const mapped: Record<string, unknown> = {}
      for (const [name, child] of Object.entries(value)) {
        mapped[name] = walk(child, `${at}/${key}/${escape(name)}`, rules, depth + 1)
      }
      out[key] = mapped
    } else {
      out[key] = value
    }
  }
  if (isObjectSchema(node)) {
    const extra = node.additionalProperties
    if (extra !== undefined && extra !== true && extra !== false) {
      throw new Problem(`${at} is a map (additionalProperties is a schema), which strict mode cannot close`)
    }
    out.additionalProperties = false
    const properties = isObject(node.properties) ? node.properties : {}
    if (out.properties === undefined) out.properties = {}
    if (rules.allRequired) {
      const required = Array.isArray(node.required) ? node.required : []
      for (const key of Object.keys(properties)) {
        if (!required.includes(key)) {
          throw new Problem(
            `${at}/properties/${
              escape(key)
            } is optional, and ${rules.name}'s strict mode needs every property required (make it required; a value that may be absent can be required and nullable, e.g. Schema.NullOr)`
          )
        }
      }
      if (node.required === undefined) out.required = []
    }
  }
  return out
}

/**
 * The schema for strict mode under `rules` (a copy; the input is not changed), or the reason it
 * cannot be strict (`#/properties/due is optional, …`).
 */
export const toStrict = (
  schema: JsonSchema.JsonSchema,
  rules: Rules
): { readonly schema: JsonSchema.JsonSchema } | { readonly problem: string } => {
  try {
    if (rules.objectRoot) {
      if (schema.type !== "object") return { problem: "# is not an object schema (`type: \"object\"`)" }
      if (schema.anyOf !== undefined) return { problem: "# is an anyOf, and the root must be one object schema" }
    }
    return { schema: walk(schema, "#", rules, 0) as JsonSchema.JsonSchema }
  } catch (error) {
    if (error instanceof Problem) return { problem: error.reason }
    throw error
  }
}
