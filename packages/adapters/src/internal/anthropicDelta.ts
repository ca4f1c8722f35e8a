/**
 * The Messages API's `content_block_delta` payload in the API's own spelling, read without
 * building its objects. Nearly every event of a stream is one (every Anthropic capture in
 * `test/fixtures` writes them so; the rules they follow are its README's §5); the Anthropic decoder
 * reads those here and every other payload with `JSON.parse` and its checks.
 *
 * @internal
 */

/** What a `content_block_delta` carries: text, tool input, or a delta of another type (ignored). */
export type DeltaKind = typeof TEXT_DELTA | typeof INPUT_DELTA | typeof OTHER_DELTA

/** A `text_delta` (its `text`). */
export const TEXT_DELTA = 1
/** An `input_json_delta` (its `partial_json`). */
export const INPUT_DELTA = 2
/** A delta of any other type. */
export const OTHER_DELTA = 3
/** A payload not in the wire spelling: read it with `JSON.parse`. */
export const NOT_WIRE_FORM = 0

const deltaHead = "{\"type\":\"content_block_delta\",\"index\":"
const inputHead = ",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":"
const textHead = ",\"delta\":{\"type\":\"text_delta\",\"text\":"
const QUOTE = 34

/**
 * The reading of a `content_block_delta` payload in the exact spelling the Messages API writes,
 * `{"type":"content_block_delta","index":N,"delta":{"type":"input_json_delta","partial_json":S}}`
 * or the same with `"text_delta"` and `"text"`: that prefix, a JSON integer written without sign,
 * fraction, exponent or leading zero (at most 15 digits, so a safe integer), that middle, one JSON
 * string literal `S` and `}}`. Such a payload is exactly one JSON object with those members and no
 * others, so this reading gives what `JSON.parse` of the whole payload gives: `S` itself is
 * parsed by `JSON.parse` (its escapes, surrogates and control characters are JSON's). Any other
 * payload (other whitespace or key order, another member, a string that is not one literal) is
 * `NOT_WIRE_FORM` and goes through `JSON.parse`. One per stream: after a read that is not
 * `NOT_WIRE_FORM`, `index` and `value` hold that payload's index and string.
 */
export class WireDelta {
  index = 0
  value = ""

  read(data: string): DeltaKind | typeof NOT_WIRE_FORM {
    if (!data.startsWith(deltaHead)) return NOT_WIRE_FORM
    let i = deltaHead.length
    let index = data.charCodeAt(i) - 48
    if (!(index >= 0 && index <= 9)) return NOT_WIRE_FORM
    i++
    if (index > 0) {
      for (const last = i + 14; i < last; i++) {
        const digit = data.charCodeAt(i) - 48
        if (!(digit >= 0 && digit <= 9)) break
        index = index * 10 + digit
      }
    }
    let kind: DeltaKind
    if (data.startsWith(inputHead, i)) {
      kind = INPUT_DELTA
      i += inputHead.length
    } else if (data.startsWith(textHead, i)) {
      kind = TEXT_DELTA
      i += textHead.length
    } else return NOT_WIRE_FORM
    const end = data.length - 2
    if (data.charCodeAt(i) !== QUOTE || !data.endsWith("}}")) return NOT_WIRE_FORM
    let value: unknown
    try {
      value = JSON.parse(data.slice(i, end))
    } catch {
      return NOT_WIRE_FORM
    }
    if (typeof value !== "string") return NOT_WIRE_FORM
    this.index = index
    this.value = value
    return kind
  }
}
