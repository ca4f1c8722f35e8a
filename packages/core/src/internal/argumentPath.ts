/**
 * Paths into a call's arguments, as key policies name them (`lead_id`, `contact.email`,
 * `items[0].sku`, `items[*].note`, `["odd.name"]`): parsing, the canonical text form, reading the
 * value(s) at a path, removing what a path names, and whether a concrete path lies under a
 * pattern. The arguments are plain JSON (objects, arrays, scalars).
 *
 * @internal
 */

/** Every element of an array (`[*]`). @internal */
export const each: unique symbol = Symbol.for("@toolgate/core/argumentPath/each")

/** One step: a member name, an array index, or every element. @internal */
export type Segment = string | number | typeof each

/** A parsed path: at least one segment. @internal */
export type Path = ReadonlyArray<Segment>

/** Member names written without brackets: no `.`, `[`, `]`, `"` or white space. */
const bare = /^[^.[\]"\s]+$/

/** The canonical text of a path: `a.b[0][*]`, a member that needs it as `["a.b"]`. @internal */
export const format = (path: Path): string => {
  let out = ""
  for (const segment of path) {
    if (segment === each) out += "[*]"
    else if (typeof segment === "number") out += `[${segment}]`
    else if (bare.test(segment)) out += out === "" ? segment : `.${segment}`
    else out += `[${JSON.stringify(segment)}]`
  }
  return out
}

/**
 * Parses a path's text; the reason it cannot be read otherwise. Grammar: a member name or a
 * bracket, then any number of `.name`, `[n]` (a non-negative integer), `[*]` or `["name"]` (a
 * JSON string, for names with dots, brackets or spaces).
 *
 * @internal
 */
export const parse = (text: string): Path | string => {
  const out: Array<Segment> = []
  let i = 0
  const name = (): string | undefined => {
    const start = i
    while (i < text.length && !".[]\"".includes(text[i]) && !/\s/.test(text[i])) i++
    return i > start ? text.slice(start, i) : undefined
  }
  if (text.length === 0) return "a path is not empty"
  while (i < text.length) {
    const c = text[i]
    if (c === "[") {
      const close = text[i + 1] === "\"" ? closingQuote(text, i + 1) : text.indexOf("]", i)
      if (close < 0) return `an unclosed [ at character ${i + 1}`
      const end = text[i + 1] === "\"" ? close + 1 : close
      if (text[end] !== "]") return `a quoted member must be followed by ] at character ${end + 1}`
      const inner = text.slice(i + 1, end)
      if (inner === "*") out.push(each)
      else if (/^(0|[1-9][0-9]{0,8})$/.test(inner)) out.push(Number(inner))
      else if (inner.startsWith("\"")) {
        try {
          out.push(JSON.parse(inner) as string)
        } catch {
          return `${inner} is not a JSON string`
        }
      } else return `[${inner}] is not an index, [*] or a quoted name`
      i = end + 1
    } else if (c === "." && out.length > 0) {
      i++
      const member = name()
      if (member === undefined) return `a name must follow the . at character ${i}`
      out.push(member)
    } else if (out.length === 0) {
      const member = name()
      if (member === undefined) return `unexpected ${JSON.stringify(c)} at character ${i + 1}`
      out.push(member)
    } else {
      return `unexpected ${JSON.stringify(c)} at character ${i + 1}`
    }
  }
  return out
}

/** The index of the quote that closes the JSON string opening at `open`, or -1. */
const closingQuote = (text: string, open: number): number => {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === "\\") i++
    else if (text[i] === "\"") return i
  }
  return -1
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** What a path reads: the value (an array of values under `[*]`), or where it stops. @internal */
export type Found = { readonly found: true; readonly value: unknown } | {
  readonly found: false
  readonly missing: string
}

/**
 * The value at `path` in `value`. Under `[*]`, the array of every element's value; a member that
 * is absent, an index past the end, or a step into a scalar is missing (the path to the first
 * missing step is given).
 *
 * @internal
 */
export const get = (value: unknown, path: Path, from = 0, walked: Array<Segment> = []): Found => {
  let current = value
  for (let i = from; i < path.length; i++) {
    const segment = path[i]
    if (segment === each) {
      if (!Array.isArray(current)) return { found: false, missing: format([...walked, each]) }
      const values: Array<unknown> = []
      for (let j = 0; j < current.length; j++) {
        const found = get(current[j], path, i + 1, [...walked, j])
        if (!found.found) return found
        values.push(found.value)
      }
      return { found: true, value: values }
    }
    walked.push(segment)
    if (typeof segment === "number") {
      if (!Array.isArray(current) || segment >= current.length) return { found: false, missing: format(walked) }
      current = current[segment]
    } else {
      if (!isObject(current) || !Object.hasOwn(current, segment) || current[segment] === undefined) {
        return { found: false, missing: format(walked) }
      }
      current = current[segment]
    }
  }
  return { found: true, value: current }
}

/** Sets an own enumerable member, `__proto__` included (a JSON key, not the prototype). */
const define = (target: Record<string, unknown>, key: string, value: unknown): void => {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

/**
 * `value` without the members `paths` name (each path ends with a member name), copied along
 * the paths only: what is not removed is shared with `value`. A path that names nothing removes
 * nothing.
 *
 * @internal
 */
export const omit = (value: unknown, paths: ReadonlyArray<Path>): unknown => {
  let out = value
  for (const path of paths) out = omitOne(out, path, 0)
  return out
}

const omitOne = (value: unknown, path: Path, i: number): unknown => {
  const segment = path[i]
  const last = i === path.length - 1
  if (segment === each || typeof segment === "number") {
    if (!Array.isArray(value) || last) return value
    if (segment === each) return value.map((element) => omitOne(element, path, i + 1))
    if (segment >= value.length) return value
    const copy = value.slice()
    copy[segment] = omitOne(value[segment], path, i + 1)
    return copy
  }
  if (!isObject(value) || !Object.hasOwn(value, segment)) return value
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(value)) {
    if (key === segment) {
      if (!last) define(copy, key, omitOne(value[key], path, i + 1))
    } else {
      define(copy, key, value[key])
    }
  }
  return copy
}

/**
 * Whether the concrete path `path` (members and indexes) is `pattern` or lies under it (`[*]`
 * matches any index).
 *
 * @internal
 */
export const isUnder = (path: Path, pattern: Path): boolean => {
  if (path.length < pattern.length) return false
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]
    const s = path[i]
    if (p === each ? typeof s !== "number" : p !== s) return false
  }
  return true
}

/** Whether two patterns can name the same value (one is a prefix of the other, `[*]` matching any index). @internal */
export const overlaps = (a: Path, b: Path): boolean => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a[i]
    const y = b[i]
    if (x === each || y === each) {
      if (typeof x === "string" || typeof y === "string") return false
      continue
    }
    if (x !== y) return false
  }
  return true
}
