/**
 * Key policies through the executor, on one store layer (run on memory, PGlite and the
 * PostgreSQL server): a rephrased free-text title replays (and says how it differed), a different
 * amount under the same key is `IdempotencyKeyReused` with the differing path, the same lead twice
 * in one calendar window makes one task across turns, the next window a new one, the boundary
 * case, missing key fields and event times, and tools without a policy keep their version-1 keys.
 */
import { assert, layer } from "@effect/vitest"
import { IdempotencyKey, KeyPolicy } from "@toolgate/core"
import { IdempotencyStore as Store, ToolExecutor } from "@toolgate/runtime"
import { ValidatedCall } from "@toolgate/testing"
import { Cause, Effect, Exit, type Layer, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

/** Creates a CRM task for a lead: keyed by the lead's email in the calendar hour of Berlin. */
const CreateTask = Tool.make("create_task", {
  parameters: Schema.Struct({
    email: Schema.optional(Schema.String),
    title: Schema.String,
    amount: Schema.Number
  }),
  success: Schema.Struct({ taskId: Schema.String })
}).annotate(
  IdempotencyKey.Policy,
  KeyPolicy.makeUnsafe({
    keyFields: ["email"],
    freeText: ["title"],
    window: { size: "hour", timeZone: "Europe/Berlin" }
  })
)

/** Adds a note to a deal: keyed by the deal within the turn (the policy comes from the handler). */
const AddNote = Tool.make("add_note", {
  parameters: Schema.Struct({ deal_id: Schema.String, note: Schema.String, amount: Schema.Number }),
  success: Schema.Struct({ noteId: Schema.String })
})

/** No policy: version-1 keys over every argument. */
const Touch = Tool.make("touch", {
  parameters: Schema.Struct({ id: Schema.String }),
  success: Schema.Struct({ ok: Schema.Boolean })
})

const Crm = Toolkit.make(CreateTask, AddNote, Touch)

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) return assert.fail("expected a failure")
  const found = Cause.findErrorOption(exit.cause)
  if (Option.isNone(found)) return assert.fail(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return found.value
}

const makeExecutor = Effect.gen(function*() {
  const runs = { create_task: 0, add_note: 0, touch: 0 }
  const executor = yield* ToolExecutor.make(Crm, {
    create_task: {
      recovery: "reexecute",
      run: () => Effect.sync(() => ({ taskId: `task-${++runs.create_task}` }))
    },
    add_note: {
      recovery: "reexecute",
      keyPolicy: { keyFields: ["deal_id"], freeText: ["note"] },
      run: () => Effect.sync(() => ({ noteId: `note-${++runs.add_note}` }))
    },
    touch: { recovery: "reexecute", run: () => Effect.sync(() => (++runs.touch, { ok: true })) }
  })
  return { executor, runs }
})

let counter = 0
const tenant = (label: string) => `tenant-${label}-${++counter}-${Math.random().toString(36).slice(2, 8)}`

/** An instant given as Berlin wall-clock time in summer (CEST, UTC+2). */
const berlin = (hhmmss: string) => new Date(`2031-06-15T${hhmmss}+02:00`)

export const keyPolicySuite = (name: string, storeLayer: Layer.Layer<Store.IdempotencyStore, unknown>): void =>
  layer(storeLayer, { timeout: "120 seconds", excludeTestServices: true })(name, (it) => {
    it.effect("a rerun of the turn whose model rephrased the free-text note replays, and says what differed", () =>
      Effect.gen(function*() {
        const { executor, runs } = yield* makeExecutor
        const scope = { tenant: tenant("rephrase"), turn: "deal-7/msg-3" }
        const first = yield* executor.execute(
          ValidatedCall.make(AddNote, { deal_id: "D-7", note: "Call back about pilot pricing", amount: 1200 }),
          { scope }
        )
        const rerun = yield* executor.execute(
          ValidatedCall.make(AddNote, { deal_id: "D-7", note: "Call back re: the pilot's pricing", amount: 1200 }),
          { scope }
        )
        assert.strictEqual(first._tag, "Executed")
        assert.strictEqual(rerun._tag, "Replayed")
        assert.strictEqual(runs.add_note, 1)
        assert.strictEqual(rerun.json, first.json)
        if (rerun._tag === "Replayed") {
          assert.deepStrictEqual(rerun.argumentChanges, {
            changes: [{
              path: "note",
              recorded: "\"Call back about pilot pricing\"",
              given: "\"Call back re: the pilot's pricing\""
            }],
            total: 1
          })
        }
        // an identical rerun replays and reports nothing
        const same = yield* executor.execute(
          ValidatedCall.make(AddNote, { deal_id: "D-7", note: "Call back about pilot pricing", amount: 1200 }),
          { scope }
        )
        assert.strictEqual(same._tag, "Replayed")
        if (same._tag === "Replayed") assert.isUndefined(same.argumentChanges)
      }))

    it.effect("a different amount under the same key is IdempotencyKeyReused, with the path, and never runs", () =>
      Effect.gen(function*() {
        const { executor, runs } = yield* makeExecutor
        const store = yield* Store.IdempotencyStore
        const scope = { tenant: tenant("amount"), turn: "deal-8/msg-1" }
        const first = yield* executor.execute(
          ValidatedCall.make(AddNote, { deal_id: "D-8", note: "Quote sent", amount: 1200 }),
          { scope }
        )
        const changed = failureOf(
          yield* Effect.exit(
            executor.execute(ValidatedCall.make(AddNote, { deal_id: "D-8", note: "Quote re-sent", amount: 2500 }), {
              scope
            })
          )
        )
        assert.strictEqual(runs.add_note, 1)
        assert.strictEqual(changed._tag, "IdempotencyKeyReused")
        if (changed._tag === "IdempotencyKeyReused") {
          assert.deepStrictEqual(changed.paths, ["amount"])
          assert.strictEqual(changed.pathCount, 1)
          assert.strictEqual(changed.keyHash, first.key)
          assert.match(changed.message, /differ at amount; this call was not executed and nothing was replayed/)
          // no argument value in the message (the key hash is hex and may hold "2500" by chance: it is taken out)
          assert.notInclude(changed.message.replace(changed.keyHash, "<key>"), "2500")
          assert.include(changed.message, `key ${changed.keyHash} `)
        }
        const record = Option.getOrThrow(yield* store.read({ scope: scope.tenant, key: first.key }))
        assert.strictEqual(record.status, "succeeded")
        assert.strictEqual(record.argumentsText, `{"amount":1200,"deal_id":"D-8","note":"Quote sent"}`)
      }))

    it.effect("the same lead twice within the hour (two form submissions, two turns) makes one task; the next hour a new one", () =>
      Effect.gen(function*() {
        const { executor, runs } = yield* makeExecutor
        const acme = tenant("window")
        const submit = (turn: string, at: Date, title: string) =>
          executor.execute(ValidatedCall.make(CreateTask, { email: "ana@example.com", title, amount: 0 }), {
            scope: { tenant: acme, turn, eventTime: at }
          })
        const first = yield* submit("form-1", berlin("10:05:00"), "Call Ana back")
        const second = yield* submit("form-2", berlin("10:50:00"), "Follow up with Ana")
        assert.strictEqual(first._tag, "Executed")
        assert.strictEqual(second._tag, "Replayed")
        assert.strictEqual(second.key, first.key)
        assert.strictEqual(runs.create_task, 1)
        const next = yield* submit("form-3", berlin("11:00:00"), "Call Ana back")
        assert.strictEqual(next._tag, "Executed")
        assert.notStrictEqual(next.key, first.key)
        assert.strictEqual(runs.create_task, 2)
        // another lead in the same hour is its own task
        const other = yield* executor.execute(
          ValidatedCall.make(CreateTask, { email: "bo@example.com", title: "Call Bo", amount: 0 }),
          { scope: { tenant: acme, turn: "form-4", eventTime: berlin("10:20:00") } }
        )
        assert.strictEqual(other._tag, "Executed")
        assert.strictEqual(runs.create_task, 3)
      }))

    it.effect("the boundary: the retry of an event received at 10:59:59.9 replays; an event at 11:00:00.1 is a new window", () =>
      Effect.gen(function*() {
        const { executor, runs } = yield* makeExecutor
        const acme = tenant("boundary")
        const call = () => ValidatedCall.make(CreateTask, { email: "cy@example.com", title: "Call Cy", amount: 0 })
        const received = berlin("10:59:59.900")
        const first = yield* executor.execute(call(), { scope: { tenant: acme, turn: "form-1", eventTime: received } })
        // the queue redelivers the event after the hour turned: it carries the event's time
        const retry = yield* executor.execute(call(), {
          scope: { tenant: acme, turn: "form-1-redelivered", eventTime: received }
        })
        const later = yield* executor.execute(call(), {
          scope: { tenant: acme, turn: "form-2", eventTime: berlin("11:00:00.100") }
        })
        assert.strictEqual(first._tag, "Executed")
        assert.strictEqual(retry._tag, "Replayed")
        assert.strictEqual(later._tag, "Executed")
        assert.strictEqual(runs.create_task, 2)
      }))

    it.effect("a call without its key field, or a windowed call without an event time, is refused before any claim", () =>
      Effect.gen(function*() {
        const { executor, runs } = yield* makeExecutor
        const store = yield* Store.IdempotencyStore
        const acme = tenant("missing")
        const missing = failureOf(
          yield* Effect.exit(
            executor.execute(ValidatedCall.make(CreateTask, { title: "Call someone", amount: 0 }), {
              scope: { tenant: acme, turn: "t", eventTime: berlin("10:00:00") }
            })
          )
        )
        assert.strictEqual(missing._tag, "MissingKeyField")
        if (missing._tag === "MissingKeyField") assert.strictEqual(missing.path, "email")
        const noTime = failureOf(
          yield* Effect.exit(
            executor.execute(ValidatedCall.make(CreateTask, { email: "d@example.com", title: "x", amount: 0 }), {
              scope: { tenant: acme, turn: "t" }
            })
          )
        )
        assert.strictEqual(noTime._tag, "MissingEventTime")
        assert.strictEqual(runs.create_task, 0)
        assert.deepStrictEqual(yield* store.list({ scope: acme }), [])
        // executeAll answers each call, and runs the others
        const all = yield* executor.executeAll([
          ValidatedCall.make(CreateTask, { title: "no email", amount: 0 }),
          ValidatedCall.make(Touch, { id: "x" })
        ], { scope: { tenant: acme, turn: "t2", eventTime: berlin("09:00:00") } })
        assert.strictEqual(all[0]._tag === "Failure" ? all[0].failure._tag : "", "MissingKeyField")
        assert.strictEqual(all[1]._tag, "Success")
      }))

    it.effect("a tool without a policy keeps its version-1 key; the record keeps each call's arguments", () =>
      Effect.gen(function*() {
        const { executor } = yield* makeExecutor
        const store = yield* Store.IdempotencyStore
        const scope = { tenant: tenant("v1"), turn: "t" }
        const call = ValidatedCall.make(Touch, { id: "x-1" })
        const out = yield* executor.execute(call, { scope })
        const v1 = yield* IdempotencyKey.forCall(call, { scope })
        assert.strictEqual(out.key, v1.key)
        const record = Option.getOrThrow(yield* store.read({ scope: scope.tenant, key: out.key }))
        assert.strictEqual(record.fingerprint, v1.fingerprint)
        assert.strictEqual(record.argumentsText, `{"id":"x-1"}`)
      }))

    it.effect("a handler's key policy that breaks a rule fails construction with InvalidExecutorOptions", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(ToolExecutor.make(Crm, {
          create_task: { run: () => Effect.die("never") },
          add_note: { keyPolicy: { keyFields: ["deal_id"], freeText: ["deal_id"] }, run: () => Effect.die("never") },
          touch: { run: () => Effect.die("never") }
        }))
        assert.strictEqual(error._tag, "InvalidExecutorOptions")
        assert.strictEqual(error.option, "keyPolicy")
        assert.strictEqual(error.tool, "add_note")
        assert.match(error.rule, /overlaps a key field/)
      }))
  })
