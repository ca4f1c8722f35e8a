/**
 * The assembler's arithmetic on a tool call's arguments text: its UTF-8 length (for the size limit,
 * counted without encoding), whether it is one JSON value, and its parse into the arguments object
 * with the depth limit.
 *
 * @internal
 */
import { excerpt } from "../AssemblyError.js"

/** Whether a UTF-16 code unit is a high (leading) surrogate. */
export const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff

/** Whether a UTF-16 code unit is a low (trailing) surrogate. */
export const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff
/**
 * UTF-8 length of a string, counting a surrogate pair as 4 bytes and a lone surrogate as 3 (the
 * U+FFFD it is encoded as). A pair split across two strings is counted 3 + 3 here; the assembler
 * corrects that at the seam.
 */
export const utf8Length = (s: string): number => {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4
        i++
      } else n += 3
    } else n += 3
  }
  return n
}

/** Whether a text is exactly one JSON value (of any type). */
export const isOneJsonValue = (s: string): boolean => {
  if (s.length === 0) return false
  try {
    JSON.parse(s)
    return true
  } catch {
    return false
  }
}

/**
 * The parsed arguments object, or why the text is not exactly one JSON object (empty text is `{}`;
 * nesting deeper than `maxDepth` is refused).
 */
export const parse = (s: string, maxDepth: number): Record<string, unknown> | string => {
  if (s.length === 0) return {}
  let value: unknown
  try {
    value = JSON.parse(s)
  } catch (e) {
    return excerpt(e instanceof Error ? e.message : String(e))
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return `the arguments are ${
      value === null ? "null" : Array.isArray(value) ? "an array" : typeof value
    }, not an object`
  }
  if (deeperThan(value, maxDepth, 1)) return `the arguments nest deeper than ${maxDepth} levels`
  return value as Record<string, unknown>
}

/** Whether a parsed JSON value nests objects and arrays deeper than `limit`; stops at `limit + 1`. */
const deeperThan = (value: object, limit: number, depth: number): boolean => {
  if (depth > limit) return true
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i]
      if (typeof item === "object" && item !== null && deeperThan(item, limit, depth + 1)) return true
    }
    return false
  }
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key]
    if (typeof item === "object" && item !== null && deeperThan(item, limit, depth + 1)) return true
  }
  return false
}
