import { assert, describe, it } from "@effect/vitest"
import { IdempotencyKey as K, type ToolCall } from "@toolgate/core"
import { ValidatedCall } from "@toolgate/testing"
import { Array as Arr, Effect, Result, Schema } from "effect"
import { Tool } from "effect/ai"

const scope: K.Scope = { tenant: "acme", turn: "conv-42/msg-7" }

const keysOf = (
  s: K.Scope,
  tool: string,
  args: unknown,
  keyFields: ReadonlyArray<string> | undefined,
  ordinal: number
) =>
  Effect.gen(function*() {
    const m = yield* Effect.fromResult(K.material(tool, args, keyFields))
    return { m, key: yield* K.intentKey(s, m, ordinal), fingerprint: yield* K.fingerprint(m) }
  })

/**
 * Golden vectors: fixed inputs and the hashes committed when scheme `tg1` was introduced. A change
 * here re-keys every stored record; it must come with a new scheme id, never an edit. The first
 * hash was checked independently with `printf '%s' '<intentInput>' | sha256sum`.
 */
const golden: ReadonlyArray<{
  readonly name: string
  readonly scope: K.Scope
  readonly tool: string
  readonly args: unknown
  readonly keyFields?: ReadonlyArray<string>
  readonly ordinal: number
  readonly canonicalKeyFields: string
  readonly key: string
  readonly fingerprint: string
}> = [
  {
    name: "plain",
    scope,
    tool: "CreateTask",
    args: { title: "Call back", dealId: "D-1" },
    ordinal: 0,
    canonicalKeyFields: `{"dealId":"D-1","title":"Call back"}`,
    key: "tg1:sha256:0ec1a22bf8a9f3886f00213cf6e37f3d57190bc66fed86e9f62b303f76e5bb4c",
    fingerprint: "tg1:sha256:725ec4fc55d194b9ded753f77acc844879fbacfa0ab9444c06ac649eaf2579e0"
  },
  {
    name: "key order does not matter",
    scope,
    tool: "CreateTask",
    args: { dealId: "D-1", title: "Call back" },
    ordinal: 0,
    canonicalKeyFields: `{"dealId":"D-1","title":"Call back"}`,
    key: "tg1:sha256:0ec1a22bf8a9f3886f00213cf6e37f3d57190bc66fed86e9f62b303f76e5bb4c",
    fingerprint: "tg1:sha256:725ec4fc55d194b9ded753f77acc844879fbacfa0ab9444c06ac649eaf2579e0"
  },
  {
    name: "second identical call in the turn",
    scope,
    tool: "CreateTask",
    args: { title: "Call back", dealId: "D-1" },
    ordinal: 1,
    canonicalKeyFields: `{"dealId":"D-1","title":"Call back"}`,
    key: "tg1:sha256:1c820682ac17725c7e50c9f7acc46e9baf4b9b29a8c6634154683424b72c8eae",
    fingerprint: "tg1:sha256:725ec4fc55d194b9ded753f77acc844879fbacfa0ab9444c06ac649eaf2579e0"
  },
  {
    name: "another turn",
    scope: { tenant: "acme", turn: "conv-42/msg-8" },
    tool: "CreateTask",
    args: { title: "Call back", dealId: "D-1" },
    ordinal: 0,
    canonicalKeyFields: `{"dealId":"D-1","title":"Call back"}`,
    key: "tg1:sha256:53efa08eb515149c6b965e655fda2e9d15742ee86ee691b475db204a8918a815",
    fingerprint: "tg1:sha256:725ec4fc55d194b9ded753f77acc844879fbacfa0ab9444c06ac649eaf2579e0"
  },
  {
    name: "declared key fields",
    scope,
    tool: "UpdateStage",
    args: { dealId: "D-1", stage: "won", note: "closed it" },
    keyFields: ["dealId", "stage"],
    ordinal: 0,
    canonicalKeyFields: `{"dealId":"D-1","stage":"won"}`,
    key: "tg1:sha256:dac3c38ed2cc3b38f0d35c24f56ae60f48d51a8e62377b0ecfbc976d216553ea",
    fingerprint: "tg1:sha256:937b52758d5de4d30f670d376bc61b5fde63cd65e75854a0dc9d9324b101f00e"
  },
  {
    name: "declared key fields, other free text: same key, other fingerprint",
    scope,
    tool: "UpdateStage",
    args: { note: "we closed", stage: "won", dealId: "D-1" },
    keyFields: ["dealId", "stage"],
    ordinal: 0,
    canonicalKeyFields: `{"dealId":"D-1","stage":"won"}`,
    key: "tg1:sha256:dac3c38ed2cc3b38f0d35c24f56ae60f48d51a8e62377b0ecfbc976d216553ea",
    fingerprint: "tg1:sha256:b176d962f867307d7fb23a617148051a29b72fce64eab61d2f7b5e4a39f073b2"
  },
  {
    name: "unicode NFC",
    scope,
    tool: "Rename",
    args: { name: "caf\u00e9 \u{1F600}" },
    ordinal: 0,
    canonicalKeyFields: `{"name":"caf\u00e9 \u{1F600}"}`,
    key: "tg1:sha256:6255ced334d8d15565d5f67884786fb4f3eea90c66a0960fe19d08f7a732112b",
    fingerprint: "tg1:sha256:3057722306cfa71b29970fba31efa566c007b9170ef10763dd5c9ced03177db4"
  },
  {
    name: "unicode NFD is not normalised (JCS)",
    scope,
    tool: "Rename",
    args: { name: "cafe\u0301 \u{1F600}" },
    ordinal: 0,
    canonicalKeyFields: `{"name":"cafe\u0301 \u{1F600}"}`,
    key: "tg1:sha256:f9d8e4e13adbe32183bbd31e0c9a20391f896ed0ee0f7b164dbb47a3c3bd81ac",
    fingerprint: "tg1:sha256:bf9547aa7d9c01fcc671c746aa581a0d6f56ea89245dd0ef5fb86ead89fc6315"
  },
  {
    name: "RFC 8785 §3.2.3 member order (UTF-16 code units)",
    scope,
    tool: "Sort",
    args: {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    },
    ordinal: 0,
    canonicalKeyFields:
      `{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}`,
    key: "tg1:sha256:130922dc00928b0aebc1355684701facffe8f21d863d6752ad78fb5c16a65e30",
    fingerprint: "tg1:sha256:3d86327233694f34a8329ce3211c6c1af7ef388edd0b1fcb57e5b66e7b525bef"
  },
  {
    name: "numbers (ECMAScript shortest form)",
    scope,
    tool: "Amount",
    args: { a: 1, b: 1.5, c: -0, d: 2.5e-8, e: 0.1, f: 5e-324, g: 9007199254740991, h: 1e-7, i: 333333333.3333333 },
    ordinal: 0,
    canonicalKeyFields:
      `{"a":1,"b":1.5,"c":0,"d":2.5e-8,"e":0.1,"f":5e-324,"g":9007199254740991,"h":1e-7,"i":333333333.3333333}`,
    key: "tg1:sha256:cabb38fce56e9e54bcc9f1a94b44df76bd0ca08838c81a7a593d06707c57d01e",
    fingerprint: "tg1:sha256:75525dd11bc176662daea80b1c8709662ae569ab94a769481b083ceece3b22b9"
  },
  {
    name: "the same numbers spelled otherwise",
    scope,
    tool: "Amount",
    args: JSON.parse(
      `{"i":333333333.33333330,"h":0.0000001,"g":9007199254740991.0,"f":4.9406564584124654e-324,"e":1e-1,"d":0.000000025,"c":0,"b":15e-1,"a":1.0}`
    ),
    ordinal: 0,
    canonicalKeyFields:
      `{"a":1,"b":1.5,"c":0,"d":2.5e-8,"e":0.1,"f":5e-324,"g":9007199254740991,"h":1e-7,"i":333333333.3333333}`,
    key: "tg1:sha256:cabb38fce56e9e54bcc9f1a94b44df76bd0ca08838c81a7a593d06707c57d01e",
    fingerprint: "tg1:sha256:75525dd11bc176662daea80b1c8709662ae569ab94a769481b083ceece3b22b9"
  },
  {
    name: "nested objects sort at every level, arrays keep their order",
    scope,
    tool: "Assign",
    args: { owner: { id: 7, teams: ["b", "a"] }, deal: { id: "D-9", tags: [] }, flags: { urgent: true, x: null } },
    ordinal: 0,
    canonicalKeyFields:
      `{"deal":{"id":"D-9","tags":[]},"flags":{"urgent":true,"x":null},"owner":{"id":7,"teams":["b","a"]}}`,
    key: "tg1:sha256:c2392491f349db35576b1359daea890b324aa72f3abee35b6e566ef7ee4ee34b",
    fingerprint: "tg1:sha256:b1b818e0d2c19d08ec9d7410dac1a4265a6c4677d08be1b2f3f5efda80a3ff0c"
  }
]

const createTaskMaterial = (args: unknown) => Result.getOrThrow(K.material("CreateTask", args))

const call = <T extends Tool.Any>(tool: T, id: string, args: Record<string, unknown>): ToolCall.ValidatedToolCall =>
  ValidatedCall.make(tool, args, { id })

/** Rebuilds a JSON value with every object's keys inserted in the reverse order, rotated by `shift`. */
const permute = (value: unknown, shift: number): unknown => {
  if (Array.isArray(value)) return value.map((v) => permute(v, shift))
  if (typeof value !== "object" || value === null) return value
  const keys = Arr.reverse(Object.keys(value))
  const k = keys.length === 0 ? 0 : shift % keys.length
  const out: Record<string, unknown> = {}
  for (const key of [...keys.slice(k), ...keys.slice(0, k)]) {
    // defineProperty keeps a JSON member named "__proto__" an own property
    Object.defineProperty(out, key, {
      value: permute((value as Record<string, unknown>)[key], shift),
      enumerable: true,
      writable: true,
      configurable: true
    })
  }
  return out
}

const JsonLeaf = Schema.Union([
  Schema.Int.check(Schema.isBetween({ minimum: -1_000_000_000, maximum: 1_000_000_000 })),
  Schema.Finite,
  Schema.String,
  Schema.Boolean,
  Schema.Null
])
const JsonObject = Schema.Record(
  Schema.String,
  Schema.Union([JsonLeaf, Schema.Record(Schema.String, JsonLeaf), Schema.Array(JsonLeaf)])
)

describe("IdempotencyKey", () => {
  it.effect("golden vectors: fixed inputs give the committed canonical text, key and fingerprint", () =>
    Effect.gen(function*() {
      for (const v of golden) {
        const { fingerprint, key, m } = yield* keysOf(v.scope, v.tool, v.args, v.keyFields, v.ordinal)
        assert.strictEqual(m.keyFields, v.canonicalKeyFields, v.name)
        assert.strictEqual(key, v.key, v.name)
        assert.strictEqual(fingerprint, v.fingerprint, v.name)
        assert.match(key, /^tg1:sha256:[0-9a-f]{64}$/)
      }
    }))

  it.effect("golden vectors: provider-id keys", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* K.providerIdKey("acme", "CreateTask", "call_abc123"),
        "tg1:sha256:d5be3589129f5aaa6b2b92d7abef30b1ecd5774e87506e7cdaf7bce0f9bd5297"
      )
      assert.strictEqual(
        yield* K.providerIdKey("acme", "CreateTask", "call_def456"),
        "tg1:sha256:8ea7f772071df4d768523a84c1645300db25acf6280d54a10c16631fdb5fecc8"
      )
    }))

  it("downstream key: stable per key and generation, ASCII", () => {
    const key = golden[0].key
    assert.strictEqual(
      K.downstreamKey(key, 1),
      "tgk1-0ec1a22bf8a9f3886f00213cf6e37f3d57190bc66fed86e9f62b303f76e5bb4c-1"
    )
    assert.notStrictEqual(K.downstreamKey(key, 2), K.downstreamKey(key, 1))
  })

  it.effect("rejects values that do not hash deterministically, naming the path and never the value", () =>
    Effect.gen(function*() {
      const bad: ReadonlyArray<readonly [unknown, string, RegExp]> = [
        [{ a: Number.NaN }, "a", /not finite/],
        [{ a: [1, Infinity] }, "a[1]", /not finite/],
        [{ n: 9007199254740992 }, "n", /2\^53/],
        [{ n: -1e21 }, "n", /2\^53/],
        [{ s: "x\ud800y" }, "s", /lone surrogate/],
        [{ ["k\udc00"]: 1 }, "", /lone surrogate/],
        [{ b: 1n }, "b", /bigint/],
        [{ d: new Date(0) }, "d", /plain JSON object/],
        [{ u: [undefined] }, "u[0]", /undefined/],
        [{ f: () => 1 }, "f", /function/]
      ]
      for (const [args, path, reason] of bad) {
        const r = K.material("T", args)
        assert.isTrue(Result.isFailure(r))
        if (Result.isFailure(r)) {
          assert.strictEqual(r.failure._tag, "UnkeyableArguments")
          assert.strictEqual(r.failure.path, path)
          assert.match(r.failure.reason, reason)
          assert.notInclude(r.failure.message, "x\ud800y")
        }
      }
      assert.isTrue(Result.isSuccess(K.material("T", { a: undefined, b: 1 })))
      const proto = Result.getOrThrow(K.material("T", JSON.parse(`{"__proto__":{"x":1},"id":2}`), ["__proto__"]))
      assert.strictEqual(proto.keyFields, `{"__proto__":{"x":1}}`)
      const err = yield* Effect.flip(
        K.intentKey({ tenant: "t\ud800", turn: "x" }, Result.getOrThrow(K.material("T", {})), 0)
      )
      assert.match(err.reason, /lone surrogate/)
      const neg = yield* Effect.flip(K.intentKey(scope, Result.getOrThrow(K.material("T", {})), -1))
      assert.match(neg.reason, /ordinal/)
    }))

  it.effect("forCall encodes with the tool's schema (defaults normalise) and honours the KeyFields annotation", () =>
    Effect.gen(function*() {
      const Search = Tool.make("Search", {
        parameters: Schema.Struct({
          query: Schema.String,
          limit: Schema.Int.pipe(Schema.withDecodingDefault(Effect.succeed(10)))
        }),
        success: Schema.Array(Schema.String)
      })
      const UpdateStage = Tool.make("UpdateStage", {
        parameters: Schema.Struct({ dealId: Schema.String, stage: Schema.String, note: Schema.String }),
        success: Schema.Struct({ ok: Schema.Boolean })
      }).annotate(K.KeyFields, ["dealId", "stage"])
      const a = yield* K.forCall(call(Search, "call_1", { query: "x" }), { scope })
      const b = yield* K.forCall(call(Search, "call_2", { limit: 10, query: "x" }), { scope })
      assert.strictEqual(a.key, b.key)
      assert.strictEqual(a.fingerprint, b.fingerprint)
      const c = yield* K.forCall(call(UpdateStage, "c1", { dealId: "D", stage: "won", note: "one" }), { scope })
      const d = yield* K.forCall(call(UpdateStage, "c2", { dealId: "D", stage: "won", note: "two" }), { scope })
      assert.strictEqual(c.key, d.key)
      assert.notStrictEqual(c.fingerprint, d.fingerprint)
      const e = yield* K.forCall(call(UpdateStage, "c1", { dealId: "D", stage: "won", note: "one" }), {
        scope,
        strategy: "providerId"
      })
      const f = yield* K.forCall(call(UpdateStage, "c2", { dealId: "D", stage: "won", note: "one" }), {
        scope,
        strategy: "providerId"
      })
      assert.notStrictEqual(e.key, f.key)
      const noId = yield* Effect.flip(
        K.forCall({ ...call(UpdateStage, "x", { dealId: "D", stage: "won", note: "one" }), id: null }, {
          scope,
          strategy: "providerId"
        })
      )
      assert.strictEqual(noId._tag, "UnkeyableArguments")
      if (noId._tag === "UnkeyableArguments") assert.match(noId.reason, /no provider id/)
    }))

  it("Occurrences numbers identical calls of a turn 0, 1, 2 … and keeps others apart", () => {
    const occ = new K.Occurrences()
    assert.deepStrictEqual(
      [
        createTaskMaterial({ a: 1 }),
        createTaskMaterial({ a: 2 }),
        createTaskMaterial({ a: 1 }),
        createTaskMaterial({ a: 1 }),
        createTaskMaterial({ a: 2 })
      ].map((x) => occ.next(x)),
      [0, 0, 1, 2, 1]
    )
  })

  it.effect.prop(
    "any argument object: key and fingerprint do not depend on member order",
    { args: JsonObject, shift: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 50 })) },
    ({ args, shift }) =>
      Effect.gen(function*() {
        const a = yield* Effect.result(keysOf(scope, "T", args, undefined, 0))
        const b = yield* Effect.result(keysOf(scope, "T", permute(args, shift), undefined, 0))
        assert.strictEqual(a._tag, b._tag)
        if (a._tag === "Success" && b._tag === "Success") {
          assert.strictEqual(a.success.key, b.success.key)
          assert.strictEqual(a.success.fingerprint, b.success.fingerprint)
        }
      }),
    { arbitrary: { runs: 60 } }
  )

  it.effect.prop(
    "any change outside the declared key fields keeps the key and changes the fingerprint",
    { id: Schema.String, extra: Schema.String, other: Schema.String },
    ({ extra, id, other }) =>
      Effect.gen(function*() {
        const a = yield* Effect.result(keysOf(scope, "T", { id, note: extra }, ["id"], 0))
        const b = yield* Effect.result(keysOf(scope, "T", { id, note: `${extra}.${other}` }, ["id"], 0))
        const wellFormed = [id, extra, other].every((s) => !/\p{Surrogate}/u.test(s))
        assert.strictEqual(a._tag === "Success" && b._tag === "Success", wellFormed)
        if (a._tag === "Success" && b._tag === "Success") {
          assert.strictEqual(a.success.key, b.success.key)
          assert.notStrictEqual(a.success.fingerprint, b.success.fingerprint)
        }
      }),
    { arbitrary: { runs: 60 } }
  )

  it.effect.prop(
    "any two distinct ordinals or turns give distinct keys",
    {
      i: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1000 })),
      j: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1000 })),
      turn: Schema.String.check(Schema.isPattern(/^[a-z0-9/-]{1,20}$/))
    },
    ({ i, j, turn }) =>
      Effect.gen(function*() {
        const m = Result.getOrThrow(K.material("T", { x: 1 }))
        const a = yield* K.intentKey({ tenant: "t", turn }, m, i)
        const b = yield* K.intentKey({ tenant: "t", turn }, m, j)
        const c = yield* K.intentKey({ tenant: "t", turn: `${turn}!` }, m, i)
        assert.strictEqual(a === b, i === j)
        assert.notStrictEqual(a, c)
      }),
    { arbitrary: { runs: 60 } }
  )
})
