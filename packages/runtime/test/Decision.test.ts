/**
 * The executor's decision over a stored record, as a table against every record shape, without a
 * store: status × fingerprint × owner × attempts × recovery × lease × retention. Then a property:
 * for any record, the decision is "claim again" exactly when the store's claim would take it.
 */
import { assert, describe, it } from "@effect/vitest"
import type { IdempotencyStore } from "@toolgate/runtime"
import { Schema } from "effect"
import { decide, type Decision, type Seen } from "../src/internal/executor/decision.js"
import { claimOn } from "../src/internal/storeRules.js"

const now = new Date(Date.UTC(2031, 0, 1))
const at = (ms: number) => new Date(now.getTime() + ms)
const caller = { fingerprint: "fp", owner: "me" }

const record = (over: Partial<Seen> = {}): Seen => ({
  status: "in_progress",
  fingerprint: "fp",
  owner: "other",
  attempt: 1,
  maxAttempts: 3,
  recovery: "reexecute",
  leaseExpiresAt: at(1_000),
  expiresAt: at(60_000),
  ...over
})

const settledRecord = (status: "succeeded" | "failed" | "released", over: Partial<Seen> = {}) =>
  record({ status, owner: null, leaseExpiresAt: null, ...over })

const parked = (over: Partial<Seen> = {}) => record({ status: "unknown", owner: null, leaseExpiresAt: null, ...over })

const table: ReadonlyArray<readonly [string, Seen, Decision]> = [
  // succeeded
  ["succeeded within retention: replay", settledRecord("succeeded"), { _tag: "Replay" }],
  ["succeeded, other arguments: mismatch", settledRecord("succeeded", { fingerprint: "fp2" }), { _tag: "Mismatch" }],
  ["succeeded past retention: the key is free, claim again", settledRecord("succeeded", { expiresAt: at(0) }), {
    _tag: "ClaimAgain"
  }],
  [
    "succeeded past retention, other arguments: claim again (any fingerprint)",
    settledRecord("succeeded", {
      fingerprint: "fp2",
      expiresAt: at(-1)
    }),
    { _tag: "ClaimAgain" }
  ],
  // failed
  ["failed within retention: replay the failure", settledRecord("failed"), { _tag: "ReplayFailure" }],
  ["failed, other arguments: mismatch", settledRecord("failed", { fingerprint: "fp2" }), { _tag: "Mismatch" }],
  ["failed past retention: claim again", settledRecord("failed", { expiresAt: at(-5) }), { _tag: "ClaimAgain" }],
  // released
  ["released with attempts left: claim again", settledRecord("released", { attempt: 2 }), { _tag: "ClaimAgain" }],
  ["released, attempts used up: exhausted", settledRecord("released", { attempt: 3 }), { _tag: "Exhausted" }],
  ["released, other arguments: mismatch", settledRecord("released", { fingerprint: "fp2" }), { _tag: "Mismatch" }],
  [
    "released, attempts used up, past retention: claim again",
    settledRecord("released", {
      attempt: 3,
      expiresAt: at(0)
    }),
    { _tag: "ClaimAgain" }
  ],
  [
    "released by a manual tool with attempts left: claim again (a release is known not applied)",
    settledRecord(
      "released",
      { recovery: "manual" }
    ),
    { _tag: "ClaimAgain" }
  ],
  // unknown
  ["unknown, reexecute, attempts left: take over (claim again)", parked(), { _tag: "ClaimAgain" }],
  ["unknown, reconcile, attempts left: take over (claim again)", parked({ recovery: "reconcile" }), {
    _tag: "ClaimAgain"
  }],
  ["unknown, manual: waits for a resolve", parked({ recovery: "manual" }), { _tag: "Unknown", reason: "manual" }],
  ["unknown, reexecute, attempts used up", parked({ attempt: 3 }), { _tag: "Unknown", reason: "attempts_exhausted" }],
  ["unknown, manual, attempts used up: exhausted wins", parked({ recovery: "manual", attempt: 3 }), {
    _tag: "Unknown",
    reason: "attempts_exhausted"
  }],
  ["unknown, other arguments: mismatch", parked({ fingerprint: "fp2" }), { _tag: "Mismatch" }],
  ["unknown past its expiry: never purged, never reset", parked({ recovery: "manual", expiresAt: at(-1) }), {
    _tag: "Unknown",
    reason: "manual"
  }],
  // in progress
  ["a live lease elsewhere: wait for what is left of it", record(), { _tag: "Wait", retryAfterMs: 1_000 }],
  ["a live lease with 1 ms left: wait 1 ms", record({ leaseExpiresAt: at(1) }), {
    _tag: "Wait",
    retryAfterMs: 1
  }],
  ["a live lease of a manual tool: wait", record({ recovery: "manual" }), { _tag: "Wait", retryAfterMs: 1_000 }],
  ["a live lease on its last attempt: wait", record({ attempt: 3 }), { _tag: "Wait", retryAfterMs: 1_000 }],
  ["this owner's own lease (its claim's answer was lost): resume (claim again)", record({ owner: "me" }), {
    _tag: "ClaimAgain"
  }],
  ["this owner's own lease on its last attempt: resume", record({ owner: "me", attempt: 3 }), { _tag: "ClaimAgain" }],
  ["an expired lease, reexecute, attempts left: take over", record({ leaseExpiresAt: at(-1) }), {
    _tag: "ClaimAgain"
  }],
  ["a lease expiring exactly now is expired: take over", record({ leaseExpiresAt: at(0) }), { _tag: "ClaimAgain" }],
  ["an expired lease, reconcile: take over", record({ recovery: "reconcile", leaseExpiresAt: at(-1) }), {
    _tag: "ClaimAgain"
  }],
  ["an expired lease, manual: park it, abandoned", record({ recovery: "manual", leaseExpiresAt: at(-1) }), {
    _tag: "ParkExpired",
    reason: "abandoned"
  }],
  ["an expired lease on its last attempt: park it", record({ attempt: 3, leaseExpiresAt: at(-1) }), {
    _tag: "ParkExpired",
    reason: "attempts_exhausted"
  }],
  ["a live lease, other arguments: mismatch", record({ fingerprint: "fp2" }), { _tag: "Mismatch" }],
  [
    "an expired lease, other arguments: mismatch (never a takeover)",
    record({
      fingerprint: "fp2",
      leaseExpiresAt: at(-1)
    }),
    { _tag: "Mismatch" }
  ],
  [
    "a lease past the record's retention: still a lease (only settled records reset)",
    record({
      expiresAt: at(-1)
    }),
    { _tag: "Wait", retryAfterMs: 1_000 }
  ]
]

describe("decide: the decision over a stored record", () => {
  for (const [name, seen, expected] of table) {
    it(name, () => {
      assert.deepStrictEqual(decide(seen, caller, now), expected)
    })
  }

  const Shape = {
    status: Schema.Literals(["in_progress", "succeeded", "failed", "released", "unknown"]),
    sameArguments: Schema.Boolean,
    mine: Schema.Boolean,
    attempt: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 4 })),
    maxAttempts: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 4 })),
    recovery: Schema.Literals(["reexecute", "reconcile", "manual"]),
    leaseOffset: Schema.Int.check(Schema.isBetween({ minimum: -2_000, maximum: 2_000 })),
    expiresOffset: Schema.Int.check(Schema.isBetween({ minimum: -2_000, maximum: 2_000 }))
  }

  it.prop(
    "any record: claim again exactly when the store's claim would take it; replays only of settled results",
    Shape,
    (shape) => {
      const seen: Seen = {
        status: shape.status,
        fingerprint: shape.sameArguments ? "fp" : "fp2",
        owner: shape.status === "in_progress" ? (shape.mine ? "me" : "other") : null,
        attempt: shape.attempt,
        maxAttempts: shape.maxAttempts,
        recovery: shape.recovery as IdempotencyStore.Recovery,
        leaseExpiresAt: shape.status === "in_progress" ? at(shape.leaseOffset) : null,
        expiresAt: at(shape.expiresOffset)
      }
      const decision = decide(seen, caller, now)
      const claim = claimOn(
        {
          ...seen,
          leaseExpiresAt: seen.leaseExpiresAt?.getTime() ?? null,
          expiresAt: seen.expiresAt.getTime()
        },
        caller,
        now.getTime()
      )
      assert.strictEqual(decision._tag === "ClaimAgain", claim !== "refuse")
      if (decision._tag === "Replay") assert.isTrue(seen.status === "succeeded" && seen.fingerprint === "fp")
      if (decision._tag === "ReplayFailure") assert.isTrue(seen.status === "failed" && seen.fingerprint === "fp")
      if (decision._tag === "Mismatch") assert.notStrictEqual(seen.fingerprint, "fp")
      if (decision._tag === "Wait") {
        assert.strictEqual(seen.status, "in_progress")
        assert.isAbove(decision.retryAfterMs, 0)
      }
      if (decision._tag === "ParkExpired") assert.isTrue(seen.leaseExpiresAt !== null && seen.leaseExpiresAt <= now)
    },
    { arbitrary: { runs: 500 } }
  )
})
