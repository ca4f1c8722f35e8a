/**
 * The agent loop's durability with real processes: a 3-step SDR turn (look up the contact, create
 * the follow-up task, assign the owner, then the answer) against the fake provider and the fake
 * CRM on 127.0.0.1, its worker (`test/process/agent.mjs`, on the built dist) SIGKILLed after each
 * step in turn and the turn delivered again to a fresh process. Every mutation reaches the CRM
 * exactly once, the final transcript is the one of an uninterrupted run (and every request the
 * model is sent is, byte for byte, the uninterrupted run's), and the provider is never asked again
 * for a journaled step (counted at the provider, per step). Also a worker SIGKILLed
 * while the model streams a step (its lease live): the fresh process waits out the lease, asks that
 * step again, and still applies every mutation once. On the embedded store and on the PostgreSQL
 * server.
 */
import { assert, describe, it } from "@effect/vitest"
import { FakeCrm, FakeProvider } from "@toolgate/testing"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll } from "vitest"
import * as Pglite from "../packages/runtime/test/support/pglite.js"
import * as Postgres from "./support/postgres.js"
import * as Worker from "./support/worker.js"

const pg = await Postgres.probe()

type Store =
  | { readonly kind: "embedded"; readonly dataDir: string }
  | { readonly kind: "postgres"; readonly url: string; readonly schema: string }

/** The SDR turn the model answers a lead with: three steps of calls, then the answer. */
const script = (lead: string): ReadonlyArray<FakeProvider.Scenario> => [
  {
    text: `New inbound lead ${lead}. Looking up the contact first.`,
    toolCalls: [{ name: "lookup_contact", arguments: { lead_id: lead, email: `buyer@${lead}.example` } }]
  },
  {
    text: "A fit for a pilot. Creating the follow-up task.",
    toolCalls: [{ name: "create_task", arguments: { lead_id: lead, title: "Call back about pilot pricing (café ☕)" } }]
  },
  {
    text: "Routing the lead to its owner.",
    toolCalls: [{ name: "assign_owner", arguments: { lead_id: lead, owner_id: "usr_7731" } }]
  },
  { text: `Done: ${lead} has a follow-up task and an owner.` }
]

interface Done {
  readonly transcript: unknown
  readonly stoppedBy: string
  readonly cost: { readonly modelRequests: number; readonly stepsReplayed: number; readonly requestsSaved: number }
}

/**
 * A fake provider for one lead (a fixed seed: the same requests in the same order get the same
 * ids) and a fake CRM; `stall(step, seq)` holds a request's answer forever (a model that streams
 * while its worker is killed).
 */
const servers = (lead: string, stall?: (step: number, seq: number) => boolean) =>
  Effect.gen(function*() {
    /** Each request's body as sent, by step. */
    const sent: Array<{ readonly step: number; readonly body: string }> = []
    const provider = yield* FakeProvider.make({
      seed: 7,
      requestKey: (r) => `step-${FakeProvider.stepOf(r.body)}`,
      plan: FakeProvider.steps(script(lead), {
        answer: (request, step) => {
          sent.push({ step, body: request.rawBody })
          return stall?.(step, request.seq) === true ? { headersDelayMs: Infinity } : {}
        }
      })
    })
    const crm = yield* FakeCrm.make()
    return { provider, crm, sent }
  })

/** The body sent for each step (the last one when a step was asked twice). */
const bodiesOf = (sent: ReadonlyArray<{ readonly step: number; readonly body: string }>) =>
  [1, 2, 3, 4].map((step) => sent.filter((s) => s.step === step).at(-1)?.body)

/** Model requests per step, as the provider counted them. */
const requestsPerStep = (provider: FakeProvider.Server) =>
  Effect.map(
    provider.stats,
    (stats) => [1, 2, 3, 4].map((step) => stats.log.filter((r) => r.key === `step-${step}`).length)
  )

const run = (config: Record<string, unknown>) => Worker.start("agent.mjs", config)

const finish = (worker: Worker.Worker) =>
  Effect.promise(async () => {
    const { code } = await worker.exit
    assert.strictEqual(code, 0, `${worker.stderr()}\n${worker.lines.join("\n")}`)
    return (await worker.event("done")) as unknown as Done
  })

/** Each mutation of the lead applied once, the lookups never reaching the CRM. */
const assertAppliedOnce = (crm: FakeCrm.Server, lead: string) =>
  Effect.gen(function*() {
    const stats = yield* crm.stats
    assert.strictEqual(stats.duplicates, 0)
    assert.deepStrictEqual(stats.byKey, { [`${lead}/create_task`]: 1, [`${lead}/assign_owner`]: 1 })
  })

const scenarios = (name: string, makeStore: () => Promise<Store>) =>
  describe(name, () => {
    let store: Store | undefined
    const storeOf = Effect.promise(async () => (store ??= await makeStore()))
    let turns = 0
    /** Each run its own turn (scope); every run answers the same lead, so transcripts compare. */
    const turnOf = (label: string) => ({ scope: { tenant: "acme", turn: `lead-x-${label}-${++turns}` } })

    /** The transcript of an uninterrupted run (its own servers, the same seed), and what it sent. */
    const reference = Effect.gen(function*() {
      const { scope } = turnOf("reference")
      const { crm, provider, sent } = yield* servers("lead-x")
      const done = yield* finish(
        run({ store: yield* storeOf, provider: provider.url, crm: crm.url, scope, lead: "lead-x" })
      )
      assert.strictEqual(done.stoppedBy, "answer")
      assert.deepStrictEqual(yield* requestsPerStep(provider), [1, 1, 1, 1])
      yield* assertAppliedOnce(crm, "lead-x")
      return { transcript: done.transcript, bodies: bodiesOf(sent) }
    })

    it.live(
      "uninterrupted, then SIGKILLed after step 1, 2, 3 and 4: each mutation once, no journaled step asked again, the same transcript",
      () =>
        Effect.gen(function*() {
          const uninterrupted = yield* reference
          for (const k of [1, 2, 3, 4]) {
            const { scope } = turnOf(`kill-${k}`)
            const { crm, provider, sent } = yield* servers("lead-x")
            const base = { store: yield* storeOf, provider: provider.url, crm: crm.url, scope, lead: "lead-x" }
            const victim = run({ ...base, pauseAfterStep: k })
            const paused = yield* Effect.promise(() => victim.line((l) => l.includes(`"step":${k},`)))
            assert.deepInclude(JSON.parse(paused), { event: "step", step: k, replayed: false })
            victim.child.kill("SIGKILL")
            assert.strictEqual((yield* Effect.promise(() => victim.exit)).signal, "SIGKILL")
            assert.deepStrictEqual(yield* requestsPerStep(provider), [1, 2, 3, 4].map((s) => (s <= k ? 1 : 0)))

            const fresh = run(base)
            const done = yield* finish(fresh)
            assert.deepStrictEqual(done.transcript, uninterrupted.transcript, `killed after step ${k}`)
            // and the model was sent, byte for byte, what the uninterrupted run sent it
            assert.deepStrictEqual(bodiesOf(sent), uninterrupted.bodies)
            assert.strictEqual(done.stoppedBy, "answer")
            // the journaled steps were replayed, the others asked once: 4 requests in all
            assert.deepStrictEqual(yield* requestsPerStep(provider), [1, 1, 1, 1])
            assert.deepStrictEqual(
              fresh.events().filter((e) => e.event === "step").map((e) => e.replayed),
              [1, 2, 3, 4].map((s) => s <= k)
            )
            assert.strictEqual(done.cost.modelRequests, 4 - k)
            assert.strictEqual(done.cost.stepsReplayed, k)
            assert.strictEqual(done.cost.requestsSaved, k)
            yield* assertAppliedOnce(crm, "lead-x")
          }
        }).pipe(Effect.scoped),
      300_000
    )

    it.live(
      "SIGKILLed while the model streams step 3: the fresh process waits out its lease, asks step 3 again, each mutation once",
      () =>
        Effect.gen(function*() {
          const uninterrupted = yield* reference
          const { scope } = turnOf("mid-step")
          // the first request of step 3 is held (the model still streaming) until its worker dies
          const { crm, provider, sent } = yield* servers("lead-x", (step, seq) => step === 3 && seq === 3)
          const base = {
            store: yield* storeOf,
            provider: provider.url,
            crm: crm.url,
            scope,
            lead: "lead-x",
            leaseMs: 1_500
          }
          const victim = run(base)
          yield* Effect.promise(() => victim.line((l) => l.includes(`"step":2,`)))
          yield* Effect.promise(async () => {
            while ((await Effect.runPromise(requestsPerStep(provider)))[2] === 0) {
              await new Promise((resolve) => setTimeout(resolve, 20))
            }
          })
          victim.child.kill("SIGKILL")
          yield* Effect.promise(() => victim.exit)
          const fresh = run(base)
          const done = yield* finish(fresh)
          assert.deepStrictEqual(done.transcript, uninterrupted.transcript)
          assert.deepStrictEqual(yield* requestsPerStep(provider), [1, 1, 2, 1])
          // step 3 asked again by the fresh process: the same bytes as the killed one's request
          const third = sent.filter((s) => s.step === 3).map((s) => s.body)
          assert.strictEqual(third[0], third[1])
          assert.deepStrictEqual(bodiesOf(sent), uninterrupted.bodies)
          assert.deepStrictEqual(fresh.events().filter((e) => e.event === "step").map((e) => e.replayed), [
            true,
            true,
            false,
            false
          ])
          yield* assertAppliedOnce(crm, "lead-x")
        }).pipe(Effect.scoped),
      300_000
    )
  })

scenarios(
  "a 3-step agent turn SIGKILLed between steps, on an embedded data dir",
  () => Pglite.freshDir().then((dataDir) => ({ kind: "embedded", dataDir }))
)

Postgres.describeServer(pg, "a 3-step agent turn SIGKILLed between steps, on the PostgreSQL server", () => {
  const schema = Postgres.uniqueSchema("tg_agent")
  afterAll(() =>
    Effect.runPromise(
      SqlClient.SqlClient.use((sql) => sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)).pipe(
        Effect.provide(Postgres.client(1)),
        Effect.ignore
      )
    )
  )
  scenarios("the same runs", () => Promise.resolve({ kind: "postgres", url: Postgres.url, schema }))
})
