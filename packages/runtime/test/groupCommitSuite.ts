/**
 * Group commit of the SQL store's claims and completes (`IdempotencyStore.SqlOptions.groupCommit`),
 * against a SQL layer built with one statement of each kind in flight: claims (and completes) that
 * fibers make at once share statements (the rows they write share a transaction id, `xmin`) and each
 * is decided once; any mix of concurrent claims, repeats and seeded records included, answers key by
 * key as the same claims made one after another, and so does any mix of concurrent completes (repeats,
 * settled, released, parked and taken-over leases); a claim or complete inside a transaction stays in
 * it; one that cannot share a statement goes alone. On the server also: a caller interrupted while it
 * waits is never written, a failed statement fails each of its requests with its own key, and a shared
 * statement a deadlock aborts answers as its requests alone would.
 */
import { assert, layer } from "@effect/vitest"
import { IdempotencyStore as Store } from "@toolgate/runtime"
import { Cause, Deferred, Effect, Exit, Fiber, type Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fresh, request } from "./storeRequests.js"

const { IdempotencyStore } = Store

/** A claim's answer without its instants and fences, and without its key (the twin records' keys differ). */
const shape = (claim: Store.Claim) =>
  claim._tag === "Claimed"
    ? { _tag: claim._tag, kind: claim.lease.kind, attempt: claim.lease.attempt }
    : { _tag: claim._tag, status: claim.record.status, attempt: claim.record.attempt }

/** A claim on the database's clock (what shares statements), with a lease no test outlives. */
const clockless = (ref: Store.RecordRef, over: Partial<Store.ClaimRequest> = {}) =>
  request(ref, { now: undefined, leaseMs: 60_000, ...over })

/** What a record has been through before the claims meet it (on the database's clock). */
const Seed = Schema.Literals(["none", "live", "succeeded", "failed", "released", "unknown", "otherFingerprint"])

/**
 * The answers to requests made at once (`concurrent`) and to the same made one after another
 * (`sequential`), `chosen[j]` the key of request `j`, compared key by key as multisets: which of a
 * key's concurrent requests wins is not fixed. `label` names a key's case in a failure.
 */
const sameAnswersPerKey = <T>(
  keys: number,
  chosen: ReadonlyArray<number>,
  concurrent: ReadonlyArray<T>,
  sequential: ReadonlyArray<T>,
  show: (answer: T) => string,
  label: (key: number) => string
) => {
  for (let k = 0; k < keys; k++) {
    const of = (answers: ReadonlyArray<T>) => answers.filter((_, j) => chosen[j] === k).map(show).toSorted()
    assert.deepStrictEqual(of(concurrent), of(sequential), label(k))
  }
}

/** Distinct transaction ids among the rows of `scope`: how many statements last wrote them. */
const writers = (schema: string, scope: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ n: number }>(
      `SELECT count(DISTINCT xmin::text)::int AS n FROM "${schema}".idem_record WHERE scope = $1`,
      [scope]
    )
    return rows[0].n
  })

/**
 * Registers the suite for one SQL layer whose store group-commits with `inFlight: 1` and no bound on
 * a claim's wait (`maxWaitMs: Infinity`, so what waits goes together whatever the timing; its tables
 * in `schema`); `server` adds the tests that hold a table lock from another connection.
 */
export const groupCommitConformance = (
  name: string,
  storeLayer: Layer.Layer<Store.IdempotencyStore | SqlClient.SqlClient, unknown>,
  options: { readonly schema: string; readonly propertyRuns: number; readonly server: boolean }
): void =>
  layer(storeLayer, { timeout: "120 seconds", excludeTestServices: true })(name, (it) => {
    const { schema } = options

    const seeded = (store: Store.IdempotencyStore["Service"], ref: Store.RecordRef, seed: typeof Seed.Type) =>
      Effect.gen(function*() {
        if (seed === "none") return
        const claim = yield* store.claim(clockless(ref, { fingerprint: seed === "otherFingerprint" ? "fp-2" : "fp-1" }))
        if (claim._tag !== "Claimed") return assert.fail("the seed claim lost")
        const lease = claim.lease
        if (seed === "succeeded") yield* store.complete(lease, { result: "{\"ok\":true}", retentionMs: 60_000 })
        if (seed === "released") yield* store.release(lease, { error: null })
        if (seed === "failed") yield* store.fail(lease, { error: "{\"refused\":true}", retentionMs: 60_000 })
        if (seed === "unknown") yield* store.park(lease, { error: null })
      })

    it.effect("24 fibers claiming new keys at once share statements, and each key is won once", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const scope = fresh("gc").scope
        const refs = Array.from({ length: 24 }, (_, i) => ({ scope, key: `${fresh("gc").key}-${i}` }))
        const claims = yield* Effect.forEach(refs, (ref) => store.claim(clockless(ref)), { concurrency: "unbounded" })
        claims.forEach((claim, i) => {
          assert.strictEqual(claim._tag, "Claimed")
          if (claim._tag === "Claimed") assert.strictEqual(claim.lease.key, refs[i].key)
        })
        const statements = yield* writers(schema, scope)
        // one statement out at a time: the first goes alone, the 23 that waited meanwhile go together
        assert.isAtMost(statements, 3, `${statements} statements wrote 24 claims`)
      }))

    it.effect("alone (groupCommit: false), the same claims take a statement each", () =>
      Effect.gen(function*() {
        const store = yield* Effect.provide(
          Effect.gen(function*() {
            return yield* IdempotencyStore
          }),
          Store.layerSql({ schema, groupCommit: false })
        )
        const scope = fresh("alone").scope
        const refs = Array.from({ length: 8 }, (_, i) => ({ scope, key: `${fresh("alone").key}-${i}` }))
        yield* Effect.forEach(refs, (ref) => store.claim(clockless(ref)), { concurrency: "unbounded" })
        assert.strictEqual(yield* writers(schema, scope), 8)
      }))

    it.effect("group commit options that could never send (inFlight or maxBatch not an integer ≥ 1, maxWaitMs not ≥ 0) refuse to build", () =>
      Effect.gen(function*() {
        for (
          const groupCommit of [
            { inFlight: 0 },
            { inFlight: -1 },
            { inFlight: 1.5 },
            { inFlight: Number.NaN },
            {
              maxBatch: 0
            },
            { maxBatch: 0.5 },
            { maxWaitMs: -1 },
            { maxWaitMs: Number.NaN }
          ]
        ) {
          const built = yield* Effect.exit(
            Effect.provide(Effect.asVoid(Effect.service(IdempotencyStore)), Store.layerSql({ schema, groupCommit }))
          )
          assert.isTrue(Exit.isFailure(built) && Cause.hasDies(built.cause), JSON.stringify(groupCommit))
        }
      }))

    it.effect.prop(
      "any claims made at once (repeats, held and settled records among them) answer key by key as one after another",
      {
        seeds: Schema.Array(Seed).check(Schema.isMinLength(1), Schema.isMaxLength(5)),
        picks: Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 4 }))).check(
          Schema.isMinLength(1),
          Schema.isMaxLength(10)
        )
      },
      ({ picks, seeds }) =>
        Effect.gen(function*() {
          const store = yield* IdempotencyStore
          const atOnce = seeds.map(() => fresh("at-once"))
          const inTurn = seeds.map(() => fresh("in-turn"))
          for (let i = 0; i < seeds.length; i++) {
            yield* seeded(store, atOnce[i], seeds[i])
            yield* seeded(store, inTurn[i], seeds[i])
          }
          const chosen = picks.map((p) => p % seeds.length)
          const concurrent = yield* Effect.forEach(chosen, (i) => store.claim(clockless(atOnce[i])), {
            concurrency: "unbounded"
          })
          const sequential: Array<Store.Claim> = []
          for (const i of chosen) sequential.push(yield* store.claim(clockless(inTurn[i])))
          sameAnswersPerKey(
            seeds.length,
            chosen,
            concurrent,
            sequential,
            (c) => JSON.stringify(shape(c)),
            (k) => `seed ${seeds[k]}`
          )
          for (const [j, claim] of concurrent.entries()) {
            const ref = atOnce[chosen[j]]
            if (claim._tag === "Claimed") {
              assert.deepStrictEqual([claim.lease.scope, claim.lease.key], [ref.scope, ref.key])
            } else assert.deepStrictEqual([claim.record.scope, claim.record.key], [ref.scope, ref.key])
          }
        }),
      { arbitrary: { runs: options.propertyRuns } }
    )

    it.effect("claims made inside a transaction stay in it: rolled back, none is written", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const sql = yield* SqlClient.SqlClient
        const refs = Array.from({ length: 6 }, () => fresh("tx"))
        const rolledBack = yield* sql.withTransaction(
          Effect.flatMap(
            Effect.forEach(refs, (ref) => store.claim(clockless(ref)), { concurrency: "unbounded" }),
            (claims) => Effect.fail({ claims })
          )
        ).pipe(Effect.flip)
        assert.isTrue("claims" in rolledBack && rolledBack.claims.every((c) => c._tag === "Claimed"))
        for (const ref of refs) assert.isTrue((yield* store.read(ref))._tag === "None")
      }))

    it.effect("a claim that could fail a shared statement goes alone: its refusal is its own", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const scope = fresh("odd").scope
        const refs = Array.from({ length: 6 }, (_, i) => ({ scope, key: `${fresh("odd").key}-${i}` }))
        const big = { scope, key: `${fresh("odd").key}-big` }
        const nul = { scope, key: `${fresh("odd").key}-nul` }
        const answers = yield* Effect.forEach(
          [
            ...refs.map((ref) => clockless(ref)),
            clockless(big, { arguments: JSON.stringify({ a: "x".repeat(300_000) }) }),
            clockless(nul, { arguments: "{\"a\":\"\u0000\"}" })
          ],
          (req) => Effect.exit(store.claim(req)),
          { concurrency: "unbounded" }
        )
        answers.slice(0, refs.length).forEach((exit) =>
          assert.isTrue(Exit.isSuccess(exit) && exit.value._tag === "Claimed")
        )
        for (const [exit, ref] of [[answers[refs.length], big], [answers[refs.length + 1], nul]] as const) {
          assert.isTrue(Exit.isFailure(exit), `${ref.key} was refused`)
          const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : Option.none()
          assert.strictEqual(Option.isSome(error) ? error.value.keyHash : null, ref.key)
        }
      }))

    /**
     * `requests` made at once behind a lone claim (one statement out at a time), so they wait and
     * go together: their exits, in order.
     */
    const batched = (store: Store.IdempotencyStore["Service"], requests: ReadonlyArray<Store.ClaimRequest>) =>
      Effect.map(
        Effect.forEach([clockless(fresh("lead")), ...requests], (req) => Effect.exit(store.claim(req)), {
          concurrency: "unbounded"
        }),
        (exits) => exits.slice(1)
      )

    const errorOf = <E>(exit: Exit.Exit<Store.Claim, E>): E | undefined =>
      Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined

    /** Each of `exits` won its claim (of `refs`, in order); a failure names its key and error. */
    const allClaimed = (exits: ReadonlyArray<Exit.Exit<Store.Claim, unknown>>, refs: ReadonlyArray<Store.RecordRef>) =>
      exits.forEach((exit, i) =>
        assert.isTrue(Exit.isSuccess(exit) && exit.value._tag === "Claimed", `${refs[i].key}: ${String(errorOf(exit))}`)
      )

    it.effect("a key too long for the primary key's index fails its own claim only: the claims beside it are won", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const refs = Array.from({ length: 4 }, () => fresh("long"))
        // incompressible, far beyond the 2704 bytes a btree entry holds
        const long = {
          scope: fresh("long").scope,
          key: Array.from({ length: 12_000 }, () => Math.random().toString(36).slice(2, 3)).join("")
        }
        const alone = yield* Effect.exit(store.claim(clockless(long)))
        assert.strictEqual(errorOf(alone)?._tag, "StoreUnavailable", "alone, the long key is refused")
        const exits = yield* batched(store, [...refs.map((ref) => clockless(ref)), clockless(long)])
        exits.slice(0, refs.length).forEach((exit, i) =>
          assert.isTrue(
            Exit.isSuccess(exit) && exit.value._tag === "Claimed",
            `${refs[i].key}: ${String(errorOf(exit))}`
          )
        )
        const error = errorOf(exits[refs.length])
        assert.strictEqual(error?._tag === "StoreUnavailable" ? error.keyHash : null, long.key)
      }))

    it.effect("a record that cannot be read fails only its own claim: claims won beside it keep their leases", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const sql = yield* SqlClient.SqlClient
        const broken = fresh("unreadable")
        yield* seeded(store, broken, "succeeded")
        yield* sql.unsafe(`UPDATE "${schema}".idem_record SET result = '{' WHERE scope = $1 AND idem_key = $2`, [
          broken.scope,
          broken.key
        ])
        const alone = yield* Effect.exit(store.claim(clockless(broken)))
        assert.strictEqual(errorOf(alone)?._tag, "StoreUnavailable", "alone, the unreadable record is refused")
        const refs = Array.from({ length: 4 }, () => fresh("unreadable"))
        const exits = yield* batched(store, [clockless(broken), ...refs.map((ref) => clockless(ref))])
        const error = errorOf(exits[0])
        assert.deepStrictEqual(
          error?._tag === "StoreUnavailable" ? [error.reason, error.keyHash] : error,
          ["UnreadableRow", broken.key]
        )
        allClaimed(exits.slice(1), refs)
      }))

    it.effect("a recovery the table refuses (an untyped caller's) fails its own claim only", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const refs = Array.from({ length: 4 }, () => fresh("recovery"))
        const odd = fresh("recovery")
        const exits = yield* batched(store, [
          clockless(odd, { recovery: "sometimes" as unknown as Store.Recovery }),
          ...refs.map((ref) => clockless(ref))
        ])
        const error = errorOf(exits[0])
        assert.strictEqual(error?._tag === "StoreUnavailable" ? error.keyHash : null, odd.key)
        allClaimed(exits.slice(1), refs)
      }))

    it.effect("a field of the wrong type (an untyped caller's) is a typed refusal of its own claim, as alone, not a defect", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        for (const over of [{ tool: 42 }, { scope: null }, { owner: {} }, { fingerprint: 7 }]) {
          const odd = fresh("untyped")
          const exits = yield* batched(store, [
            clockless(odd, over as unknown as Partial<Store.ClaimRequest>),
            clockless(fresh("untyped"))
          ])
          const error = errorOf(exits[0])
          assert.strictEqual(error?._tag, "StoreUnavailable", `${JSON.stringify(over)}: ${String(exits[0])}`)
          assert.isTrue(Exit.isSuccess(exits[1]) && exits[1].value._tag === "Claimed")
        }
      }))

    /** Claims `refs` (each a fresh record) and returns their leases. */
    const leases = (store: Store.IdempotencyStore["Service"], refs: ReadonlyArray<Store.RecordRef>) =>
      Effect.forEach(refs, (ref) =>
        Effect.flatMap(store.claim(clockless(ref)), (claim) =>
          claim._tag === "Claimed" ? Effect.succeed(claim.lease) : Effect.die(`${ref.key} was not claimed`)))

    /** A complete's answer as data: done, or the tag (and operation) of its failure. */
    const completeAnswer = (exit: Exit.Exit<void, unknown>) => {
      if (Exit.isSuccess(exit)) {
        return "done"
      }
      const error = Option.getOrUndefined(Cause.findErrorOption(exit.cause)) as { _tag?: string } | undefined
      return error?._tag ?? String(exit)
    }

    /** A record's outcome without its instants: status, fence and stored result. */
    const outcome = (store: Store.IdempotencyStore["Service"], ref: Store.RecordRef) =>
      Effect.map(store.read(ref), (record) =>
        Option.match(record, {
          onNone: () =>
            "none",
          onSome: (r) =>
            JSON.stringify([r.status, r.attempt, r.resultText])
        }))

    /**
     * `completes` made at once behind a lone complete (one statement out at a time), so they wait and
     * go together: their exits, in order.
     */
    const completedTogether = (
      store: Store.IdempotencyStore["Service"],
      completes: ReadonlyArray<readonly [Store.Lease, string]>
    ) =>
      Effect.gen(function*() {
        const [lead] = yield* leases(store, [fresh("lead")])
        const exits = yield* Effect.forEach(
          [[lead, "{}"] as const, ...completes],
          ([lease, result]) => Effect.exit(store.complete(lease, { result, retentionMs: 60_000 })),
          { concurrency: "unbounded" }
        )
        return exits.slice(1)
      })

    it.effect("24 fibers completing their leases at once share statements; each record holds its own result", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const scope = fresh("gc-complete").scope
        const refs = Array.from({ length: 24 }, (_, i) => ({ scope, key: `${fresh("gc-complete").key}-${i}` }))
        const held = yield* leases(store, refs)
        const exits = yield* Effect.forEach(
          held,
          (lease, i) => Effect.exit(store.complete(lease, { result: `{"n":${i}}`, retentionMs: 60_000 })),
          { concurrency: "unbounded" }
        )
        exits.forEach((exit, i) => assert.strictEqual(completeAnswer(exit), "done", refs[i].key))
        for (const [i, ref] of refs.entries()) {
          assert.strictEqual(yield* outcome(store, ref), JSON.stringify(["succeeded", 1, `{"n":${i}}`]))
        }
        const statements = yield* writers(schema, scope)
        // one statement out at a time: the first goes alone, the 23 that waited meanwhile go together
        assert.isAtMost(statements, 3, `${statements} statements wrote 24 completes`)
      }))

    /** What a lease has been through before the completes meet it. */
    const Before = Schema.Literals(["held", "completed", "released", "failed", "parked", "takenOver"])

    const prepare = (store: Store.IdempotencyStore["Service"], ref: Store.RecordRef, before: typeof Before.Type) =>
      Effect.gen(function*() {
        const claim = yield* store.claim(
          clockless(ref, before === "takenOver" ? { leaseMs: 100 } : {})
        )
        if (claim._tag !== "Claimed") return yield* Effect.die("the lease was not claimed")
        const lease = claim.lease
        if (before === "completed") yield* store.complete(lease, { result: "{\"first\":true}", retentionMs: 60_000 })
        if (before === "released") yield* store.release(lease, { error: null })
        if (before === "failed") yield* store.fail(lease, { error: "{\"refused\":true}", retentionMs: 60_000 })
        if (before === "parked") yield* store.park(lease, { error: null })
        if (before === "takenOver") {
          yield* Effect.sleep("150 millis")
          const taken = yield* store.claim(clockless(ref))
          if (taken._tag !== "Claimed") return yield* Effect.die("the expired lease was not taken over")
        }
        return lease
      })

    it.effect.prop(
      "any completes made at once (repeats, settled, released, parked and taken-over leases among them) answer key by key as one after another",
      {
        befores: Schema.Array(Before).check(Schema.isMinLength(1), Schema.isMaxLength(4)),
        picks: Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 3 }))).check(
          Schema.isMinLength(1),
          Schema.isMaxLength(8)
        )
      },
      ({ befores, picks }) =>
        Effect.gen(function*() {
          const store = yield* IdempotencyStore
          const atOnce = befores.map(() => fresh("complete-at-once"))
          const inTurn = befores.map(() => fresh("complete-in-turn"))
          const leasesAtOnce: Array<Store.Lease> = []
          const leasesInTurn: Array<Store.Lease> = []
          for (let i = 0; i < befores.length; i++) {
            leasesAtOnce.push(yield* prepare(store, atOnce[i], befores[i]))
            leasesInTurn.push(yield* prepare(store, inTurn[i], befores[i]))
          }
          const chosen = picks.map((p) => p % befores.length)
          const resultOf = (k: number) => `{"key":${k}}`
          const concurrent = yield* completedTogether(
            store,
            chosen.map((k) => [leasesAtOnce[k], resultOf(k)] as const)
          )
          const sequential: Array<Exit.Exit<void, unknown>> = []
          for (const k of chosen) {
            sequential.push(
              yield* Effect.exit(store.complete(leasesInTurn[k], { result: resultOf(k), retentionMs: 60_000 }))
            )
          }
          sameAnswersPerKey(befores.length, chosen, concurrent, sequential, completeAnswer, (k) =>
            `before: ${befores[k]}`)
          for (let k = 0; k < befores.length; k++) {
            assert.strictEqual(
              yield* outcome(store, atOnce[k]),
              yield* outcome(store, inTurn[k]),
              `before: ${befores[k]}`
            )
          }
        }),
      { arbitrary: { runs: Math.max(5, Math.ceil(options.propertyRuns / 3)) } }
    )

    it.effect("completes made inside a transaction stay in it: rolled back, every lease is still held", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const sql = yield* SqlClient.SqlClient
        const refs = Array.from({ length: 6 }, () =>
          fresh("complete-tx"))
        const held = yield* leases(store, refs)
        const rolledBack = yield* sql.withTransaction(
          Effect.flatMap(
            Effect.forEach(held, (lease) =>
              store.complete(lease, { result: "{}", retentionMs: 60_000 }), {
              concurrency: "unbounded"
            }),
            () =>
              Effect.fail("roll back" as const)
          )
        ).pipe(Effect.flip)
        assert.strictEqual(rolledBack, "roll back")
        for (const ref of refs) {
          assert.strictEqual(JSON.parse(yield* outcome(store, ref))[0], "in_progress")
        }
      }))

    it.effect("a complete that could fail a shared statement goes alone: its refusal is its own", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const refs = Array.from({ length: 4 }, () =>
          fresh("complete-odd"))
        const big = fresh("complete-odd")
        const nul = fresh("complete-odd")
        const [bigLease, nulLease, ...held] = yield* leases(store, [big, nul, ...refs])
        const exits = yield* completedTogether(store, [
          ...held.map((lease) =>
            [lease, "{}"] as const
          ),
          [bigLease, JSON.stringify({ a: "x".repeat(300_000) })],
          [nulLease, "{\"a\":\"\u0000\"}"]
        ])
        exits.slice(0, held.length).forEach((exit, i) => assert.strictEqual(completeAnswer(exit), "done", refs[i].key))
        for (const [exit, ref] of [[exits[held.length], big], [exits[held.length + 1], nul]] as const) {
          const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined
          assert.strictEqual(error?._tag, "StoreUnavailable", `${ref.key}: ${String(exit)}`)
          assert.strictEqual(error?._tag === "StoreUnavailable" ? error.keyHash : null, ref.key)
          assert.strictEqual(JSON.parse(yield* outcome(store, ref))[0], "in_progress")
        }
      }))

    it.effect("a fence beyond int8 (a forged or untyped caller's lease) fails its own complete only, as alone", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const failureOf = (exit: Exit.Exit<void, unknown>) =>
          Exit.isFailure(exit)
            ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) as { _tag?: string; keyHash?: unknown }
            : undefined
        for (const fence of [2n ** 63n, -(2n ** 63n) - 1n, 2n ** 200n]) {
          const odd = fresh("complete-fence")
          const refs = Array.from({ length: 3 }, () => fresh("complete-fence"))
          const [oddLease, ...held] = yield* leases(store, [odd, ...refs])
          const forged = { ...oddLease, fence }
          const alone = yield* Effect.exit(store.complete(forged, { result: "{}", retentionMs: 60_000 }))
          const [exit, ...rest] = yield* completedTogether(store, [
            [forged, "{}"],
            ...held.map((lease) => [lease, "{}"] as const)
          ])
          assert.deepStrictEqual(
            [failureOf(exit)?._tag, failureOf(exit)?.keyHash],
            [failureOf(alone)?._tag, failureOf(alone)?.keyHash],
            `fence ${fence}: together ${String(exit)}, alone ${String(alone)}`
          )
          rest.forEach((e, i) => assert.strictEqual(completeAnswer(e), "done", `fence ${fence}: ${refs[i].key}`))
          assert.strictEqual(JSON.parse(yield* outcome(store, odd))[0], "in_progress")
        }
      }))

    it.effect("a lone surrogate in a result, a tenant or a key is stored as a single complete stores it", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const odd = { scope: `${fresh("surrogate").scope}-\ud800`, key: `${fresh("surrogate").key}-\udc00` }
        const twin = { scope: `${fresh("surrogate").scope}-\ud800`, key: `${fresh("surrogate").key}-\udc00` }
        const [together, alone] = yield* leases(store, [odd, twin])
        const result = "{\"name\":\"\ud83d-broken\"}"
        const [exit] = yield* completedTogether(store, [[together, result]])
        assert.strictEqual(completeAnswer(exit), "done")
        yield* store.complete(alone, { result, retentionMs: 60_000 })
        const stored = (ref: Store.RecordRef) =>
          Effect.map(store.read(ref), Option.map((r) => [r.status, r.resultText]))
        assert.deepStrictEqual(yield* stored(odd), yield* stored(twin))
        assert.deepStrictEqual(Option.map(yield* stored(odd), ([status]) => status), Option.some("succeeded"))
      }))

    if (!options.server) return

    /** Holds an exclusive lock on the record table from another connection until `release` completes. */
    const lockTable = (sql: SqlClient.SqlClient, release: Effect.Effect<void>) =>
      sql.withTransaction(
        Effect.andThen(sql.unsafe(`LOCK TABLE "${schema}".idem_record IN ACCESS EXCLUSIVE MODE`), release)
      )

    /** Waits until the lock of {@link lockTable} is held. */
    const locked = (sql: SqlClient.SqlClient) =>
      Effect.gen(function*() {
        for (let i = 0; i < 500; i++) {
          const rows = yield* sql.unsafe(
            `SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
             JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = $1 AND c.relname = 'idem_record' AND l.mode = 'AccessExclusiveLock' AND l.granted`,
            [schema]
          )
          if (rows.length > 0) return
          yield* Effect.sleep("10 millis")
        }
        return yield* Effect.die("the table lock was never held")
      })

    /** Waits until `n` statements of this test's store are blocked on the lock (pg_stat_activity). */
    const blocked = (sql: SqlClient.SqlClient, n: number, like: string) =>
      Effect.gen(function*() {
        for (let i = 0; i < 500; i++) {
          const rows = yield* sql.unsafe<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
            [like]
          )
          if (rows.length >= n) return rows.map((r) => r.pid)
          yield* Effect.sleep("10 millis")
        }
        return yield* Effect.die(`no ${n} statement(s) blocked like ${like}`)
      })

    it.effect("a claim of a free key does not wait behind claim statements blocked on another key's row lock", () =>
      Effect.gen(function*() {
        // the default bound on a claim's wait (the suite's store waits without one, for its timings)
        const store = yield* Effect.provide(
          Effect.service(IdempotencyStore),
          Store.layerSql({ schema, groupCommit: { inFlight: 1 } })
        )
        const sql = yield* SqlClient.SqlClient
        const held = fresh("hol")
        yield* seeded(store, held, "live")
        const locking = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        // another connection holds the record's row lock (as a transaction that claimed it and works on)
        const holder = yield* Effect.forkChild(sql.withTransaction(
          sql.unsafe(`SELECT 1 FROM "${schema}".idem_record WHERE scope = $1 AND idem_key = $2 FOR UPDATE`, [
            held.scope,
            held.key
          ]).pipe(Effect.andThen(Deferred.succeed(locking, undefined)), Effect.andThen(Deferred.await(release)))
        ))
        yield* Deferred.await(locking)
        // the store's one claim statement in flight now waits for that lock
        const stuck = yield* Effect.forkChild(Effect.exit(store.claim(clockless(held))))
        yield* blocked(sql, 1, `%INSERT INTO "${schema}"."idem_record"%`)
        const free = yield* Effect.exit(Effect.timeout(store.claim(clockless(fresh("hol"))), "5 seconds"))
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        yield* Fiber.join(stuck)
        assert.isTrue(Exit.isSuccess(free) && free.value._tag === "Claimed", String(free))
      }))

    it.effect("a shared statement caught in a deadlock with a transaction's claims answers as its claims alone would", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const sql = yield* SqlClient.SqlClient
        const base = fresh("deadlock")
        const a = { scope: base.scope, key: `${base.key}-a` }
        const b = { scope: base.scope, key: `${base.key}-b` }
        const holdsB = yield* Deferred.make<void>()
        const go = yield* Deferred.make<void>()
        // a transaction claims b, then (while the shared statement holds a and waits for b) claims a
        const transaction = yield* Effect.forkChild(
          sql.withTransaction(
            Effect.gen(function*() {
              const first = yield* store.claim(clockless(b))
              yield* Deferred.succeed(holdsB, undefined)
              yield* Deferred.await(go)
              return [first, yield* store.claim(clockless(a))] as const
            })
          ).pipe(Effect.exit)
        )
        yield* Deferred.await(holdsB)
        const shared = yield* Effect.forkChild(batched(store, [clockless(a), clockless(b)]))
        yield* blocked(sql, 1, `%jsonb_to_recordset%`)
        yield* Deferred.succeed(go, undefined)
        const inTransaction = yield* Fiber.join(transaction)
        const answers = yield* Fiber.join(shared)
        assert.isTrue(Exit.isSuccess(inTransaction), `the transaction: ${String(inTransaction)}`)
        answers.forEach((exit, i) => assert.isTrue(Exit.isSuccess(exit), `${["a", "b"][i]}: ${String(exit)}`))
      }))

    it.effect("a caller interrupted while its claim waits is never written; the one in flight is", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const sql = yield* SqlClient.SqlClient
        const held = fresh("wait")
        const gone = fresh("wait")
        const release = yield* Deferred.make<void>()
        const lock = yield* Effect.forkChild(lockTable(sql, Deferred.await(release)))
        yield* locked(sql)
        const first = yield* Effect.forkChild(store.claim(clockless(held)))
        yield* blocked(sql, 1, `%INSERT INTO "${schema}"."idem_record"%`)
        const waiting = yield* Effect.forkChild(store.claim(clockless(gone)))
        yield* Effect.sleep("20 millis")
        yield* Fiber.interrupt(waiting)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(lock)
        assert.strictEqual((yield* Fiber.join(first))._tag, "Claimed")
        // a claim made now goes after anything sent before it (one statement out at a time)
        assert.strictEqual((yield* store.claim(clockless(fresh("after"))))._tag, "Claimed")
        assert.isTrue((yield* store.read(gone))._tag === "None")
      }))

    it.effect("a shared statement that fails fails each of its claims, each naming its own key", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const sql = yield* SqlClient.SqlClient
        const alone = fresh("cancel")
        const together = Array.from({ length: 3 }, () => fresh("cancel"))
        const release = yield* Deferred.make<void>()
        const lock = yield* Effect.forkChild(lockTable(sql, Deferred.await(release)))
        yield* locked(sql)
        const first = yield* Effect.forkChild(Effect.exit(store.claim(clockless(alone))))
        const [single] = yield* blocked(sql, 1, `%INSERT INTO "${schema}"."idem_record"%`)
        const rest = yield* Effect.forEach(
          together,
          (ref) => Effect.forkChild(Effect.exit(store.claim(clockless(ref))))
        )
        yield* Effect.sleep("20 millis")
        // the lone claim's statement is cancelled; the three that waited go as one statement, cancelled too
        yield* sql.unsafe(`SELECT pg_cancel_backend($1)`, [single])
        const [shared] = yield* blocked(sql, 1, `%jsonb_to_recordset%`)
        yield* sql.unsafe(`SELECT pg_cancel_backend($1)`, [shared])
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(lock)
        const exits = [yield* Fiber.join(first), ...(yield* Effect.forEach(rest, Fiber.join))]
        for (const [exit, ref] of exits.map((e, i) => [e, [alone, ...together][i]] as const)) {
          const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined
          assert.strictEqual(error?._tag, "StoreUnavailable", `${ref.key}: ${String(error)}`)
          assert.strictEqual(error?._tag === "StoreUnavailable" ? error.keyHash : null, ref.key)
        }
      }))
    it.effect("a shared complete statement that fails fails each of its completes, each naming its own key", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const sql = yield* SqlClient.SqlClient
        const alone = fresh("complete-cancel")
        const together = Array.from({ length: 3 }, () => fresh("complete-cancel"))
        const [aloneLease, ...held] = yield* leases(store, [alone, ...together])
        const release = yield* Deferred.make<void>()
        const lock = yield* Effect.forkChild(lockTable(sql, Deferred.await(release)))
        yield* locked(sql)
        const complete = (lease: Store.Lease) =>
          Effect.forkChild(Effect.exit(store.complete(lease, { result: "{}", retentionMs: 60_000 })))
        const first = yield* complete(aloneLease)
        const [single] = yield* blocked(sql, 1, `%UPDATE "${schema}"."idem_record"%`)
        const rest = yield* Effect.forEach(held, complete)
        yield* Effect.sleep("20 millis")
        // the lone complete's statement is cancelled; the three that waited go as one statement, cancelled too
        yield* sql.unsafe(`SELECT pg_cancel_backend($1)`, [single])
        const [shared] = yield* blocked(sql, 1, `%idem_complete_many%`)
        yield* sql.unsafe(`SELECT pg_cancel_backend($1)`, [shared])
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(lock)
        const exits = [yield* Fiber.join(first), ...(yield* Effect.forEach(rest, Fiber.join))]
        for (const [exit, ref] of exits.map((e, i) => [e, [alone, ...together][i]] as const)) {
          const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined
          assert.strictEqual(error?._tag, "StoreUnavailable", `${ref.key}: ${String(error)}`)
          assert.strictEqual(error?._tag === "StoreUnavailable" ? error.keyHash : null, ref.key)
          assert.strictEqual(JSON.parse(yield* outcome(store, ref))[0], "in_progress")
        }
      }))

    it.effect("a shared complete statement caught in a deadlock with a transaction answers as its completes alone would", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const sql = yield* SqlClient.SqlClient
        const base = fresh("complete-deadlock")
        const a = { scope: base.scope, key: `${base.key}-a` }
        const b = { scope: base.scope, key: `${base.key}-b` }
        const [leaseA, leaseB] = yield* leases(store, [a, b])
        const holdsB = yield* Deferred.make<void>()
        const go = yield* Deferred.make<void>()
        const lockRow = (ref: Store.RecordRef) =>
          sql.unsafe(`SELECT 1 FROM "${schema}".idem_record WHERE scope = $1 AND idem_key = $2 FOR UPDATE`, [
            ref.scope,
            ref.key
          ])
        // a transaction locks b, then (while the shared statement holds a and waits for b) a
        const transaction = yield* Effect.forkChild(
          sql.withTransaction(
            Effect.gen(function*() {
              yield* lockRow(b)
              yield* Deferred.succeed(holdsB, undefined)
              yield* Deferred.await(go)
              yield* lockRow(a)
            })
          ).pipe(Effect.exit)
        )
        yield* Deferred.await(holdsB)
        const shared = yield* Effect.forkChild(completedTogether(store, [[leaseA, "{\"a\":1}"], [leaseB, "{\"b\":1}"]]))
        yield* blocked(sql, 1, `%idem_complete_many%`)
        yield* Deferred.succeed(go, undefined)
        yield* Fiber.join(transaction)
        const answers = yield* Fiber.join(shared)
        answers.forEach((exit, i) => assert.strictEqual(completeAnswer(exit), "done", ["a", "b"][i]))
        assert.strictEqual(yield* outcome(store, a), JSON.stringify(["succeeded", 1, "{\"a\":1}"]))
        assert.strictEqual(yield* outcome(store, b), JSON.stringify(["succeeded", 1, "{\"b\":1}"]))
      }))
  })
