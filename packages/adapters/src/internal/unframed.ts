/**
 * Collects unframed body lines (lines an SSE parser drops as unknown fields) until they form one
 * JSON object, for Gemini's raw `{"error": …}` tail (`test/fixtures/README.md` §1, "Gemini
 * exception").
 *
 * The collector tracks the bracket depth of the collected text, outside JSON strings, so it
 * parses the text exactly once per candidate object (when the depth returns to zero), never once
 * per line: the cost is linear in the tail's length whatever the lines contain. Lines before the
 * first one that starts with `{` are skipped; text that can never be one object (a closing bracket
 * too many, a string still open at a line end, an object that does not parse) is dropped and
 * collection starts over.
 *
 * @internal
 */
import type { AssemblyError } from "@toolgate/core"
import * as Predicate from "effect/Predicate"
import { providerError } from "./payload.js"

/** Largest unframed text collected for one object, in UTF-16 code units (1 MiB). */
const maxTail = 1024 * 1024

const OPEN_BRACE = 123
const OPEN_BRACKET = 91
const CLOSE_BRACE = 125
const CLOSE_BRACKET = 93
const QUOTE = 34
const BACKSLASH = 92

/** A collector of unframed lines. */
export interface UnframedJson {
  /** Adds one line; returns the provider error once the lines form a JSON object with an `error` member. */
  readonly push: (line: string) => AssemblyError.ProviderStreamError | undefined
  /** Drops what was collected (an SSE event arrived in between). */
  readonly reset: () => void
}

/** Creates a collector. */
export const make = (): UnframedJson => {
  let lines: Array<string> = []
  let size = 0
  let depth = 0
  let inString = false
  let escaped = false

  const reset = () => {
    lines = []
    size = 0
    depth = 0
    inString = false
    escaped = false
  }

  const push = (line: string): AssemblyError.ProviderStreamError | undefined => {
    if (lines.length === 0) {
      const start = line.trimStart()
      if (start.charCodeAt(0) !== OPEN_BRACE) return undefined
    }
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i)
      if (inString) {
        if (escaped) escaped = false
        else if (c === BACKSLASH) escaped = true
        else if (c === QUOTE) inString = false
      } else if (c === QUOTE) {
        inString = true
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        depth++
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--
        if (depth < 0) {
          reset()
          return undefined
        }
      }
    }
    // A JSON string cannot span lines: this text will never parse.
    if (inString) {
      reset()
      return undefined
    }
    lines.push(line)
    size += line.length + 1
    if (size > maxTail) {
      reset()
      return undefined
    }
    if (depth > 0) return undefined
    const text = lines.join("\n")
    reset()
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      return undefined
    }
    if (!Predicate.isObject(value) || value.error === undefined || value.error === null) return undefined
    return providerError(value.error, ["status", "code"])
  }

  return { push, reset }
}
