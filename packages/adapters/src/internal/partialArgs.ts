/**
 * Vertex AI streamed function-call arguments (`streamFunctionCallArguments`): applying one
 * `partialArgs` entry (`{jsonPath, stringValue|numberValue|boolValue|nullValue, willContinue}`)
 * to the arguments object a streamed call is building (`test/fixtures/README.md` §6;
 * https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling#streaming-function-call-arguments).
 *
 * Paths are RFC 9535 singular queries (https://www.rfc-editor.org/rfc/rfc9535#name-normalized-paths):
 * `$` followed by `.name`, `['name']`, `["name"]` or `[n]` segments. Members are written with
 * `Object.defineProperty`, so a `__proto__` member is data, never the prototype.
 *
 * @internal
 */
import * as Predicate from "effect/Predicate"
import type { Json } from "./payload.js"

/** One step of a normalized JSON path: an object member name or an array index. */
type Segment = string | number

const isNameFirst = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c >= 0x80

const isDigit = (c: number) => c >= 48 && c <= 57

/**
 * Parses an RFC 9535 singular query (`$`, then `.name`, `['name']`, `["name"]` or `[n]`
 * segments). Returns `undefined` for anything else (wildcards, slices, filters, negative
 * indices): those cannot address one place to write.
 */
export const parseJsonPath = (path: string): Array<Segment> | undefined => {
  if (path.charCodeAt(0) !== 36 /* $ */) return undefined
  const segments: Array<Segment> = []
  let i = 1
  while (i < path.length) {
    const c = path.charCodeAt(i)
    if (c === 46 /* . */) {
      let j = i + 1
      if (j >= path.length || !isNameFirst(path.charCodeAt(j))) return undefined
      j++
      while (j < path.length) {
        const d = path.charCodeAt(j)
        if (!(isNameFirst(d) || isDigit(d))) break
        j++
      }
      segments.push(path.slice(i + 1, j))
      i = j
    } else if (c === 91 /* [ */) {
      const q = path.charCodeAt(i + 1)
      if (q === 39 /* ' */ || q === 34 /* " */) {
        let j = i + 2
        let name = ""
        while (j < path.length && path.charCodeAt(j) !== q) {
          if (path.charCodeAt(j) === 92 /* \ */) {
            const escaped = unescapeAt(path, j)
            if (escaped === undefined) return undefined
            name += escaped.text
            j = escaped.next
          } else {
            name += path[j]
            j++
          }
        }
        if (j >= path.length || path.charCodeAt(j + 1) !== 93 /* ] */) return undefined
        segments.push(name)
        i = j + 2
      } else {
        let j = i + 1
        while (j < path.length && isDigit(path.charCodeAt(j))) j++
        if (j === i + 1 || path.charCodeAt(j) !== 93) return undefined
        const digits = path.slice(i + 1, j)
        if (digits.length > 1 && digits.charCodeAt(0) === 48) return undefined
        const n = Number(digits)
        if (!Number.isSafeInteger(n)) return undefined
        segments.push(n)
        i = j + 1
      }
    } else {
      return undefined
    }
  }
  return segments
}

const simpleEscapes: Record<string, string> = {
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  "/": "/",
  "\\": "\\",
  "'": "'",
  "\"": "\""
}

/** The escape sequence starting at the backslash at `at`, per RFC 9535 §2.3.1.2. */
const unescapeAt = (path: string, at: number): { readonly text: string; readonly next: number } | undefined => {
  const c = path[at + 1]
  if (c === undefined) return undefined
  const simple = simpleEscapes[c]
  if (simple !== undefined) return { text: simple, next: at + 2 }
  if (c === "u") {
    const hex = path.slice(at + 2, at + 6)
    if (!/^[0-9a-fA-F]{4}$/.test(hex)) return undefined
    return { text: String.fromCharCode(parseInt(hex, 16)), next: at + 6 }
  }
  return undefined
}

/**
 * Applies one `partialArgs` entry to the call's arguments object. Returns why the entry is
 * unusable, or `undefined` when it was applied. String pieces for one path concatenate; any
 * other write must land on an empty place (a new member, or the next array element).
 */
export const applyPartialArg = (root: Json, entry: unknown): string | undefined => {
  if (!Predicate.isObject(entry)) return "not an object"
  if (typeof entry.jsonPath !== "string") return "no string `jsonPath`"
  const path = parseJsonPath(entry.jsonPath)
  if (path === undefined || path.length === 0) return `\`jsonPath\` ${entry.jsonPath} is not a member path`
  let value: unknown
  let kinds = 0
  if (entry.stringValue !== undefined) {
    kinds++
    if (typeof entry.stringValue !== "string") return "`stringValue` is not a string"
    value = entry.stringValue
  }
  if (entry.numberValue !== undefined) {
    kinds++
    if (typeof entry.numberValue !== "number" || !Number.isFinite(entry.numberValue)) {
      return "`numberValue` is not a number"
    }
    value = entry.numberValue
  }
  if (entry.boolValue !== undefined) {
    kinds++
    if (typeof entry.boolValue !== "boolean") return "`boolValue` is not a boolean"
    value = entry.boolValue
  }
  if ("nullValue" in entry) {
    kinds++
    if (entry.nullValue !== null && entry.nullValue !== "NULL_VALUE") return "`nullValue` is not null"
    value = null
  }
  if (kinds !== 1) return "it needs exactly one of stringValue, numberValue, boolValue, nullValue"
  let container: Json | Array<unknown> = root
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!
    const nextIsIndex = typeof path[i + 1] === "number"
    const child = readSlot(container, key)
    if (child === invalid) return `\`jsonPath\` ${entry.jsonPath} does not fit the arguments built so far`
    if (child === undefined) {
      const created: Json | Array<unknown> = nextIsIndex ? [] : {}
      writeSlot(container, key, created)
      container = created
    } else if (nextIsIndex ? Array.isArray(child) : Predicate.isObject(child)) {
      container = child as Json | Array<unknown>
    } else {
      return `\`jsonPath\` ${entry.jsonPath} goes through a value that is not a container`
    }
  }
  const last = path[path.length - 1]!
  const current = readSlot(container, last)
  if (current === invalid) return `\`jsonPath\` ${entry.jsonPath} does not fit the arguments built so far`
  if (current === undefined) {
    writeSlot(container, last, value)
    return undefined
  }
  if (typeof current === "string" && typeof value === "string") {
    writeSlot(container, last, current + value)
    return undefined
  }
  return `\`jsonPath\` ${entry.jsonPath} already holds a value`
}

const invalid = Symbol("invalid")

/**
 * What a container holds at a key: the value, `undefined` for an empty place that may be written
 * (a missing member, the array's next element), or `invalid` when the key cannot address it (a
 * name on an array, an index on an object, an index past the next element).
 */
const readSlot = (container: Json | Array<unknown>, key: Segment): unknown => {
  if (Array.isArray(container)) {
    if (typeof key !== "number" || key > container.length) return invalid
    return key === container.length ? undefined : container[key]
  }
  if (typeof key !== "string") return invalid
  return Object.hasOwn(container, key) ? container[key] : undefined
}

const writeSlot = (container: Json | Array<unknown>, key: Segment, value: unknown): void => {
  if (Array.isArray(container)) container[key as number] = value
  else Object.defineProperty(container, key, { value, enumerable: true, writable: true, configurable: true })
}
