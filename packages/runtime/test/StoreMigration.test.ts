/**
 * Rows written by the previous version of the SQL store (migration 1 only: results, errors and
 * journal details as `jsonb`, errors unbounded) still read after migrations 2 and 3: replays
 * decode, stored errors decode as `StoredError`s, a 1 MiB error written before the bound stays
 * readable, old rows keep no arguments and an old `unknown` row resolves, audited. On the
 * PostgreSQL server and on PGlite.
 */
import { assert, layer } from "@effect/vitest"
import { IdempotencyKey } from "@toolgate/core"
import { IdempotencyStore as Store, Records, ToolExecutor } from "@toolgate/runtime"
import { ValidatedCall } from "@toolgate/testing"
import { Cause, Effect, Exit, Layer, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Migrator, SqlClient } from "effect/sql"
import * as Postgres from "../../../test/support/postgres.js"
import * as Pglite from "./support/pglite.js"

class Missing extends Schema.TaggedError<Missing>()("Missing", { id: Schema.String }) {}
const Lookup = Tool.make("Lookup", {
  parameters: Schema.Struct({ id: Schema.String }),
  success: Schema.Struct({ zeta: Schema.String, alpha: Schema.Number }),
  failure: Missing
})
const Kit = Toolkit.make(Lookup)
const call = (id: string) => ValidatedCall.make(Lookup, { id }, { id: `call_${id}` })

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) return assert.fail("expected a failure")
  return Option.getOrThrow(Cause.findErrorOption(exit.cause))
}

interface OldRow {
  readonly id: string
  readonly status: "succeeded" | "failed" | "released" | "unknown"
  readonly attempt?: number
  readonly recovery?: "reexecute" | "manual"
  readonly result?: string
  readonly error?: string
}

const suite = (name: string, sqlLayer: Layer.Layer<SqlClient.SqlClient, unknown>, schema: string) =>
  layer(sqlLayer, { timeout: "120 seconds", excludeTestServices: true })(name, (it) => {
    it.effect("rows of the previous version read after the migration, through the store and the executor", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const scope = { tenant: "acme", turn: "conv-1/msg-1" }
        yield* sql.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`)
        // the previous version: migration 1 only
        const previous = Store.migrations(schema).pipe(Effect.map((all) => all.filter(([id]) => id === 1)))
        yield* Migrator.make({})({ loader: previous, table: `${schema}.toolgate_migrations` })
        const table = `"${schema}"."idem_record"`
        const insert = (row: OldRow) =>
          Effect.gen(function*() {
            const { fingerprint, key } = yield* IdempotencyKey.forCall(call(row.id), { scope })
            const settled = row.status === "succeeded" || row.status === "failed"
            yield* sql.unsafe(
              `INSERT INTO ${table} (scope, idem_key, tool, fingerprint, status, fence, attempt, max_attempts, recovery,
                 generation, result, result_bytes, error, created_at, updated_at, completed_at, expires_at)
               VALUES ($1, $2, 'Lookup', $3, $4, nextval('"${schema}"."idem_fence_seq"'), $5, 3, $6, 1,
                 $7::jsonb, $8, $9::jsonb, now(), now(), CASE WHEN $10 THEN now() END, now() + interval '1 day')`,
              [
                scope.tenant,
                key,
                fingerprint,
                row.status,
                row.attempt ?? 1,
                row.recovery ?? "reexecute",
                row.result ?? null,
                row.result === undefined ? null : Buffer.byteLength(row.result),
                row.error ?? null,
                settled
              ]
            )
            return key
          })
        const huge = JSON.stringify({
          _tag: "ToolFailure",
          failure: { _tag: "Missing", id: "x".repeat(1_048_576) },
          detail: "the tool reported a failure"
        })
        yield* insert({ id: "a", status: "succeeded", result: `{"zeta":"z","alpha":1.5}` })
        yield* insert({
          id: "b",
          status: "failed",
          error: `{"_tag":"ToolFailure","failure":{"_tag":"Missing","id":"b"},"detail":"the tool reported a failure"}`
        })
        yield* insert({
          id: "c",
          status: "released",
          attempt: 3,
          error: `{"_tag":"NotApplied","failure":null,"detail":"connection refused"}`
        })
        yield* insert({
          id: "d",
          status: "failed",
          error: `{"_tag":"ResultTooLarge","bytes":300000,"maxBytes":262144}`
        })
        const e = yield* insert({
          id: "e",
          status: "unknown",
          recovery: "manual",
          error: `{"_tag":"Ambiguous","reason":"defect","detail":"Error: bug"}`
        })
        yield* insert({ id: "f", status: "failed", error: huge })
        const journalled = yield* sql.unsafe<{ fence: bigint }>(`SELECT fence FROM ${table} WHERE idem_key = $1`, [e])
        yield* sql.unsafe(
          `INSERT INTO "${schema}"."idem_attempt" (fence, scope, idem_key, attempt, outcome, detail, recorded_at)
           VALUES ($1, $2, $3, 1, 'lease_lost', $4::jsonb, now())`,
          [journalled[0].fence, scope.tenant, e, `{"zeta":"orphan","alpha":2}`]
        )

        yield* Effect.gen(function*() {
          const store = yield* Store.IdempotencyStore
          let runs = 0
          const executor = yield* ToolExecutor.make(Kit, {
            Lookup: {
              recovery: "reexecute",
              run: () => Effect.sync(() => ({ zeta: `run-${++runs}`, alpha: 0 }))
            }
          })
          const a = yield* executor.execute(call("a"), { scope })
          assert.strictEqual(a._tag, "Replayed")
          assert.deepStrictEqual(a.value, { zeta: "z", alpha: 1.5 })
          // what jsonb kept of it: the same value (its bytes were normalised when it was stored)
          assert.deepStrictEqual(JSON.parse(a.json), { zeta: "z", alpha: 1.5 })

          const b = failureOf(yield* Effect.exit(executor.execute(call("b"), { scope })))
          assert.isTrue(b._tag === "ToolExecutionFailed" && b.replayed)
          if (b._tag === "ToolExecutionFailed") assert.instanceOf(b.failure, Missing)

          const c = failureOf(yield* Effect.exit(executor.execute(call("c"), { scope })))
          assert.strictEqual(c._tag, "AttemptsExhausted")
          if (c._tag === "AttemptsExhausted") {
            assert.deepStrictEqual(c.lastError, { _tag: "NotApplied", failure: null, detail: "connection refused" })
          }

          const d = failureOf(yield* Effect.exit(executor.execute(call("d"), { scope })))
          assert.isTrue(d._tag === "ResultTooLarge" && d.replayed && d.part === "result" && d.bytes === 300_000)

          const unknown = failureOf(yield* Effect.exit(executor.execute(call("e"), { scope })))
          assert.isTrue(unknown._tag === "OutcomeUnknown" && unknown.reason === "manual")
          const journal = yield* store.journalOf({ scope: scope.tenant, key: e })
          assert.deepStrictEqual(journal.map((j) => j.detail), [{ zeta: "orphan", alpha: 2 }])

          // written before errors were bounded: still readable, still replayed
          const f = failureOf(yield* Effect.exit(executor.execute(call("f"), { scope })))
          assert.isTrue(f._tag === "ToolExecutionFailed" && f.replayed)
          if (f._tag === "ToolExecutionFailed") assert.strictEqual((f.failure as Missing).id.length, 1_048_576)
          assert.strictEqual(runs, 0)

          // new writes are text, bounded, and byte for byte
          const fresh = yield* executor.execute(call("g"), { scope })
          const again = yield* executor.execute(call("g"), { scope })
          assert.isTrue(fresh._tag === "Executed" && again._tag === "Replayed" && again.json === fresh.json)

          // migration 3: rows written before keep no arguments, new ones do; an old unknown row
          // resolves through the operator's call, audited
          const old = Option.getOrThrow(yield* store.read({ scope: scope.tenant, key: e }))
          assert.isNull(old.argumentsText)
          const written = Option.getOrThrow(yield* store.read({ scope: scope.tenant, key: fresh.key }))
          assert.strictEqual(written.argumentsText, `{"id":"g"}`)
          const resolved = yield* Records.resolve({ key: e }, {
            outcome: { _tag: "Applied", result: `{"zeta":"found","alpha":3}` },
            by: "migration test",
            reason: "resolved after the upgrade"
          })
          assert.deepStrictEqual(resolved.audit.parkedError, {
            _tag: "Ambiguous",
            reason: "defect",
            detail: "Error: bug"
          })
          const replayed = yield* executor.execute(call("e"), { scope })
          assert.isTrue(replayed._tag === "Replayed" && replayed.json === `{"zeta":"found","alpha":3}`)
        }).pipe(Effect.provide(Store.layerSql({ schema })))
      }))
  })

const pg = await Postgres.probe()
const schema = Postgres.uniqueSchema("tg_migrate")
Postgres.describeServer(pg, "PostgreSQL server", () => {
  suite(
    "SQL store migration: PostgreSQL server",
    Postgres.dropSchemaOnRelease(schema).pipe(Layer.provideMerge(Postgres.client(4))),
    schema
  )
})
suite("SQL store migration: PGlite", Pglite.layer, "toolgate_previous")
