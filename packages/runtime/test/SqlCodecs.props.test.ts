/**
 * The claim and complete statements, which every execution runs, read their parameters and rows
 * without `Schema` when they are in the usual shape (`Codec.fast` in `src/internal/sqlCodecs.ts`).
 * These tests hold that reading to the schemas: for any request (any field of any kind: the
 * usual one, another string or number, a `bigint`, `null`, `undefined`, a valid or an invalid
 * `Date`, a date string, an object) the fast parameters, where they answer, are those of the
 * schema's encoding, and they never answer for a request the schema refuses; likewise for any
 * row. And they do answer for every request and row in the usual shape, so the tests are not
 * vacuous. Values that only pose as requests or rows (arrays or functions carrying the fields, a
 * field whose getter changes its answer) are read as the schema reads them, or left to it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Exit, Schema } from "effect"
import * as Codecs from "../src/internal/sqlCodecs.js"

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

/** Values of every kind a field could be given. */
const others: ReadonlyArray<unknown> = [
  "",
  "p",
  "\ud800",
  "reexecute",
  "reconcile",
  "manual",
  "in_progress",
  "succeeded",
  "unknown",
  "released",
  "12",
  "-3",
  "2026-01-01T00:00:00.000Z",
  "not a date",
  0,
  -0,
  1,
  3,
  30_000,
  1.5,
  -1,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  0n,
  12n,
  -5n,
  null,
  undefined,
  new Date(0),
  new Date(Number.NaN),
  new Date(8.64e15),
  true,
  {},
  [],
  { fence: 1n }
]

/** A value built from `usual` (the field's usual values) where the choice says so, else another kind. */
const fieldsOf = (usual: Record<string, ReadonlyArray<unknown>>, choices: ReadonlyArray<number>) => {
  const out: Record<string, unknown> = {}
  Object.keys(usual).forEach((field, i) => {
    const choice = choices[i % choices.length] + i
    // most fields keep a usual value, so requests with one or two odd fields are common
    if (choice % 4 !== 0) out[field] = usual[field][choice % usual[field].length]
    else if (choice % 8 === 0) return // the field is absent
    else out[field] = others[choice % others.length]
  })
  return out
}

const hash = `tg1:sha256:${"a".repeat(64)}`
const dates = [new Date(0), new Date("2026-12-03T10:00:00.000Z")]

const usualClaim = {
  scope: ["p", "", "tenant\u00e9"],
  key: [hash, "k"],
  tool: ["Touch", "book_meeting"],
  fingerprint: [hash],
  arguments: [null, "{\"leadId\":\"x\"}", ""],
  owner: ["abc:1"],
  leaseMs: [30_000, 1],
  retentionMs: [86_400_000],
  maxAttempts: [3, 1],
  recovery: ["reexecute", "reconcile", "manual"],
  now: [null, ...dates]
}
const usualClaimRow = {
  fence: [1n, 12n, 9_007_199_254_740_993n],
  attempt: [1, 2],
  maxAttempts: [3],
  generation: [0, 4],
  previous: [null, "released", "unknown", "in_progress", "succeeded", "failed"],
  recovery: ["reexecute", "reconcile", "manual"],
  leaseExpiresAt: dates
}
const usualComplete = {
  scope: ["p", ""],
  key: [hash],
  fence: [1n, 12n],
  now: [null, ...dates],
  result: ["{\"ok\":true}", "", "\u00e9"],
  externalRef: [null, "crm-1"],
  retentionMs: [86_400_000, 0]
}
const usualFenceRow = { fence: [1n, 12n] }

/** Every combination of the usual values' first two choices per field (the shapes the store sends). */
const usualShapes = (usual: Record<string, ReadonlyArray<unknown>>): Array<Record<string, unknown>> =>
  Object.entries(usual).reduce<Array<Record<string, unknown>>>(
    (acc, [field, values]) => acc.flatMap((partial) => values.map((value) => ({ ...partial, [field]: value }))),
    [{}]
  )

/** A statement's codecs, whichever statement. */
interface AnyCodec {
  readonly Request: Schema.Top
  readonly Row: Schema.Top
  readonly params: (request: never) => ReadonlyArray<unknown>
  readonly fast?: {
    readonly params: (request: never) => ReadonlyArray<unknown> | undefined
    readonly row: (row: unknown) => unknown
  } | undefined
}

/** The schema's reading of a request: its parameters, or that it refuses it. */
const schemaParams = (codec: AnyCodec, request: unknown): ReadonlyArray<unknown> | "refused" => {
  const encoded = Schema.encodeUnknownExit(codec.Request as Schema.Codec<unknown, unknown>)(request)
  return Exit.isSuccess(encoded) ? codec.params(encoded.value as never) : "refused"
}

/** The schema's reading of a row: the decoded row, or that it refuses it. */
const schemaRow = (codec: AnyCodec, row: unknown): unknown => {
  const decoded = Schema.decodeUnknownExit(codec.Row as Schema.Codec<unknown, unknown>)(row)
  return Exit.isSuccess(decoded) ? decoded.value : "refused"
}

const cases: ReadonlyArray<{
  readonly name: string
  readonly codec: AnyCodec
  readonly usual: Record<string, ReadonlyArray<unknown>>
  readonly usualRow: Record<string, ReadonlyArray<unknown>>
}> = [
  { name: "claim", codec: Codecs.claim, usual: usualClaim, usualRow: usualClaimRow },
  { name: "complete", codec: Codecs.complete, usual: usualComplete, usualRow: usualFenceRow }
]

describe("the claim and complete statements read without Schema", () => {
  for (const { codec, name, usual, usualRow } of cases) {
    const fast = codec.fast!

    it(`${name}: every request and row in the usual shape is read without Schema, as the schema reads it`, () => {
      const requests = usualShapes(usual)
      const rows = usualShapes(usualRow)
      expect(requests.length).toBeGreaterThan(1)
      for (const request of requests) {
        expect({ request, fast: fast.params(request as never) }).toEqual({
          request,
          fast: schemaParams(codec, request)
        })
      }
      for (const row of rows) {
        expect({ row, fast: fast.row(row) }).toEqual({ row, fast: schemaRow(codec, row) })
        // a column the statement does not alias is not part of the row read
        expect(fast.row({ ...row, extra: 1 })).toEqual(schemaRow(codec, { ...row, extra: 1 }))
      }
    })

    it.prop(
      `${name}: for any request, the fast parameters are the schema's, and absent where the schema refuses`,
      { choices: Arbitrary.array(int(0, 1_000_000), { minLength: 1, maxLength: 12 }) },
      ({ choices }) => {
        const request = fieldsOf(usual, choices)
        const read = fast.params(request as never)
        if (read === undefined) return
        expect({ request, read }).toEqual({ request, read: schemaParams(codec, request) })
      },
      { arbitrary: { runs: 5000 } }
    )

    it.prop(
      `${name}: for any row, the fast reading is the schema's, and absent where the schema refuses`,
      { choices: Arbitrary.array(int(0, 1_000_000), { minLength: 1, maxLength: 12 }) },
      ({ choices }) => {
        const row = fieldsOf(usualRow, choices)
        const read = fast.row(row)
        if (read === undefined) return
        expect({ row, read }).toEqual({ row, read: schemaRow(codec, row) })
      },
      { arbitrary: { runs: 5000 } }
    )

    it(`${name}: values that are not requests or rows (arrays and functions with their fields too) are left to the schema`, () => {
      const request = usualShapes(usual)[0]
      const row = usualShapes(usualRow)[0]
      /** A function carrying `fields` as its own properties (`Object.defineProperty`: `arguments` too). */
      const asFunction = (fields: Record<string, unknown>) =>
        Object.defineProperties(
          () => undefined,
          Object.fromEntries(Object.entries(fields).map(([k, value]) => [k, { value, enumerable: true }]))
        )
      for (
        const value of [null, undefined, 1, "row", [], new Date(0), Object.assign([], request), asFunction(request)]
      ) {
        expect(schemaParams(codec, value)).toBe("refused")
        expect(fast.params(value as never)).toBeUndefined()
      }
      for (const value of [null, undefined, 1, "row", [], Object.assign([], row), asFunction(row)]) {
        expect(schemaRow(codec, value)).toBe("refused")
        expect(fast.row(value)).toBeUndefined()
      }
    })

    it(`${name}: each field is read once, as the schema reads it (a getter that changes its answer)`, () => {
      /** `usual`'s first shape with `field` a getter answering `first`, then `then` on every later read. */
      const changing = (shape: Record<string, unknown>, field: string, first: unknown, then: unknown) => {
        let reads = 0
        return Object.defineProperty({ ...shape }, field, { enumerable: true, get: () => reads++ === 0 ? first : then })
      }
      const request = usualShapes(usual)[0]
      const row = usualShapes(usualRow)[0]
      for (const field of Object.keys(request)) {
        for (const [first, then] of [[request[field], 42n], [42n, request[field]]]) {
          const read = fast.params(changing(request, field, first, then) as never)
          if (read !== undefined) expect(read).toEqual(schemaParams(codec, changing(request, field, first, then)))
        }
      }
      for (const field of Object.keys(row)) {
        for (const [first, then] of [[row[field], "x"], ["x", row[field]]]) {
          const read = fast.row(changing(row, field, first, then))
          if (read !== undefined) expect(read).toEqual(schemaRow(codec, changing(row, field, first, then)))
        }
      }
      // the usual first answer is read and kept
      expect(fast.row(changing(row, "fence", 1n, "x"))).toEqual(schemaRow(codec, changing(row, "fence", 1n, "x")))
      expect(fast.row(changing(row, "fence", 1n, "x"))).toBeDefined()
    })
  }

  it("the odd values the properties draw from reach the schema's refusals (not vacuous)", () => {
    let refused = 0
    let declined = 0
    for (let seed = 0; seed < 2000; seed++) {
      const request = fieldsOf(usualClaim, [seed * 7919 % 1_000_000, seed])
      const bySchema = schemaParams(Codecs.claim, request)
      if (bySchema === "refused") refused++
      if (bySchema === "refused" && (Codecs.claim as AnyCodec).fast!.params(request as never) === undefined) declined++
    }
    expect(refused).toBeGreaterThan(100)
    expect(declined).toBe(refused)
  })
})
