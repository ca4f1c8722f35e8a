/**
 * The stored error vocabulary: what the previous version wrote (hand-built JSON, then normalised
 * by `jsonb`) decodes to the same tags and fields; JSON it does not describe is `Unrecognized`,
 * never a failure; and any stored error survives encode → store → decode.
 */
import { assert, describe, it } from "@effect/vitest"
import { StoredError } from "@toolgate/runtime"

/** Exactly the JSON texts the executor wrote before `StoredError` existed (one per tag). */
const previous: ReadonlyArray<readonly [string, StoredError.StoredError]> = [
  [`{"_tag":"ResultInvalid","detail":"the result does not match the success schema"}`, {
    _tag: "ResultInvalid",
    detail: "the result does not match the success schema"
  }],
  [`{"_tag":"ResultTooLarge","bytes":5002,"maxBytes":1000}`, {
    _tag: "ResultTooLarge",
    part: "result",
    bytes: 5002,
    maxBytes: 1000
  }],
  [`{"_tag":"ToolFailure","failure":{"_tag":"DealMissing","dealId":"gone"},"detail":"the tool reported a failure"}`, {
    _tag: "ToolFailure",
    failure: { _tag: "DealMissing", dealId: "gone" },
    detail: "the tool reported a failure"
  }],
  [`{"_tag":"ToolFailure","failure":null,"detail":"the tool reported a failure"}`, {
    _tag: "ToolFailure",
    failure: null,
    detail: "the tool reported a failure"
  }],
  [`{"_tag":"NotApplied","failure":null,"detail":"connection refused"}`, {
    _tag: "NotApplied",
    failure: null,
    detail: "connection refused"
  }],
  [`{"_tag":"ExecutionTimeout","timeoutMs":50}`, { _tag: "ExecutionTimeout", timeoutMs: 50 }],
  [`{"_tag":"Interrupted"}`, { _tag: "Interrupted", reason: "caller" }],
  [`{"_tag":"Ambiguous","reason":"defect","detail":"Error: bug in handler"}`, {
    _tag: "Ambiguous",
    reason: "defect",
    detail: "Error: bug in handler"
  }],
  // as PostgreSQL's jsonb gave them back (members reordered, spaces): same values
  [`{"_tag": "Ambiguous", "detail": "read timeout after send", "reason": "ambiguous_failure"}`, {
    _tag: "Ambiguous",
    reason: "ambiguous_failure",
    detail: "read timeout after send"
  }],
  [`{"bytes": 5002, "_tag": "ResultTooLarge", "maxBytes": 1000}`, {
    _tag: "ResultTooLarge",
    part: "result",
    bytes: 5002,
    maxBytes: 1000
  }]
]

describe("StoredError", () => {
  for (const [text, expected] of previous) {
    it(`decodes what the previous version stored: ${text}`, () => {
      assert.deepStrictEqual(StoredError.decode(JSON.parse(text)), expected)
    })
  }

  it("no stored error is null; JSON it does not describe is Unrecognized, kept as found", () => {
    assert.strictEqual(StoredError.decode(null), null)
    for (const stored of [{}, { _tag: "x" }, { _tag: "NotApplied" }, "text", [1, 2], 7, { _tag: "ExecutionTimeout" }]) {
      assert.deepStrictEqual(StoredError.decode(stored), { _tag: "Unrecognized", stored })
    }
  })

  it("encodes to the same JSON shapes, so older readers keep reading them", () => {
    assert.strictEqual(
      StoredError.encode({ _tag: "NotApplied", failure: null, detail: "connection refused" }),
      `{"_tag":"NotApplied","failure":null,"detail":"connection refused"}`
    )
    assert.strictEqual(
      StoredError.encode({ _tag: "ExecutionTimeout", timeoutMs: 50 }),
      `{"_tag":"ExecutionTimeout","timeoutMs":50}`
    )
  })

  it.prop("any stored error survives encode, storage as JSON text, and decode", { error: StoredError.StoredError }, ({
    error
  }) => {
    const text = StoredError.encode(error)
    const decoded = StoredError.decode(JSON.parse(text))
    assert.strictEqual(decoded?._tag, error._tag)
    // the value JSON can carry (a -0 is read back as 0), and the same bytes when written again
    assert.deepStrictEqual(decoded, JSON.parse(JSON.stringify(error)))
    assert.strictEqual(StoredError.encode(decoded!), text)
  }, { arbitrary: { runs: 300 } })
})
