import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as ArgumentPath from "../src/internal/argumentPath.js"

const Name = Schema.String.check(Schema.isMinLength(1))
const Index = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 999_999 }))
const Step = Schema.Union([Name, Index, Schema.Literal("*")])

const segmentsOf = (first: string, rest: ReadonlyArray<string | number>): ArgumentPath.Path => [
  first,
  ...rest.map((s) => s === "*" ? ArgumentPath.each : s)
]

describe("argument paths", () => {
  it.prop(
    "any path's canonical text parses back to the same path",
    { first: Name, rest: Schema.Array(Step) },
    ({ first, rest }) => {
      const path = segmentsOf(first, rest)
      const text = ArgumentPath.format(path)
      assert.deepStrictEqual(ArgumentPath.parse(text), path)
    },
    { arbitrary: { runs: 300 } }
  )

  it.each(
    [
      ["lead_id", ["lead_id"]],
      ["contact.email", ["contact", "email"]],
      ["items[0].sku", ["items", 0, "sku"]],
      ["[\"a.b\"][2]", ["a.b", 2]],
      ["[\"q\\\"uote\"]", ["q\"uote"]]
    ] as const
  )("parses %s", (text, path) => {
    assert.deepStrictEqual(ArgumentPath.parse(text), path)
  })

  it.each(["", ".a", "a.", "a[", "a[-1]", "a[01]", "a b", "a]", "[\"x\"y]", "a[\"x]"])("refuses %j", (text) => {
    assert.strictEqual(typeof ArgumentPath.parse(text), "string")
  })

  it.prop(
    "omit never changes its input, and what it removes is gone",
    { a: Schema.String, b: Schema.String, n: Schema.Int },
    ({ a, b, n }) => {
      const value = { keep: n, note: a, items: [{ note: b, qty: n }, { qty: 1 }] }
      const before = JSON.stringify(value)
      const out = ArgumentPath.omit(value, [["note"], ["items", ArgumentPath.each, "note"]])
      assert.strictEqual(JSON.stringify(value), before)
      assert.deepStrictEqual(out, { keep: n, items: [{ qty: n }, { qty: 1 }] })
    }
  )

  it("omit keeps a member named __proto__ an own member", () => {
    const value = JSON.parse(`{"__proto__": {"x": 1}, "note": "n"}`)
    const out = ArgumentPath.omit(value, [["note"]]) as Record<string, unknown>
    assert.deepStrictEqual(Object.keys(out), ["__proto__"])
    assert.isTrue(Object.hasOwn(out, "__proto__"))
  })
})
