/**
 * JSON Schema compilation for tool arguments, on ajv 8 (Ajv2020, Ajv2019 and the draft-07 class,
 * formats from ajv-formats): the dialect of a schema, the check that rejects schemas no validator
 * can finish (a `$ref` cycle that never consumes a value), and ajv's errors as argument issues.
 *
 * @internal
 */
import type { ToolCall } from "@toolgate/core"
import { Ajv as AjvDraft07, type ErrorObject, type ValidateFunction } from "ajv"
import addFormats from "ajv-formats"
import { Ajv2019 } from "ajv/dist/2019.js"
import { Ajv2020 } from "ajv/dist/2020.js"

/**
 * The dialects toolgate validates. Draft-06 schemas are validated as draft-07 (a superset that
 * only adds keywords).
 */
type Dialect = "2020-12" | "2019-09" | "draft-07"

type Json = { readonly [key: string]: unknown }
const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const metaSchemas: ReadonlyArray<readonly [RegExp, Dialect]> = [
  [/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/, "2020-12"],
  [/^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/, "2019-09"],
  [/^https?:\/\/json-schema\.org\/draft-0[67]\/schema#?$/, "draft-07"]
]

/** The `$schema` ajv knows for each dialect (a draft-06 `$schema` is replaced by it). */
const metaSchemaUri: Record<Dialect, string> = {
  "2020-12": "https://json-schema.org/draft/2020-12/schema",
  "2019-09": "https://json-schema.org/draft/2019-09/schema",
  "draft-07": "http://json-schema.org/draft-07/schema#"
}

const escapePointer = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1")

/** Keywords whose value is one subschema. */
const single = [
  "additionalProperties",
  "propertyNames",
  "additionalItems",
  "contains",
  "not",
  "if",
  "then",
  "else",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contentSchema"
]
/** Keywords whose value is an array of subschemas. */
const arrays = ["allOf", "anyOf", "oneOf", "prefixItems"]
/** Keywords whose value is an object of subschemas. */
const maps = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"]
/** Keywords that apply their subschemas to the same value (they consume nothing of it). */
const inPlaceArrays = ["allOf", "anyOf", "oneOf"]
const refKeywords = ["$ref", "$dynamicRef", "$recursiveRef"]

/**
 * The subschemas of a schema with their location below it (`properties/name`, `items/0`): the
 * values of the keywords that hold schemas, never other members (a property named `items` is a
 * property).
 */
const subschemas = (node: Json): Array<readonly [string, unknown]> => {
  const out: Array<readonly [string, unknown]> = []
  for (const key of single) if (key in node) out.push([key, node[key]])
  const items = node.items
  if (Array.isArray(items)) items.forEach((item, i) => out.push([`items/${i}`, item]))
  else if (items !== undefined) out.push(["items", items])
  for (const key of arrays) {
    const list = node[key]
    if (Array.isArray(list)) list.forEach((item, i) => out.push([`${key}/${i}`, item]))
  }
  for (const key of maps) {
    const map = node[key]
    if (isObject(map)) {
      for (const [name, value] of Object.entries(map)) out.push([`${key}/${escapePointer(name)}`, value])
    }
  }
  return out
}

/** Whether a schema anywhere uses a keyword form that exists only before 2019-09. */
const usesDraft07Forms = (schema: unknown, depth = 0): boolean => {
  if (depth > 256 || !isObject(schema)) return false
  if (Array.isArray(schema.items) || "additionalItems" in schema || isObject(schema.dependencies)) return true
  return subschemas(schema).some(([, value]) => usesDraft07Forms(value, depth + 1))
}

/**
 * The dialect of a tool's schema: its `$schema` when it has one; otherwise draft-07 when it is
 * written in draft-07 forms (`definitions` at the root and no `$defs`, array-form `items`,
 * `additionalItems`, `dependencies`), else 2020-12, the dialect OpenAI and Anthropic document for
 * tool parameters. A string naming an unsupported `$schema`.
 */
const dialectOf = (schema: Json): Dialect | { readonly unsupported: string } => {
  if (typeof schema.$schema === "string") {
    const found = metaSchemas.find(([pattern]) => pattern.test(schema.$schema as string))
    return found === undefined ? { unsupported: schema.$schema } : found[1]
  }
  if (("definitions" in schema && !("$defs" in schema)) || usesDraft07Forms(schema)) return "draft-07"
  return "2020-12"
}

// ---------------------------------------------------------------------------------------------
// Schemas no validator can finish

/** Where a schema sits in the document (a JSON Pointer fragment) and the base URI its refs resolve against. */
interface Place {
  readonly location: string
  readonly base: string
}

/** A schema document indexed for `$ref` resolution: its resources (`$id`), anchors and places. */
class Index {
  readonly places = new Map<object, Place>()
  readonly resources = new Map<string, object>()
  readonly anchors = new Map<string, object>()
  constructor(readonly root: Json, readonly dialect: Dialect) {
    this.visit(root, "toolgate://tool/schema.json", "#")
  }

  visit(node: unknown, parentBase: string, location: string): void {
    if (!isObject(node) || this.places.has(node)) return
    let base = parentBase
    if (typeof node.$id === "string") {
      const url = safeUrl(node.$id, parentBase)
      if (url !== undefined) {
        if (url.hash !== "" && url.hash !== "#" && this.dialect === "draft-07") {
          this.anchors.set(url.href, node)
        } else {
          url.hash = ""
          base = url.href
          this.resources.set(base, node)
        }
      }
    }
    if (node === this.root) this.resources.set(base, node)
    for (const anchor of [node.$anchor, node.$dynamicAnchor]) {
      if (typeof anchor === "string") this.anchors.set(`${base}#${anchor}`, node)
    }
    this.places.set(node, { location, base })
    for (const [at, value] of subschemas(node)) this.visit(value, base, `${location}/${at}`)
  }

  /** The schema a reference names, or `undefined` when it names nothing in this document. */
  resolve(ref: string, base: string): unknown {
    const url = safeUrl(ref, base)
    if (url === undefined) return undefined
    const fragment = url.hash
    url.hash = ""
    const resource = this.resources.get(url.href)
    if (fragment === "" || fragment === "#") return resource
    if (!fragment.startsWith("#/")) return this.anchors.get(`${url.href}${fragment}`)
    if (resource === undefined) return undefined
    let target: unknown = resource
    let location = this.places.get(resource)?.location ?? "#"
    let targetBase = url.href
    for (const raw of fragment.slice(2).split("/")) {
      let segment: string
      try {
        segment = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~")
      } catch {
        return undefined
      }
      if (typeof target !== "object" || target === null || !Object.hasOwn(target, segment)) return undefined
      target = (target as Record<string, unknown>)[segment]
      location = `${location}/${escapePointer(segment)}`
      const place = isObject(target) ? this.places.get(target) : undefined
      if (place !== undefined) targetBase = place.base
    }
    // a location no keyword walk reached (inside an unknown keyword): index it now
    if (isObject(target) && !this.places.has(target)) this.visit(target, targetBase, location)
    return target
  }
}

const safeUrl = (ref: string, base: string): URL | undefined => {
  try {
    return new URL(ref, base)
  } catch {
    return undefined
  }
}

/** The subschemas a schema applies to the very value it is applied to. */
const inPlace = (index: Index, node: Json): Array<unknown> => {
  const out: Array<unknown> = []
  const base = index.places.get(node)?.base ?? "toolgate://tool/schema.json"
  for (const keyword of refKeywords) {
    if (typeof node[keyword] === "string") out.push(index.resolve(node[keyword] as string, base))
  }
  for (const keyword of inPlaceArrays) {
    const list = node[keyword]
    if (Array.isArray(list)) out.push(...list)
  }
  out.push(node.not)
  if ("if" in node) out.push(node.if, node.then, node.else)
  for (const keyword of ["dependentSchemas", "dependencies"]) {
    const map = node[keyword]
    if (isObject(map)) out.push(...Object.values(map).filter((value) => !Array.isArray(value)))
  }
  return out.filter(isObject)
}

/**
 * The first chain of schemas that applies itself to the same value without ever consuming a part
 * of it, as document locations (`["#/$defs/A", "#/$defs/B", "#/$defs/A"]`), or `undefined`.
 *
 * Such a chain loops forever in every validator (ajv, @cfworker/json-schema and
 * @hyperjump/json-schema all overflow the stack): `{ "$ref": "#" }`, `$defs` A → B → A, or a
 * schema that reaches itself through `allOf`/`anyOf`/`oneOf`/`not`/`if`/`then`/`else`/
 * `dependentSchemas` as well as `$ref`. Recursion through `properties`, `items` and the other
 * keywords that descend into the value is a finite tree and is not reported.
 */
const inPlaceCycle = (root: Json, dialect: Dialect): ReadonlyArray<string> | undefined => {
  const index = new Index(root, dialect)
  const state = new Map<object, "open" | "done">()
  const stack: Array<object> = []
  const label = (node: object) => index.places.get(node)?.location ?? "(a referenced schema)"
  const search = (node: Json): ReadonlyArray<string> | undefined => {
    state.set(node, "open")
    stack.push(node)
    for (const next of inPlace(index, node) as Array<Json>) {
      const seen = state.get(next)
      if (seen === "open") return [...stack.slice(stack.indexOf(next)), next].map(label)
      if (seen === undefined) {
        const found = search(next)
        if (found !== undefined) return found
      }
    }
    stack.pop()
    state.set(node, "done")
    return undefined
  }
  // a Map iterates the entries added while it is iterated: schemas a $ref reached late are searched too
  for (const node of index.places.keys()) {
    if (state.get(node) === undefined) {
      const found = search(node as Json)
      if (found !== undefined) return found
    }
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------
// Compilation

type AnyAjv = AjvDraft07 | Ajv2019 | Ajv2020

/** A finite number as `coefficient × 10^exponent`, from its shortest round-trip decimal form. */
const decimal = (n: number): readonly [bigint, number] => {
  const [mantissa, e = "0"] = String(Math.abs(n)).split("e")
  const [whole, fraction = ""] = mantissa!.split(".")
  return [BigInt(`${whole}${fraction}`), Number(e) - fraction.length]
}

/**
 * Whether `value` is a multiple of `divisor` in decimal arithmetic: JSON numbers are decimals,
 * and `19.99` is a multiple of `0.01`. ajv divides in binary floating point (`19.99 / 0.01` is
 * `1998.9999999999998`, so ajv rejects it; `1e21` passes as a multiple of 3); each number is read
 * back as the shortest decimal that round-trips, which is what the model wrote.
 */
const isMultipleOf = (value: number, divisor: number): boolean => {
  if (!Number.isFinite(value) || !Number.isFinite(divisor) || divisor <= 0) return false
  const [a, p] = decimal(value)
  const [b, q] = decimal(divisor)
  return p >= q ? (a * 10n ** BigInt(p - q)) % b === 0n : a % (b * 10n ** BigInt(q - p)) === 0n
}

const multipleOf = Object.assign(
  (divisor: number, value: number): boolean => {
    const ok = isMultipleOf(value, divisor)
    multipleOf.errors = ok ? [] : [{
      keyword: "multipleOf",
      message: `must be multiple of ${divisor}`,
      params: { multipleOf: divisor }
    }]
    return ok
  },
  { errors: [] as Array<Partial<ErrorObject>> }
)

/**
 * A new ajv instance of a dialect. Options: every error (`allErrors`), no coercion, no defaults,
 * no removal (ajv never changes the value), unknown keywords ignored as the specification says
 * (`strict: false`), known formats asserted (ajv-formats), unknown formats ignored, and
 * `multipleOf` in decimal arithmetic ({@link isMultipleOf}).
 */
const create = (dialect: Dialect): AnyAjv => {
  const options = { strict: false, allErrors: true, logger: false } as const
  const ajv = dialect === "2020-12"
    ? new Ajv2020(options)
    : dialect === "2019-09"
    ? new Ajv2019(options)
    : new AjvDraft07(options)
  ;(addFormats as unknown as (ajv: AnyAjv) => void)(ajv)
  ajv.removeKeyword("multipleOf")
  ajv.addKeyword({ keyword: "multipleOf", type: "number", schemaType: "number", errors: true, validate: multipleOf })
  return ajv
}

/**
 * Compiles a schema and removes it from the instance again, so that the next tool may use the
 * same `$id`; when a nested `$id` another tool left behind collides, on a fresh instance.
 */
const compileOnce = (ajv: AnyAjv, dialect: Dialect, schema: Json): ValidateFunction => {
  let validate: ValidateFunction
  try {
    validate = ajv.compile(schema)
  } catch (error) {
    if (!(error instanceof Error) || !/already exists|more than one schema/.test(error.message)) throw error
    return create(dialect).compile(schema)
  }
  ajv.removeSchema(schema)
  if (typeof schema.$id === "string") ajv.removeSchema(schema.$id)
  return validate
}

/** Ajv instances of one set of tools, one per dialect, created when first needed. */
export class Compiler {
  readonly #instances = new Map<Dialect, AnyAjv>()

  instance(dialect: Dialect): AnyAjv {
    let ajv = this.#instances.get(dialect)
    if (ajv === undefined) {
      ajv = create(dialect)
      this.#instances.set(dialect, ajv)
    }
    return ajv
  }

  /**
   * Compiles one schema: checks it against its dialect's meta-schema, rejects in-place cycles,
   * compiles it and runs it once on a few probe values (a stack overflow there is a schema that
   * cannot be validated). The validator, or a one-line reason.
   */
  compile(schema: Json): ValidateFunction | { readonly reason: string } {
    const dialect = dialectOf(schema)
    if (typeof dialect === "object") {
      return {
        reason: `its $schema ${
          JSON.stringify(dialect.unsupported)
        } is not supported (toolgate validates JSON Schema 2020-12, 2019-09, draft-07 and draft-06)`
      }
    }
    // ajv knows each meta-schema by one spelling (and draft-06 as draft-07)
    const target = typeof schema.$schema === "string" ? { ...schema, $schema: metaSchemaUri[dialect] } : schema
    const ajv = this.instance(dialect)
    try {
      if (!ajv.validateSchema(target)) return { reason: schemaErrors(ajv.errors ?? [], target) }
      const cycle = inPlaceCycle(target, dialect)
      if (cycle !== undefined) {
        return {
          reason: `its JSON Schema loops without consuming the value: ${
            cycle.join(" → ")
          } (each step applies a schema to the same value through $ref or allOf/anyOf/oneOf/not/if, so no validator can finish; a recursive schema must recurse through properties or items)`
        }
      }
      const validate = compileOnce(ajv, dialect, target)
      for (const probe of [{}, [], "", 0, null, true]) validate(probe)
      return validate
    } catch (error) {
      if (error instanceof RangeError) {
        return { reason: "its JSON Schema is nested too deeply or does not terminate (the stack overflowed)" }
      }
      return { reason: `its JSON Schema cannot be compiled: ${oneLine(error)}` }
    }
  }
}

const oneLine = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, "; ").slice(0, 300)

const hasUppercaseType = (schema: unknown, depth = 0): boolean => {
  if (depth > 256 || typeof schema !== "object" || schema === null) return false
  const s = schema as Json
  if (typeof s.type === "string" && /^[A-Z_]+$/.test(s.type)) return true
  return Object.values(s).some((value) => hasUppercaseType(value, depth + 1))
}

const schemaErrors = (errors: ReadonlyArray<ErrorObject>, schema: Json): string => {
  const first = errors.slice(0, 3).map((e) =>
    `${e.instancePath === "" ? "the root" : `#${e.instancePath}`} ${e.message}`
  )
  const more = errors.length > 3 ? `; and ${errors.length - 3} more` : ""
  const hint = hasUppercaseType(schema)
    ? " (uppercase types such as \"OBJECT\" are Gemini's OpenAPI types: they are read only in a Gemini functionDeclarations entry)"
    : ""
  return `its JSON Schema is invalid: ${first.join("; ")}${more}${hint}`
}

// ---------------------------------------------------------------------------------------------
// Errors as issues

const jsonType = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
    ? "array"
    : typeof value === "number"
    ? Number.isInteger(value) ? "integer" : "number"
    : typeof value

const short = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value)
  return text.length <= 60 ? text : `${text.slice(0, 57)}…`
}

/** An ajv `instancePath` (`/items/0/sku`) as path segments, array indices as numbers. */
const segments = (pointer: string, value: unknown): Array<PropertyKey> => {
  if (pointer === "") return []
  const out: Array<PropertyKey> = []
  let at: unknown = value
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.includes("~") ? raw.replaceAll("~1", "/").replaceAll("~0", "~") : raw
    if (Array.isArray(at)) {
      out.push(Number(key))
      at = at[Number(key)]
    } else {
      out.push(key)
      at = typeof at === "object" && at !== null ? (at as Record<string, unknown>)[key] : undefined
    }
  }
  return out
}

const valueAt = (value: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let at = value
  for (const key of path) {
    at = typeof at === "object" && at !== null
      ? (at as Record<PropertyKey, unknown>)[key]
      : undefined
  }
  return at
}

/**
 * ajv's errors for a value as argument issues, in ajv's order: where (`path`) and what
 * (`message`). A missing required member and an undeclared member point at the member itself; a
 * failed `anyOf`/`oneOf` lists each branch's errors before its own.
 */
export const issues = (errors: ReadonlyArray<ErrorObject>, value: unknown): Array<ToolCall.ArgumentIssue> => {
  const out: Array<ToolCall.ArgumentIssue> = []
  for (const error of errors) {
    const path = segments(error.instancePath, value)
    const params = error.params as Record<string, unknown>
    switch (error.keyword) {
      case "required":
        out.push({ path: [...path, String(params.missingProperty)], message: "is required" })
        break
      case "additionalProperties":
        out.push({
          path: [...path, String(params.additionalProperty)],
          message: "is not declared (additionalProperties is false)"
        })
        break
      case "unevaluatedProperties":
        out.push({
          path: [...path, String(params.unevaluatedProperty)],
          message: "is not declared (unevaluatedProperties is false)"
        })
        break
      case "type": {
        const expected = Array.isArray(params.type) ? params.type.join(" or ") : String(params.type)
        out.push({ path, message: `must be ${expected}, got ${jsonType(valueAt(value, path))}` })
        break
      }
      case "enum":
        out.push({
          path,
          message: `must be one of ${short(params.allowedValues)}, got ${short(valueAt(value, path))}`
        })
        break
      case "const":
        out.push({ path, message: `must be ${short(params.allowedValue)}` })
        break
      default:
        out.push({ path, message: error.message ?? `fails "${error.keyword}"` })
    }
  }
  return out
}
