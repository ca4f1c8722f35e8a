/**
 * The structure of a tool's JSON Schema, before ajv sees it: its dialect (from `$schema`, or from
 * the keyword forms it uses), its subschemas by keyword, and the check that rejects a schema no
 * validator can finish (a chain of `$ref`s and in-place keywords that never consumes a value).
 *
 * @internal
 */

/**
 * The dialects toolgate validates. Draft-06 schemas are validated as draft-07 (a superset that
 * only adds keywords).
 */
export type Dialect = "2020-12" | "2019-09" | "draft-07"

export type Json = { readonly [key: string]: unknown }
export const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const metaSchemas: ReadonlyArray<readonly [RegExp, Dialect]> = [
  [/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/, "2020-12"],
  [/^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/, "2019-09"],
  [/^https?:\/\/json-schema\.org\/draft-0[67]\/schema#?$/, "draft-07"]
]

/** The `$schema` ajv knows for each dialect (a draft-06 `$schema` is replaced by it). */
export const metaSchemaUri: Record<Dialect, string> = {
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
export const dialectOf = (schema: Json): Dialect | { readonly unsupported: string } => {
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
export const inPlaceCycle = (root: Json, dialect: Dialect): ReadonlyArray<string> | undefined => {
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
