import { assert, describe, it } from "@effect/vitest"
import { IdempotencyKey as K, KeyPolicy } from "@toolgate/core"
import { ValidatedCall } from "@toolgate/testing"
import { DateTime, Effect, Result, Schema } from "effect"
import { Tool } from "effect/ai"

const policy = KeyPolicy.makeUnsafe

const keysOf = (scope: K.Scope, tool: string, args: unknown, p: KeyPolicy.KeyPolicy, ordinal = 0) =>
  Effect.gen(function*() {
    const m = yield* Effect.fromResult(K.policyMaterial(tool, args, p))
    return { m, key: yield* K.intentKey(scope, m, ordinal), fingerprint: yield* K.fingerprint(m) }
  })

/**
 * Golden vectors of version-2 keys (tools with a key policy). A change here re-keys every record
 * of such a tool; it must come with a new version, never an edit. The first two were checked
 * independently: `printf '%s' '<input>' | sha256sum`.
 */
const golden: ReadonlyArray<{
  readonly name: string
  readonly tool: string
  readonly scope: K.Scope
  readonly policy: KeyPolicy.Input
  readonly args: unknown
  readonly input: string
  readonly fingerprintInput: string
  readonly key: string
  readonly fingerprint: string
}> = [
  {
    name: "turn scope, a key field and free text",
    tool: "create_task",
    scope: { tenant: "acme", turn: "lead-0042/form-1" },
    policy: { keyFields: ["lead_id"], freeText: ["title"] },
    args: { lead_id: "lead-0042", title: "Call back about pilot pricing", amount: 1200 },
    input: `["toolgate/intent",2,"acme",{"turn":"lead-0042/form-1"},"create_task",{"lead_id":"lead-0042"},0]`,
    fingerprintInput: `["toolgate/fingerprint",2,"create_task",{"amount":1200,"lead_id":"lead-0042"}]`,
    key: "tg1:sha256:77ae020124288c360b44abbe0ad62b0eb812faaa671e238b9a376c324bc8af56",
    fingerprint: "tg1:sha256:cc3f0d709bb3ed6f710b48ca84a713c19e25df0cab10b9524fa88c4bdb0fba2e"
  },
  {
    name: "window scope: the calendar hour in Berlin",
    tool: "create_task",
    scope: { tenant: "acme", turn: "any", eventTime: new Date("2024-05-01T08:59:59.900Z") },
    policy: { keyFields: ["email"], freeText: ["title"], window: { size: "hour", timeZone: "Europe/Berlin" } },
    args: { email: "ana@example.com", title: "Follow up", amount: 1200 },
    input:
      `["toolgate/intent",2,"acme",{"window":{"size":"PT1H","start":"2024-05-01T10:00:00.000","zone":"Europe/Berlin"}},"create_task",{"email":"ana@example.com"},0]`,
    fingerprintInput: `["toolgate/fingerprint",2,"create_task",{"amount":1200,"email":"ana@example.com"}]`,
    key: "tg1:sha256:5e0da6b2cca1e1ef352cd9df49ddb8ee80becfc7f917b893f3e708aa8d54756d",
    fingerprint: "tg1:sha256:3e3a48c6c760ca63abe8ec19c74a766074834e7223c05141c694530b1b9b14bd"
  },
  {
    name: "no key fields: every argument but the free text",
    tool: "add_note",
    scope: { tenant: "acme", turn: "t-1" },
    policy: { freeText: ["note"] },
    args: { deal_id: "D-1", note: "met at the fair" },
    input: `["toolgate/intent",2,"acme",{"turn":"t-1"},"add_note",{"deal_id":"D-1"},0]`,
    fingerprintInput: `["toolgate/fingerprint",2,"add_note",{"deal_id":"D-1"}]`,
    key: "tg1:sha256:67e0363834e1892c333768345688017776b00d9e1cbe5fcc59e4016b3273c01c",
    fingerprint: "tg1:sha256:c9b3f5b3b1974f8461b11a79b9b2ee06a53cff517144e33b8e456e17ac89ed54"
  },
  {
    name: "nested and [*] paths",
    tool: "order",
    scope: { tenant: "acme", turn: "t-1" },
    policy: { keyFields: ["customer.email", "items[*].sku"], freeText: ["items[*].note"] },
    args: { customer: { email: "b@example.com" }, items: [{ sku: "A", note: "x", qty: 1 }, { sku: "B", qty: 2 }] },
    input:
      `["toolgate/intent",2,"acme",{"turn":"t-1"},"order",{"customer.email":"b@example.com","items[*].sku":["A","B"]},0]`,
    fingerprintInput:
      `["toolgate/fingerprint",2,"order",{"customer":{"email":"b@example.com"},"items":[{"qty":1,"sku":"A"},{"qty":2,"sku":"B"}]}]`,
    key: "tg1:sha256:04c600d9f2d34f4cf81552ee517b1c926ad46b62a7b49a0c0dc7a3b80c81933a",
    fingerprint: "tg1:sha256:8b55ec072f486c24a57024e9d0ebeeb40a6b5fef39296fb0332144a9fb63a8f2"
  }
]

describe("KeyPolicy: version-2 keys", () => {
  it.effect.each(golden)("golden: $name", (g) =>
    Effect.gen(function*() {
      const m = Result.getOrThrow(K.policyMaterial(g.tool, g.args, policy(g.policy)))
      assert.strictEqual(Result.getOrThrow(K.policyIntentInput(g.scope, m, 0)), g.input)
      assert.strictEqual(K.fingerprintInput(m), g.fingerprintInput)
      assert.strictEqual(yield* K.intentKey(g.scope, m, 0), g.key)
      assert.strictEqual(yield* K.fingerprint(m), g.fingerprint)
      // the synchronous digest agrees
      const { createHash } = yield* Effect.promise(() => import("node:crypto"))
      const call = ValidatedCall.make(
        Tool.make(g.tool, { parameters: Schema.Unknown as never }) as Tool.Any,
        g.args as Record<string, unknown>,
        { id: "c" }
      )
      const sync = Result.getOrThrow(K.forCallSync(call, {
        scope: g.scope,
        digest: (t) => createHash("sha256").update(t).digest("hex"),
        policy: policy(g.policy)
      }))
      assert.strictEqual(sync.key, g.key)
      assert.strictEqual(sync.fingerprint, g.fingerprint)
    }))

  it.effect("the Policy annotation keys by the policy; a handler's policy passed in wins; no policy keeps version 1", () =>
    Effect.gen(function*() {
      const parameters = Schema.Struct({ lead_id: Schema.String, title: Schema.String })
      const plain = Tool.make("create_task", { parameters })
      const annotated = plain.annotate(K.Policy, policy({ keyFields: ["lead_id"], freeText: ["title"] }))
      const scope = { tenant: "acme", turn: "t" }
      const a = yield* K.forCall(ValidatedCall.make(annotated, { lead_id: "L", title: "Call back" }, { id: "1" }), {
        scope
      })
      const b = yield* K.forCall(ValidatedCall.make(annotated, { lead_id: "L", title: "Ring back" }, { id: "2" }), {
        scope
      })
      assert.strictEqual(a.key, b.key)
      assert.strictEqual(a.fingerprint, b.fingerprint)
      const v1 = yield* K.forCall(ValidatedCall.make(plain, { lead_id: "L", title: "Call back" }, { id: "1" }), {
        scope
      })
      assert.notStrictEqual(v1.key, a.key)
      assert.strictEqual(
        K.intentInput(scope, v1.material, 0),
        `["toolgate/intent",1,"acme","t","create_task",{"lead_id":"L","title":"Call back"},0]`
      )
      const overridden = yield* K.forCall(
        ValidatedCall.make(annotated, { lead_id: "L", title: "Call back" }, { id: "1" }),
        {
          scope,
          policy: policy({ keyFields: ["title"] })
        }
      )
      assert.strictEqual(overridden.material.keyFields, `{"title":"Call back"}`)
    }))
})

describe("KeyPolicy.make", () => {
  it("normalises paths and sizes", () => {
    const p = policy({
      keyFields: ["[\"lead_id\"]", "contact.email", "items[*].sku"],
      freeText: ["items[*].note", "title"],
      window: { size: "PT60M", timeZone: "Europe/Berlin" }
    })
    assert.deepStrictEqual(p.input, {
      keyFields: ["lead_id", "contact.email", "items[*].sku"],
      freeText: ["items[*].note", "title"],
      window: { size: "PT1H", timeZone: "Europe/Berlin" }
    })
    assert.strictEqual(p.window?.sizeMs, 3_600_000)
    assert.deepStrictEqual(policy({ window: { size: "day", timeZone: "UTC" } }).input.window, {
      size: "P1D",
      timeZone: "UTC"
    })
    assert.strictEqual(policy({ keyFields: ["[\"odd.name\"]"] }).keyFields?.[0], "[\"odd.name\"]")
  })

  it.each(
    [
      [[], "", /must be an object/],
      [{ keyfields: ["a"] }, "keyfields", /not a key policy member/],
      [{ keyFields: [] }, "keyFields", /at least one field/],
      [{ keyFields: "lead_id" }, "keyFields", /array of paths/],
      [{ keyFields: [7] }, "keyFields[0]", /a path \(a string\)/],
      [{ keyFields: ["a..b"] }, "keyFields[0]", /a name must follow/],
      [{ keyFields: ["a[x]"] }, "keyFields[0]", /not an index/],
      [{ keyFields: ["a", "a"] }, "keyFields[1]", /listed twice/],
      [{ keyFields: ["lead"], freeText: ["lead.note"] }, "freeText[0]", /overlaps a key field/],
      [{ keyFields: ["items[*].sku"], freeText: ["items[0]"] }, "freeText[0]", /end with a member name/],
      [{ keyFields: ["items[0].sku"], freeText: ["items[*].sku"] }, "freeText[0]", /overlaps a key field/],
      [{ window: "hour" }, "window", /an object/],
      [{ window: { size: "hour" } }, "window.timeZone", /IANA/],
      [{ window: { size: "hour", timeZone: "Mars/Olympus" } }, "window.timeZone", /not an IANA time-zone name/],
      [{ window: { size: "hour", timeZone: "europe/berlin" } }, "window.timeZone", /Europe\/Berlin/],
      [{ window: { size: "PT7M", timeZone: "UTC" } }, "window.size", /divide a day/],
      [{ window: { size: "P2D", timeZone: "UTC" } }, "window.size", /divide a day/],
      [{ window: { size: "PT0S", timeZone: "UTC" } }, "window.size", /shorter than a second/],
      [{ window: { size: "weekly", timeZone: "UTC" } }, "window.size", /not minute, hour, day/],
      [{ window: { size: "hour", timeZone: "UTC", start: "x" } }, "window.start", /not a window member/]
    ] as const
  )("refuses %j: %s", (input, field, reason) => {
    const made = KeyPolicy.make(input, "create_task")
    assert.isTrue(Result.isFailure(made))
    if (Result.isFailure(made)) {
      assert.strictEqual(made.failure._tag, "InvalidKeyPolicy")
      assert.strictEqual(made.failure.field, field)
      assert.match(made.failure.reason, reason)
      assert.match(made.failure.message, /^tool create_task: idempotency/)
    }
  })
})

describe("KeyPolicy.select", () => {
  const p = policy({ keyFields: ["lead_id", "items[*].sku"], freeText: ["title", "items[*].note"] })

  it("keys by the declared fields, matches everything but the free text", () => {
    const args = { lead_id: "L", title: "t", amount: 5, items: [{ sku: "A", note: "n" }] }
    const selected = Result.getOrThrow(KeyPolicy.select(p, args, "t"))
    assert.deepStrictEqual(selected.key, { lead_id: "L", "items[*].sku": ["A"] })
    assert.deepStrictEqual(selected.matched, { lead_id: "L", amount: 5, items: [{ sku: "A" }] })
    assert.deepStrictEqual(args.items[0], { sku: "A", note: "n" }, "the arguments are not changed")
  })

  it.each([
    [{ items: [] }, "lead_id", "lead_id"],
    [{ lead_id: "L" }, "items[*].sku", "items"],
    [{ lead_id: "L", items: [{ sku: "A" }, { qty: 1 }] }, "items[*].sku", "items[1].sku"],
    [{ lead_id: "L", items: "A" }, "items[*].sku", "items[*]"]
  ])("a missing key field is MissingKeyField, never a key on nothing: %j", (args, keyField, path) => {
    const selected = KeyPolicy.select(p, args, "create_task")
    assert.isTrue(Result.isFailure(selected))
    if (Result.isFailure(selected)) {
      assert.strictEqual(selected.failure._tag, "MissingKeyField")
      assert.strictEqual(selected.failure.keyField, keyField)
      assert.strictEqual(selected.failure.path, path)
    }
  })

  it("a key field that is null is a value, not missing", () => {
    assert.deepStrictEqual(Result.getOrThrow(KeyPolicy.select(p, { lead_id: null, items: [] }, "t")).key, {
      lead_id: null,
      "items[*].sku": []
    })
  })

  it.effect("through forCall: the call's MissingKeyField, nothing keyed", () =>
    Effect.gen(function*() {
      const tool = Tool.make("create_task", { parameters: Schema.Struct({ title: Schema.String }) })
      const error = yield* Effect.flip(
        K.forCall(ValidatedCall.make(tool, { title: "x" }, { id: "1" }), {
          scope: { tenant: "a", turn: "t" },
          policy: policy({ keyFields: ["lead_id"] })
        })
      )
      assert.strictEqual(error._tag, "MissingKeyField")
      assert.match(error.message, /no lead_id/)
    }))
})

describe("KeyPolicy: rephrasing and changes", () => {
  const p = policy({ keyFields: ["lead_id"], freeText: ["title", "note"] })
  const scope = { tenant: "acme", turn: "lead-0042/form-1" }
  const Text = Schema.String.check(Schema.isPattern(/^[ -~]{0,40}$/))

  it.effect.prop(
    "any rephrasing of the free text keeps the key and the fingerprint",
    { a: Text, b: Text, n: Text },
    ({ a, b, n }) =>
      Effect.gen(function*() {
        const x = yield* keysOf(scope, "create_task", { lead_id: "L", title: a, amount: 3 }, p)
        const y = yield* keysOf(scope, "create_task", { lead_id: "L", title: b, amount: 3, note: n }, p)
        assert.strictEqual(x.key, y.key)
        assert.strictEqual(x.fingerprint, y.fingerprint)
      })
  )

  it.effect.prop(
    "any change of a value outside the free text keeps the key and changes the fingerprint",
    {
      amount: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000 })),
      delta: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 }))
    },
    ({ amount, delta }) =>
      Effect.gen(function*() {
        const x = yield* keysOf(scope, "create_task", { lead_id: "L", title: "a", amount }, p)
        const y = yield* keysOf(scope, "create_task", { lead_id: "L", title: "a", amount: amount + delta }, p)
        assert.strictEqual(x.key, y.key)
        assert.notStrictEqual(x.fingerprint, y.fingerprint)
      })
  )

  it("compare: free-text differences apart from the others, bounded, with excerpts", () => {
    const long = "x".repeat(500)
    const { freeText, other } = KeyPolicy.compare(
      p,
      { lead_id: "L", title: "Call back about pilot pricing", amount: 100, note: long },
      { lead_id: "L", title: "Call back re: pilot pricing", amount: 250 }
    )
    assert.deepStrictEqual(freeText.changes.map((c) => c.path), ["note", "title"])
    assert.strictEqual(freeText.changes[0].given, "(absent)")
    assert.strictEqual(freeText.changes[0].recorded.length, KeyPolicy.excerptLength)
    assert.isTrue(freeText.changes[0].recorded.endsWith("…"))
    assert.deepStrictEqual(freeText.changes[1], {
      path: "title",
      recorded: "\"Call back about pilot pricing\"",
      given: "\"Call back re: pilot pricing\""
    })
    assert.deepStrictEqual(other, { changes: [{ path: "amount", recorded: "100", given: "250" }], total: 1 })
    const many = KeyPolicy.compare(undefined, { a: Array.from({ length: 30 }, (_, i) => i) }, { a: [] })
    assert.strictEqual(many.other.total, 30)
    assert.strictEqual(many.other.changes.length, KeyPolicy.maxChanges)
    assert.strictEqual(many.other.changes[0].path, "a[0]")
  })

  it("compare: [*] free text matches every element", () => {
    const q = policy({ freeText: ["items[*].note"] })
    const { freeText, other } = KeyPolicy.compare(q, { items: [{ note: "a", qty: 1 }] }, {
      items: [{ note: "b", qty: 2 }]
    })
    assert.deepStrictEqual(freeText.changes.map((c) => c.path), ["items[0].note"])
    assert.deepStrictEqual(other.changes.map((c) => c.path), ["items[0].qty"])
  })
})

// ---------------------------------------------------------------------------------------------
// Windows

const windowOf = (p: KeyPolicy.KeyPolicy, iso: string) =>
  Result.getOrThrow(KeyPolicy.windowStart(p.window!, DateTime.makeUnsafe(iso), "t"))

const hourIn = (timeZone: string) => policy({ window: { size: "hour", timeZone } })

describe("KeyPolicy windows: edge cases", () => {
  it.effect("the boundary: an event at 10:59:59.9 keys with its retry, whatever the clock at the retry; 11:00:00.1 is the next window", () =>
    Effect.gen(function*() {
      const p = policy({ keyFields: ["email"], window: { size: "hour", timeZone: "Europe/Berlin" } })
      const args = { email: "ana@example.com" }
      const first = { tenant: "acme", turn: "form-1", eventTime: new Date("2024-05-01T08:59:59.900Z") } // 10:59:59.9 CEST
      // the retry runs at 11:00:00.1 (or a day later): it carries the event's time, not the clock's
      const retry = { ...first, turn: "form-1-redelivered" }
      const next = { tenant: "acme", turn: "form-2", eventTime: new Date("2024-05-01T09:00:00.100Z") } // 11:00:00.1
      const a = yield* keysOf(first, "create_task", args, p)
      const b = yield* keysOf(retry, "create_task", args, p)
      const c = yield* keysOf(next, "create_task", args, p)
      assert.strictEqual(a.key, b.key)
      assert.notStrictEqual(a.key, c.key)
      assert.strictEqual(windowOf(p, "2024-05-01T08:59:59.900Z"), "2024-05-01T10:00:00.000")
      assert.strictEqual(windowOf(p, "2024-05-01T09:00:00.100Z"), "2024-05-01T11:00:00.000")
    }))

  it("without an event time a window-scoped call is MissingEventTime, never keyed by the clock", () => {
    const p = policy({ window: { size: "hour", timeZone: "UTC" } })
    const m = Result.getOrThrow(K.policyMaterial("create_task", { a: 1 }, p))
    for (const scope of [{ tenant: "a", turn: "t" }, { tenant: "a", turn: "t", eventTime: new Date(Number.NaN) }]) {
      const input = K.policyIntentInput(scope, m, 0)
      assert.isTrue(Result.isFailure(input))
      if (Result.isFailure(input)) assert.strictEqual(input.failure._tag, "MissingEventTime")
    }
  })

  it("fall back (Europe/Berlin, 2024-10-27): both passes of 02:xx share the 02:00 window; 03:00 is the next", () => {
    const p = hourIn("Europe/Berlin")
    assert.strictEqual(windowOf(p, "2024-10-27T00:30:00Z"), "2024-10-27T02:00:00.000") // 02:30 CEST
    assert.strictEqual(windowOf(p, "2024-10-27T01:30:00Z"), "2024-10-27T02:00:00.000") // 02:30 CET
    assert.strictEqual(windowOf(p, "2024-10-27T02:00:00Z"), "2024-10-27T03:00:00.000")
  })

  it("spring forward (Europe/Berlin, 2024-03-31): 01:59:59.999 CET, then 03:00 CEST; the 02:00 window has no instant", () => {
    const p = hourIn("Europe/Berlin")
    assert.strictEqual(windowOf(p, "2024-03-31T00:59:59.999Z"), "2024-03-31T01:00:00.000")
    assert.strictEqual(windowOf(p, "2024-03-31T01:00:00.000Z"), "2024-03-31T03:00:00.000")
  })

  it("day windows are local dates: 23 and 25 real hours on DST days (America/New_York)", () => {
    const p = policy({ window: { size: "day", timeZone: "America/New_York" } })
    // 2024-03-10 00:00 EST = 05:00Z; 2024-03-11 00:00 EDT = 04:00Z: 23 hours
    assert.strictEqual(windowOf(p, "2024-03-10T05:00:00Z"), "2024-03-10T00:00:00.000")
    assert.strictEqual(windowOf(p, "2024-03-11T03:59:59.999Z"), "2024-03-10T00:00:00.000")
    assert.strictEqual(windowOf(p, "2024-03-11T04:00:00Z"), "2024-03-11T00:00:00.000")
    // 2024-11-03 00:00 EDT = 04:00Z; 2024-11-04 00:00 EST = 05:00Z: 25 hours
    assert.strictEqual(windowOf(p, "2024-11-04T04:59:59.999Z"), "2024-11-03T00:00:00.000")
    assert.strictEqual(windowOf(p, "2024-11-04T05:00:00Z"), "2024-11-04T00:00:00.000")
  })

  it("other zones: hour windows follow the local wall clock (Kolkata :30, Kathmandu :15 UTC)", () => {
    assert.strictEqual(windowOf(hourIn("Asia/Kolkata"), "2024-05-01T04:29:59.999Z"), "2024-05-01T09:00:00.000")
    assert.strictEqual(windowOf(hourIn("Asia/Kolkata"), "2024-05-01T04:30:00Z"), "2024-05-01T10:00:00.000")
    assert.strictEqual(windowOf(hourIn("Asia/Kathmandu"), "2024-05-01T04:14:59.999Z"), "2024-05-01T09:00:00.000")
    assert.strictEqual(windowOf(hourIn("Asia/Kathmandu"), "2024-05-01T04:15:00Z"), "2024-05-01T10:00:00.000")
    // the same instant is in different hours in different zones, so keys of two zones never meet
    assert.strictEqual(windowOf(hourIn("UTC"), "2024-05-01T04:15:00Z"), "2024-05-01T04:00:00.000")
  })

  it("ISO sizes align to local midnight: PT15M, PT2H", () => {
    const quarter = policy({ window: { size: "PT15M", timeZone: "Europe/Berlin" } })
    assert.strictEqual(windowOf(quarter, "2024-05-01T08:44:59.999Z"), "2024-05-01T10:30:00.000")
    assert.strictEqual(windowOf(quarter, "2024-05-01T08:45:00Z"), "2024-05-01T10:45:00.000")
    const twoHours = policy({ window: { size: "PT2H", timeZone: "Europe/Berlin" } })
    assert.strictEqual(windowOf(twoHours, "2024-05-01T08:59:59Z"), "2024-05-01T10:00:00.000")
    assert.strictEqual(windowOf(twoHours, "2024-05-01T07:59:59Z"), "2024-05-01T08:00:00.000")
  })
})

/** The zone's wall clock at an instant, read through `Intl` directly (an oracle independent of `DateTime`). */
const wallClock = (ms: number, timeZone: string) => {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    fractionalSecondDigits: 3
  }).formatToParts(ms)
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value)
  return {
    date: `${parts.find((p) => p.type === "year")!.value}-${parts.find((p) => p.type === "month")!.value}-${
      parts.find((p) => p.type === "day")!.value
    }`,
    msOfDay: ((get("hour") * 60 + get("minute")) * 60 + get("second")) * 1000 + get("fractionalSecond")
  }
}

/** The window an instant is in, by the oracle: its local date and the index of the window in the day. */
const oracleWindow = (ms: number, timeZone: string, sizeMs: number): string => {
  const w = wallClock(ms, timeZone)
  return `${w.date}#${Math.floor(w.msOfDay / sizeMs)}`
}

const zones = [
  "UTC",
  "Europe/Berlin",
  "America/New_York",
  "America/St_Johns",
  "Asia/Kolkata",
  "Asia/Kathmandu",
  "Australia/Lord_Howe",
  "Pacific/Chatham"
] as const
const sizes = ["minute", "hour", "day", "PT15M", "PT2H", "PT1H30M"] as const
/** DST transitions of those zones (and a plain instant), to draw instants around them. */
const anchors = [
  "2024-03-10T07:00:00Z", // America/New_York spring forward
  "2024-11-03T06:00:00Z", // America/New_York fall back
  "2024-03-31T01:00:00Z", // Europe/Berlin spring forward
  "2024-10-27T01:00:00Z", // Europe/Berlin fall back
  "2024-04-06T15:00:00Z", // Australia/Lord_Howe: 30-minute fall back
  "2024-10-05T15:30:00Z", // Australia/Lord_Howe: 30-minute spring forward
  "2024-04-06T14:00:00Z", // Pacific/Chatham fall back
  "2024-03-10T05:30:00Z", // America/St_Johns spring forward
  "2031-06-15T12:00:00Z"
] as const

describe("KeyPolicy windows: properties", () => {
  it.effect.prop(
    "any two instants give the same key exactly when they are in the same aligned window of the zone's wall clock",
    {
      zone: Schema.Literals(zones),
      size: Schema.Literals(sizes),
      anchor: Schema.Literals(anchors),
      offset: Schema.Int.check(Schema.isBetween({ minimum: -4 * 3_600_000, maximum: 4 * 3_600_000 })),
      fraction: Schema.Int.check(Schema.isBetween({ minimum: -1000, maximum: 1000 }))
    },
    ({ anchor, fraction, offset, size, zone }) =>
      Effect.gen(function*() {
        const p = policy({ keyFields: ["email"], window: { size, timeZone: zone } })
        const t1 = Date.parse(anchor) + offset
        const t2 = t1 + Math.round((fraction / 1000) * p.window!.sizeMs)
        const keyAt = (ms: number) =>
          keysOf({ tenant: "acme", turn: `turn-${ms}`, eventTime: new Date(ms) }, "create_task", { email: "e" }, p)
        const [a, b] = [yield* keyAt(t1), yield* keyAt(t2)]
        const same = oracleWindow(t1, zone, p.window!.sizeMs) === oracleWindow(t2, zone, p.window!.sizeMs)
        assert.strictEqual(a.key === b.key, same)
      }),
    { arbitrary: { runs: 400 } }
  )

  it.prop(
    "any instant's window starts on the zone's wall clock at a multiple of the size since local midnight, at or before the instant",
    {
      zone: Schema.Literals(zones),
      size: Schema.Literals(sizes),
      anchor: Schema.Literals(anchors),
      offset: Schema.Int.check(Schema.isBetween({ minimum: -30 * 86_400_000, maximum: 30 * 86_400_000 }))
    },
    ({ anchor, offset, size, zone }) => {
      const p = policy({ window: { size, timeZone: zone } })
      const t = Date.parse(anchor) + offset
      const start = windowOf(p, new Date(t).toISOString())
      const w = wallClock(t, zone)
      const startMs = Math.floor(w.msOfDay / p.window!.sizeMs) * p.window!.sizeMs
      assert.strictEqual(start.slice(0, 10), w.date)
      const [h, m, s] = start.slice(11, 19).split(":").map(Number)
      assert.strictEqual(((h * 60 + m) * 60 + s) * 1000, startMs)
    }
  )
})
