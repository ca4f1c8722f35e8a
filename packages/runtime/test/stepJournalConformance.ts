/**
 * The step journal's conformance suite: the same tests against every `StepJournal` layer (memory,
 * PGlite, the PostgreSQL server). Tests inject "now" (a fixed instant in 2031 plus offsets), so
 * lease and retention maths are deterministic on the database clock too.
 */
import { assert, layer } from "@effect/vitest"
import { StepJournal as Journal } from "@toolgate/runtime"
import { Effect, Exit, type Layer, Option, Schema } from "effect"

const { StepJournal } = Journal

const base = Date.UTC(2031, 0, 1)
const at = (ms: number): Date => new Date(base + ms)

let counter = 0
const freshTurn = (label: string): Journal.TurnRef => ({
  tenant: `tenant-${label}`,
  turn: `turn-${label}-${++counter}-${Math.random().toString(36).slice(2)}`
})

const claimOf = (ref: Journal.StepRef, over: Partial<Journal.ClaimRequest> = {}): Journal.ClaimRequest => ({
  ...ref,
  fingerprint: "fp-1",
  owner: `owner-${++counter}`,
  leaseMs: 1_000,
  retentionMs: 60_000,
  now: at(0),
  ...over
})

const output = (text: string, calls: ReadonlyArray<Journal.StepCall> = []): Journal.StepOutput => ({
  text,
  calls,
  finishReason: calls.length > 0 ? "tool_calls" : "stop",
  usage: { inputTokens: 120, outputTokens: 30 },
  attempts: 1
})

const claimed = (claim: Journal.Claim): Journal.StepLease => {
  if (claim._tag !== "Claimed") assert.fail(`expected a won claim, got ${claim.step.status}`)
  return claim.lease
}

const existing = (claim: Journal.Claim): Journal.StoredStep => {
  if (claim._tag !== "Existing") assert.fail(`expected a lost claim, got fence ${claim.lease.fence}`)
  return claim.step
}

const errorOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) return assert.fail("expected a failure")
  const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (reason?._tag !== "Fail") return assert.fail("expected a typed failure")
  return reason.error
}

const readAt = (ref: Journal.StepRef, ms: number) =>
  Effect.gen(function*() {
    const journal = yield* StepJournal
    return Option.getOrThrow(yield* journal.read(ref, { now: at(ms) }))
  })

/** The persistent part of a step (what a refused write must leave unchanged). */
const stateOf = (s: Journal.StoredStep) => ({
  status: s.status,
  fence: s.fence,
  attempt: s.attempt,
  owner: s.owner,
  outputText: s.outputText,
  leaseExpiresAt: s.leaseExpiresAt?.getTime() ?? null,
  expiresAt: s.expiresAt.getTime()
})

/** One operation of one of 4 workers, or time passing (ms). */
const Op = Schema.Union([
  Schema.Struct({
    op: Schema.Literals(["claim", "record", "release", "heartbeat"]),
    worker: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 3 }))
  }),
  Schema.Struct({ op: Schema.Literal("wait"), ms: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1_500 })) })
])

/**
 * Registers the conformance suite for one journal layer; `propertyRuns` is how many cases the
 * interleaving properties draw.
 */
export const conformance = (
  name: string,
  journalLayer: Layer.Layer<Journal.StepJournal, unknown>,
  options: { readonly propertyRuns: number }
): void =>
  layer(journalLayer, { timeout: "120 seconds", excludeTestServices: true })(name, (it) => {
    it.effect("a fresh claim: a lease with a fence, attempt 1, nothing replaced; the step reads in_progress", () =>
      Effect.gen(function*() {
        const journal = yield* StepJournal
        const ref = { ...freshTurn("fresh"), step: 1 }
        const request = claimOf(ref)
        const lease = claimed(yield* journal.claim(request))
        assert.strictEqual(typeof lease.fence, "bigint")
        assert.strictEqual(lease.previous, null)
        assert.strictEqual(lease.attempt, 1)
        assert.strictEqual(lease.leaseExpiresAt.getTime(), at(1_000).getTime())
        const step = yield* readAt(ref, 250)
        assert.deepStrictEqual(
          { status: step.status, owner: step.owner, fence: step.fence, fingerprint: step.fingerprint },
          { status: "in_progress", owner: request.owner, fence: lease.fence, fingerprint: "fp-1" }
        )
        assert.strictEqual(step.retryAfterMs, 750)
        assert.isFalse(step.leaseExpired)
        assert.isNull(step.output)
        assert.strictEqual(step.expiresAt.getTime(), at(60_000).getTime())
      }))

    it.effect("a live lease elsewhere: the claim answers the step, whatever the owner", () =>
      Effect.gen(function*() {
        const journal = yield* StepJournal
        const ref = { ...freshTurn("live"), step: 1 }
        const lease = claimed(yield* journal.claim(claimOf(ref)))
        const step = existing(yield* journal.claim(claimOf(ref, { now: at(400) })))
        assert.strictEqual(step.status, "in_progress")
        assert.strictEqual(step.fence, lease.fence)
        assert.strictEqual(step.retryAfterMs, 600)
      }))

    it.effect("record: the output is kept as written and replayed to every later claim; the step is final", () =>
      Effect.gen(function*() {
        const journal = yield* StepJournal
        const ref = { ...freshTurn("record"), step: 2 }
        const lease = claimed(yield* journal.claim(claimOf(ref)))
        const out = output("Looking the contact up. ☕ «é»", [
          { index: 0, id: "call_a", name: "lookup_contact", argumentsText: `{ "email":"a@b.co" ,"z":1,"a":2}` },
          { index: 3, id: null, name: "noop", argumentsText: "" }
        ])
        yield* journal.record(lease, { output: out, retentionMs: 120_000, now: at(300) })
        const step = yield* readAt(ref, 301)
        assert.strictEqual(step.status, "recorded")
        assert.deepStrictEqual(step.output, out)
        assert.strictEqual(JSON.parse(step.outputText!).calls[0].argumentsText, `{ "email":"a@b.co" ,"z":1,"a":2}`)
        assert.strictEqual(step.recordedAt?.getTime(), at(300).getTime())
        assert.strictEqual(step.expiresAt.getTime(), at(120_300).getTime())
        assert.isNull(step.owner)
        assert.isNull(step.leaseExpiresAt)
        for (const later of [500, 5_000, 500_000]) {
          const again = existing(yield* journal.claim(claimOf(ref, { now: at(later) })))
          assert.strictEqual(again.status, "recorded")
          assert.strictEqual(again.outputText, step.outputText)
          assert.deepStrictEqual(again.output, out)
        }
      }))

    it.effect("a fenced write whose response was lost is confirmed on retry; any other stale write is StepLeaseLost", () =>
      Effect.gen(function*() {
        const journal = yield* StepJournal
        const ref = { ...freshTurn("confirm"), step: 1 }
        const lease = claimed(yield* journal.claim(claimOf(ref)))
        yield* journal.record(lease, { output: output("a"), retentionMs: 1_000, now: at(10) })
        yield* journal.record(lease, { output: output("a"), retentionMs: 1_000, now: at(20) })
        const release = errorOf(yield* Effect.exit(journal.release(lease, { now: at(30) })))
        assert.deepStrictEqual(
          { tag: release._tag, operation: (release as Journal.StepLeaseLost).operation },
          { tag: "StepLeaseLost", operation: "release" }
        )
        const heartbeat = errorOf(yield* Effect.exit(journal.heartbeat(lease, { leaseMs: 500, now: at(40) })))
        assert.strictEqual(heartbeat._tag, "StepLeaseLost")

        const other = { ...ref, step: 2 }
        const second = claimed(yield* journal.claim(claimOf(other)))
        yield* journal.release(second, { now: at(10) })
        yield* journal.release(second, { now: at(11) })
        const late = errorOf(yield* Effect.exit(journal.record(second, { output: output("b"), retentionMs: 1 })))
        assert.strictEqual(late._tag, "StepLeaseLost")
        assert.strictEqual((yield* readAt(other, 12)).status, "released")
      }))

    it.effect("an expired lease is taken over with a greater fence; the stale holder changes nothing", () =>
      Effect.gen(function*() {
        const journal = yield* StepJournal
        const ref = { ...freshTurn("takeover"), step: 1 }
        const stale = claimed(yield* journal.claim(claimOf(ref)))
        assert.strictEqual(existing(yield* journal.claim(claimOf(ref, { now: at(999) }))).status, "in_progress")
        const lease = claimed(yield* journal.claim(claimOf(ref, { now: at(1_000) })))
        assert.isTrue(lease.fence > stale.fence)
        assert.strictEqual(lease.previous, "in_progress")
        assert.strictEqual(lease.attempt, 2)
        const before = stateOf(yield* readAt(ref, 1_001))
        const writes: ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> = [
          journal.record(stale, { output: output("stale"), retentionMs: 1_000, now: at(1_001) }),
          journal.release(stale, { now: at(1_001) }),
          journal.heartbeat(stale, { leaseMs: 1_000, now: at(1_001) })
        ]
        for (const write of writes) {
          assert.strictEqual(errorOf(yield* Effect.exit(write))._tag, "StepLeaseLost")
        }
        assert.deepStrictEqual(stateOf(yield* readAt(ref, 1_001)), before)
        yield* journal.record(lease, { output: output("fresh"), retentionMs: 1_000, now: at(1_100) })
        assert.strictEqual((yield* readAt(ref, 1_101)).output?.text, "fresh")
        assert.strictEqual((yield* readAt(ref, 1_101)).owner, null)
        assert.strictEqual((yield* readAt(ref, 1_101)).fence, lease.fence)
      }))

    it.effect("a released step is claimed again; the same owner resumes its own lease with a new fence", () =>
      Effect.gen(function*() {
        const journal = yield* StepJournal
        const ref = { ...freshTurn("release"), step: 3 }
        const first = claimed(yield* journal.claim(claimOf(ref)))
        yield* journal.release(first, { now: at(100) })
        const released = yield* readAt(ref, 100)
        assert.deepStrictEqual(
          { status: released.status, owner: released.owner, lease: released.leaseExpiresAt },
          { status: "released", owner: null, lease: null }
        )
        const request = claimOf(ref, { now: at(200) })
        const second = claimed(yield* journal.claim(request))
        assert.strictEqual(second.previous, "released")
        assert.strictEqual(second.attempt, 2)
        const resumed = claimed(yield* journal.claim({ ...request, now: at(300) }))
        assert.strictEqual(resumed.attempt, 2)
        assert.strictEqual(resumed.previous, "released")
        assert.isTrue(resumed.fence > second.fence)
        assert.strictEqual(resumed.leaseExpiresAt.getTime(), at(1_300).getTime())
      }))

    it.effect("another fingerprint never takes a step over nor replays it: the claim answers the step", () =>
      Effect.gen(function*() {
        const journal = yield* StepJournal
        const turn = freshTurn("mismatch")
        const recorded = { ...turn, step: 1 }
        yield* journal.record(claimed(yield* journal.claim(claimOf(recorded))), {
          output: output("one"),
          retentionMs: 1_000
        })
        const released = { ...turn, step: 2 }
        yield* journal.release(claimed(yield* journal.claim(claimOf(released))))
        const abandoned = { ...turn, step: 3 }
        claimed(yield* journal.claim(claimOf(abandoned)))
        for (const ref of [recorded, released, abandoned]) {
          const step = existing(yield* journal.claim(claimOf(ref, { fingerprint: "fp-2", now: at(5_000) })))
          assert.strictEqual(step.fingerprint, "fp-1")
        }
      }))

    it.effect("heartbeat extends the lease on the store's clock; the extended lease is not taken over", () =>
      Effect.gen(function*() {
        const journal = yield* StepJournal
        const ref = { ...freshTurn("heartbeat"), step: 1 }
        const lease = claimed(yield* journal.claim(claimOf(ref)))
        const until = yield* journal.heartbeat(lease, { leaseMs: 2_000, now: at(900) })
        assert.strictEqual(until.getTime(), at(2_900).getTime())
        assert.strictEqual(existing(yield* journal.claim(claimOf(ref, { now: at(2_000) }))).retryAfterMs, 900)
        assert.strictEqual(claimed(yield* journal.claim(claimOf(ref, { now: at(2_900) }))).attempt, 2)
      }))

    it.effect("impossible requests are InvalidStepRequest and write nothing; an oversized output is refused", () =>
      Effect.gen(function*() {
        const journal = yield* StepJournal
        const turn = freshTurn("invalid")
        const cases: ReadonlyArray<[Partial<Journal.ClaimRequest>, string]> = [
          [{ step: 0 }, "step"],
          [{ step: 1.5 }, "step"],
          [{ leaseMs: 0 }, "leaseMs"],
          [{ leaseMs: Number.NaN }, "leaseMs"],
          [{ retentionMs: -1 }, "retentionMs"],
          [{ retentionMs: Infinity }, "retentionMs"]
        ]
        for (const [over, field] of cases) {
          const error = errorOf(yield* Effect.exit(journal.claim(claimOf({ ...turn, step: 1 }, over))))
          assert.strictEqual(error._tag, "InvalidStepRequest")
          assert.strictEqual((error as Journal.InvalidStepRequest).field, field)
        }
        assert.deepStrictEqual(yield* journal.steps(turn), [])
        const ref = { ...turn, step: 1 }
        const lease = claimed(yield* journal.claim(claimOf(ref)))
        const beat = errorOf(yield* Effect.exit(journal.heartbeat(lease, { leaseMs: -5 })))
        assert.strictEqual(beat._tag, "InvalidStepRequest")
        const huge = output("x".repeat(Journal.maxOutputBytes))
        const tooLarge = errorOf(yield* Effect.exit(journal.record(lease, { output: huge, retentionMs: 1_000 })))
        assert.strictEqual(tooLarge._tag, "StepOutputTooLarge")
        assert.isAbove((tooLarge as Journal.StepOutputTooLarge).bytes, Journal.maxOutputBytes)
        assert.strictEqual((yield* readAt(ref, 10)).status, "in_progress")
      }))

    it.effect("steps(turn) lists one turn's steps in order; tenants and turns are apart", () =>
      Effect.gen(function*() {
        const journal = yield* StepJournal
        const turn = freshTurn("list")
        for (const step of [3, 1, 2]) {
          yield* journal.record(claimed(yield* journal.claim(claimOf({ ...turn, step }))), {
            output: output(`step ${step}`),
            retentionMs: 1_000
          })
        }
        const otherTenant = { tenant: `${turn.tenant}-other`, turn: turn.turn }
        claimed(yield* journal.claim(claimOf({ ...otherTenant, step: 1 })))
        const steps = yield* journal.steps(turn)
        assert.deepStrictEqual(steps.map((s) => [s.step, s.output?.text]), [[1, "step 1"], [2, "step 2"], [
          3,
          "step 3"
        ]])
        assert.deepStrictEqual((yield* journal.steps(otherTenant)).map((s) => s.status), ["in_progress"])
        assert.isTrue(Option.isNone(yield* journal.read({ ...turn, step: 4 })))
      }))

    it.effect("purge deletes a turn's steps together, once every one is settled (or abandoned) and past retention", () =>
      Effect.gen(function*() {
        const journal = yield* StepJournal
        // an instant after every other test's records, purged first, so the counts are this test's
        const t0 = 1_000_000_000
        const later = (ms: number) => at(t0 + ms)
        yield* journal.purge({ now: later(0) })
        const record = (ref: Journal.StepRef, retentionMs: number) =>
          Effect.flatMap(
            journal.claim(claimOf(ref, { now: later(0) })),
            (c) => journal.record(claimed(c), { output: output("x"), retentionMs, now: later(0) })
          )
        const done = freshTurn("purge-done")
        yield* record({ ...done, step: 1 }, 1_000)
        yield* record({ ...done, step: 2 }, 2_000)
        const half = freshTurn("purge-half")
        yield* record({ ...half, step: 1 }, 1_000)
        yield* record({ ...half, step: 2 }, 50_000)
        const busy = freshTurn("purge-busy")
        yield* record({ ...busy, step: 1 }, 1_000)
        const live = claimed(yield* journal.claim(claimOf({ ...busy, step: 2 }, { retentionMs: 0, now: later(9_500) })))
        const abandoned = freshTurn("purge-abandoned")
        yield* record({ ...abandoned, step: 1 }, 1_000)
        claimed(yield* journal.claim(claimOf({ ...abandoned, step: 2 }, { retentionMs: 0, now: later(0) })))
        const released = freshTurn("purge-released")
        yield* journal.release(
          claimed(yield* journal.claim(claimOf({ ...released, step: 1 }, { retentionMs: 500, now: later(0) })))
        )

        // at 1.5 s: the abandoned turn (its live step's lease lapsed) and the released one
        assert.strictEqual(yield* journal.purge({ now: later(1_500) }), 2 + 1)
        assert.deepStrictEqual(yield* journal.steps(abandoned), [])
        assert.deepStrictEqual(yield* journal.steps(released), [])
        assert.strictEqual((yield* journal.steps(done)).length, 2)
        // at 10 s: the done turn; the busy one still has a live lease, the half one a kept step
        assert.strictEqual(yield* journal.purge({ now: later(10_000) }), 2)
        assert.deepStrictEqual(yield* journal.steps(done), [])
        assert.strictEqual((yield* journal.steps(half)).length, 2)
        assert.strictEqual((yield* journal.steps(busy)).length, 2)
        assert.strictEqual(yield* journal.purge({ now: later(60_000) }), 2 + 2)
        // a fence is never reused, not even after a purge
        const again = claimed(yield* journal.claim(claimOf({ ...done, step: 1 }, { now: later(60_001) })))
        assert.isTrue(again.fence > live.fence)
        assert.strictEqual(again.previous, null)
      }))

    it.effect.prop(
      "any group of concurrent claimants of one step, at any instants within the lease: exactly one winner",
      {
        claimants: Schema.Int.check(Schema.isBetween({ minimum: 2, maximum: 16 })),
        offsets: Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 999 })))
      },
      ({ claimants, offsets }) =>
        Effect.gen(function*() {
          const journal = yield* StepJournal
          const ref = { ...freshTurn("race"), step: 1 }
          const claims = yield* Effect.all(
            Array.from(
              { length: claimants },
              (_, i) =>
                journal.claim(claimOf(ref, { now: at(offsets.length === 0 ? 0 : offsets[i % offsets.length]!) }))
            ),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(claims.filter((c) => c._tag === "Claimed").length, 1)
        }),
      { arbitrary: { runs: options.propertyRuns } }
    )

    it.effect.prop(
      "any interleaving of claims, records, releases, heartbeats and time by 4 workers: one live holder at a time, at most one output recorded, never changed after",
      { ops: Schema.Array(Op).check(Schema.isMaxLength(40)) },
      ({ ops }) =>
        Effect.gen(function*() {
          const journal = yield* StepJournal
          const ref = { ...freshTurn("interleave"), step: 1 }
          const owners = [0, 1, 2, 3].map((w) => `worker-${w}-${++counter}`)
          const leases: Array<Journal.StepLease | undefined> = [undefined, undefined, undefined, undefined]
          let now = 0
          let recorded: string | undefined
          for (const op of ops) {
            if (op.op === "wait") {
              now += op.ms
              continue
            }
            const before = Option.getOrUndefined(yield* journal.read(ref, { now: at(now) }))
            const lease = leases[op.worker]
            switch (op.op) {
              case "claim": {
                const claim = yield* journal.claim(claimOf(ref, { owner: owners[op.worker]!, now: at(now) }))
                const free = before === undefined || before.status === "released" ||
                  (before.status === "in_progress" && (before.leaseExpired || before.owner === owners[op.worker]))
                assert.strictEqual(claim._tag === "Claimed", free)
                if (claim._tag === "Claimed") leases[op.worker] = claim.lease
                break
              }
              case "record": {
                if (lease === undefined) break
                const exit = yield* Effect.exit(
                  journal.record(lease, { output: output(owners[op.worker]!), retentionMs: 60_000, now: at(now) })
                )
                const holds = before?.fence === lease.fence &&
                  (before.status === "in_progress" || before.status === "recorded")
                assert.strictEqual(Exit.isSuccess(exit), holds)
                if (Exit.isSuccess(exit) && before?.status === "in_progress") {
                  assert.isUndefined(recorded, "a second output was recorded")
                  recorded = owners[op.worker]
                }
                break
              }
              case "release": {
                if (lease === undefined) break
                const exit = yield* Effect.exit(journal.release(lease, { now: at(now) }))
                const holds = before?.fence === lease.fence &&
                  (before.status === "in_progress" || before.status === "released")
                assert.strictEqual(Exit.isSuccess(exit), holds)
                break
              }
              case "heartbeat": {
                if (lease === undefined) break
                const exit = yield* Effect.exit(journal.heartbeat(lease, { leaseMs: 1_000, now: at(now) }))
                assert.strictEqual(
                  Exit.isSuccess(exit),
                  before?.fence === lease.fence && before.status === "in_progress"
                )
                break
              }
            }
            const after = Option.getOrUndefined(yield* journal.read(ref, { now: at(now) }))
            if (recorded !== undefined) {
              assert.strictEqual(after?.status, "recorded")
              assert.strictEqual(after?.output?.text, recorded)
            }
          }
        }),
      { arbitrary: { runs: options.propertyRuns } }
    )
  })
