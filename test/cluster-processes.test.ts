/**
 * The lead cluster with real processes on the PostgreSQL server (a fresh database): three
 * `toolgate worker` runners and a `toolgate intake` (the built CLI), 500 lead events over 200
 * leads posted to the intake, 10 % of them submitted again (as a browser resubmits a form), the
 * demo's faults inside the turns (stream faults, a CRM that loses an answer, turns a correct
 * pipeline rejects, events delivered twice at once), one runner SIGKILLed mid-run and a fourth
 * joining. Then a second batch accepted without waiting, and a runner stopped by SIGTERM while it
 * holds in-flight turns: it hands its shards over and no turn is lost.
 *
 * What must hold: the CRM applied each intent of each event exactly once (no duplicate, none
 * missing); every event has exactly one reply in the cluster's storage and every submission of it
 * got that reply (the answer's text, or the typed failure of a rejected turn).
 */
import { PgClient } from "@effect/sql-pg"
import { assert, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as net from "node:net"
import * as LeadWorld from "./support/leadWorld.js"
import * as Postgres from "./support/postgres.js"
import * as Worker from "./support/worker.js"

const pg = await Postgres.probe()

const EVENTS = 500
const LEADS = 200
/** The events of the first phase (posted waiting for their answers); the rest go in the SIGTERM phase. */
const FIRST = 440

/** A port free on 127.0.0.1 now. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

interface Reply {
  readonly eventId: string
  readonly status: "accepted" | "answered" | "failed"
  readonly answer?: { readonly text: string; readonly runner: string }
  readonly failure?: { readonly error: string; readonly step: number }
}

const post = async (url: string, body: unknown): Promise<Reply> => {
  for (let attempt = 1;; attempt++) {
    const res = await fetch(url, { method: "POST", body: JSON.stringify(body) })
    const json = await res.json() as Reply & { readonly _tag?: string; readonly message?: string }
    if (res.status === 200 || res.status === 202) return json
    // 503: the cluster did not take the message (a shard between owners); the client sends it again
    if (res.status !== 503 || attempt >= 20) throw new Error(`${res.status} ${JSON.stringify(json)}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/** Runs `f` over `items`, `concurrency` at a time, in order of start. */
const pool = async <A, B>(items: ReadonlyArray<A>, concurrency: number, f: (a: A, i: number) => Promise<B>) => {
  const out: Array<B> = []
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await f(items[i]!, i)
    }
  }))
  return out
}

Postgres.describeServer(pg, "the lead cluster in real processes, on the PostgreSQL server", () => {
  it.live(
    `${EVENTS} events, 3 runners, 10 % resubmitted, one runner SIGKILLed and one joining, then a SIGTERM: each intent once, each event answered once`,
    () =>
      Effect.gen(function*() {
        const world = LeadWorld.events(EVENTS, 14, LEADS)
        const store = yield* Postgres.freshDatabase("tg_cluster_p")
        const { crm, provider } = yield* LeadWorld.servers(world)
        const tools = LeadWorld.toolsFile(crm.url)
        const shared = [
          "--store",
          store,
          "--shards",
          "30",
          "--refresh-interval",
          "500ms",
          "--poll-interval",
          "1s"
        ]
        const workers: Array<Worker.Worker> = []
        const startWorker = async () => {
          const port = await freePort()
          const w = Worker.toolgate([
            "worker",
            ...shared,
            "--port",
            String(port),
            "--base-url",
            `${provider.url}/v1`,
            "--model",
            "gpt-test",
            "--tools",
            tools,
            "--health-check-interval",
            "1s",
            "--lock-expiration",
            "6s",
            "--step-lease",
            "3s",
            "--termination-timeout",
            "10s",
            "--first-byte-timeout",
            "2s",
            "--idle-timeout",
            "750ms",
            "--recovery",
            "reexecute"
          ])
          workers.push(w)
          await w.event("ready")
          return w
        }
        yield* Effect.addFinalizer(() =>
          Effect.promise(async () => {
            for (const w of workers) if (w.child.exitCode === null) w.child.kill("SIGKILL")
            await Promise.all(workers.map((w) => w.exit))
          })
        )
        yield* Effect.promise(() => Promise.all([startWorker(), startWorker(), startWorker()]))
        const intakePort = yield* Effect.promise(freePort)
        const intake = Worker.toolgate(["intake", ...shared, "--port", String(intakePort)])
        workers.push(intake)
        yield* Effect.promise(() => intake.event("ready"))
        const url = `http://127.0.0.1:${intakePort}/lead-events`

        // a bad body: a one-line typed 400, nothing sent
        for (
          const [body, message] of [
            ["{", /^the body is not JSON$/],
            [JSON.stringify({ ...world[0]!.submission, leadId: "a/b" }), /^not a lead event: .*leadId/],
            [JSON.stringify({ ...world[0]!.submission, eventTime: "yesterday" }), /^not a lead event: .*eventTime/]
          ] as const
        ) {
          const res = yield* Effect.promise(() => fetch(url, { method: "POST", body }))
          assert.strictEqual(res.status, 400)
          const json = (yield* Effect.promise(() => res.json())) as { _tag: string; message: string }
          assert.strictEqual(json._tag, "InvalidLeadEvent")
          assert.match(json.message, message)
          assert.notInclude(json.message, "\n")
        }

        const t0 = Date.now()
        // phase 1: post and wait; the demo's delivery faults post twice at once; SIGKILL and join midway
        const replies = new Map<string, Array<Reply>>()
        const keep = (r: Reply) => replies.set(r.eventId, [...(replies.get(r.eventId) ?? []), r])
        let answered = 0
        let killed: Worker.Worker | undefined
        const first = world.slice(0, FIRST)
        yield* Effect.promise(() =>
          pool(first, 40, async (e) => {
            const sends = LeadWorld.submittedTwice(e) ? 2 : 1
            const got = await Promise.all(Array.from({ length: sends }, () => post(`${url}?wait=true`, e.submission)))
            got.forEach(keep)
            if (++answered === 120) {
              killed = workers[1]
              killed!.child.kill("SIGKILL")
              void startWorker()
            }
          })
        )
        assert.strictEqual((yield* Effect.promise(() => killed!.exit)).signal, "SIGKILL")
        const t1 = Date.now()
        // 10 % resubmitted after their answer: the browser posts the form again
        const resubmitted = first.filter((_, i) => i % 10 === 3)
        const again = yield* Effect.promise(() => pool(resubmitted, 20, (e) => post(`${url}?wait=true`, e.submission)))
        again.forEach(keep)

        // phase 2: accepted without waiting, then a runner stops on SIGTERM with turns in flight
        const second = world.slice(FIRST)
        const accepted = yield* Effect.promise(() => pool(second, 20, (e) => post(url, e.submission)))
        assert.deepStrictEqual(new Set(accepted.map((r) => r.status)), new Set(["accepted"]))
        const stopping = workers[0]!
        stopping.child.kill("SIGTERM")
        const stopped = yield* Effect.promise(() => stopping.exit)
        // a graceful stop: interrupted (130, effect's code for it), not killed
        assert.strictEqual(stopped.code, 130, stopping.stderr())
        assert.isTrue(stopping.events().some((e) => e.event === "stopped"))
        // every event of phase 2 is answered by the runners left: a submission again waits for its reply
        const late = yield* Effect.promise(() => pool(second, 20, (e) => post(`${url}?wait=true`, e.submission)))
        late.forEach(keep)

        // each event: every reply it got is the same, the answer a correct pipeline gives
        for (const e of world) {
          const got = replies.get(e.submission.eventId) ?? []
          assert.isAbove(got.length, 0, e.submission.eventId)
          const expected = e.actionable ? "answered" : "failed"
          for (const r of got) {
            assert.strictEqual(r.status, expected, `${e.submission.eventId} (${e.fault}): ${JSON.stringify(r)}`)
            if (r.status === "answered") assert.strictEqual(r.answer!.text, e.answer)
          }
          assert.strictEqual(new Set(got.map((r) => JSON.stringify(r))).size, 1, e.submission.eventId)
        }
        // the CRM: each intent of each event applied exactly once
        const stats = yield* crm.stats
        assert.strictEqual(stats.duplicates, 0)
        assert.deepStrictEqual(stats.byKey, LeadWorld.expectedByKey(world))
        // the cluster's storage: one message per event, one final reply per message
        const counts = yield* SqlClient.SqlClient.use((sql) =>
          Effect.all({
            messages: sql<{ n: string }>`SELECT count(*) AS n FROM toolgate_cluster_messages WHERE kind = 0`,
            replies: sql<
              { n: string; most: string | null }
            >`SELECT count(*) AS n, max(c) AS most FROM (SELECT count(*) AS c FROM toolgate_cluster_replies WHERE kind = 0 GROUP BY request_id) r`
          })
        ).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(store), maxConnections: 1 })))
        assert.strictEqual(Number(counts.messages[0]!.n), EVENTS)
        assert.strictEqual(Number(counts.replies[0]!.n), EVENTS)
        assert.strictEqual(Number(counts.replies[0]!.most), 1)

        // what each runner did (printed for the record; the invariants above do not depend on it)
        const turns = workers.flatMap((w) => w.events().filter((e) => e.event === "turn"))
        const perRunner: Record<string, number> = {}
        for (const t of turns) perRunner[String(t.runner)] = (perRunner[String(t.runner)] ?? 0) + 1
        const perEvent = new Map<string, number>()
        for (const t of turns) perEvent.set(String(t.eventId), (perEvent.get(String(t.eventId)) ?? 0) + 1)
        const replayed = turns.filter((t) => Number(t.stepsReplayed ?? 0) > 0).length
        console.log(JSON.stringify({
          perRunner,
          turns: turns.length,
          eventsTurnedTwice: [...perEvent.values()].filter((n) => n > 1).length,
          turnsThatReplayedSteps: replayed,
          phase1Ms: t1 - t0,
          totalMs: Date.now() - t0
        }))
      }).pipe(Effect.scoped),
    240_000
  )
})
