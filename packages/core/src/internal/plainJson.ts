/**
 * Plain JSON for the keys: `pickOwn` (the key fields of the arguments), `sha256Hex` (the Web Crypto
 * digest), and the check that a value is plain JSON that hashes deterministically (the rules of the
 * `IdempotencyKey` module docs): finite numbers within ±(2^53−1), well-formed strings and keys (no
 * lone surrogates), plain objects and arrays, nested at most 512 levels.
 *
 * @internal
 */

const maxSafe = Number.MAX_SAFE_INTEGER

/** Deepest nesting of arrays and objects that is hashed; deeper values would overflow the stack. */
const maxDepth = 512

/** In `u` mode a surrogate pair is one code point, so this matches lone surrogates only. */
const loneSurrogate = /\p{Surrogate}/u
/** Whether a string has no lone surrogate (UTF-16 that encodes to UTF-8 unchanged). */
export const wellFormed = (text: string): boolean => !loneSurrogate.test(text)

const formatPath = (path: string, key: string | number): string =>
  typeof key === "number" ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`

/**
 * Checks that `value` is plain JSON that hashes deterministically; returns the path and reason of
 * the first violation, or `undefined`.
 */
export const violation = (value: unknown, path: string, depth = 0): { path: string; reason: string } | undefined => {
  switch (typeof value) {
    case "string":
      return wellFormed(value) ? undefined : { path, reason: "string contains a lone surrogate" }
    case "number":
      if (!Number.isFinite(value)) return { path, reason: "number is not finite" }
      if (Math.abs(value) > maxSafe) {
        return { path, reason: "number is beyond ±(2^53−1) and may have lost precision" }
      }
      return undefined
    case "boolean":
      return undefined
    case "object": {
      if (value === null) return undefined
      if (depth >= maxDepth) return { path, reason: `value is nested deeper than ${maxDepth} levels` }
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const found = violation(value[i], formatPath(path, i), depth + 1)
          if (found !== undefined) return found
        }
        return undefined
      }
      const proto = Object.getPrototypeOf(value)
      if (proto !== Object.prototype && proto !== null) return { path, reason: "value is not a plain JSON object" }
      for (const key of Object.keys(value)) {
        const child = (value as Record<string, unknown>)[key]
        if (!wellFormed(key)) return { path, reason: "object key contains a lone surrogate" }
        if (child === undefined) continue
        const found = violation(child, formatPath(path, key), depth + 1)
        if (found !== undefined) return found
      }
      return undefined
    }
    default:
      return { path, reason: `${typeof value} is not a JSON value` }
  }
}

/**
 * The own members `fields` of `args`, in `fields` order; a field `args` lacks is left out. Set with
 * `defineProperty`, not assignment: a JSON key `"__proto__"` must stay an own member.
 */
export const pickOwn = (args: object, fields: ReadonlyArray<string>): Record<string, unknown> => {
  const picked: Record<string, unknown> = {}
  for (const field of fields) {
    if (Object.hasOwn(args, field)) {
      Object.defineProperty(picked, field, {
        value: (args as Record<string, unknown>)[field],
        enumerable: true,
        writable: true,
        configurable: true
      })
    }
  }
  return picked
}

const utf8 = new TextEncoder()

/** The lowercase hex SHA-256 of a string's UTF-8 bytes, through the Web Crypto API. */
export const sha256Hex = async (text: string): Promise<string> => {
  const view = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", utf8.encode(text)))
  let out = ""
  for (let i = 0; i < view.length; i++) out += view[i]!.toString(16).padStart(2, "0")
  return out
}
