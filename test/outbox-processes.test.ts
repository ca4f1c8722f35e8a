/**
 * The outbox under real processes, on the embedded store (one data directory shared by every
 * process) and on the PostgreSQL server: worker processes (`test/process/outbox.mjs`, on the built
 * dist) execute `assign_owner` for 14 leads, each verified call declaring the rep notification
 * (to a Slack-like receiver that deduplicates on `Idempotency-Key`) and the conversion import (to
 * an ads-like receiver that does not); two leads' calls are never verified (one ambiguous, parked
 * `unknown`; one refused). Both receivers are `FakeReceiver`s on 127.0.0.1 that answer some first
 * requests with 503, stall on some, and answer one late (after applying it).
 *
 * 1. The first worker runs no dispatcher and is SIGKILLed inside a handler after 8 completions:
 *    the completed calls' messages are in the outbox, none delivered (killed between `complete`
 *    and delivery), and the call it was running wrote none.
 * 2. A dispatcher process is SIGKILLed mid-delivery (the ads receiver has applied one message and
 *    not answered yet).
 * 3. A second worker finishes the calls (taking over the one the first was running once its lease
 *    expired); then two dispatchers race: a dispatcher process and `toolgate dispatch` (the CLI),
 *    SIGTERMed once everything is delivered (exit 0, its totals printed).
 *
 * Then: every follow-up of every verified mutation was applied exactly once by the deduplicating
 * receiver and at least once by the other (the message whose delivery was cut, twice); no message
 * of an unverified mutation ever reached a receiver; every message is `delivered`, as
 * `toolgate records --messages --json` shows.
 */
import { assert, describe, it } from "@effect/vitest"
import { IdempotencyKey } from "@toolgate/core"
import { FakeReceiver } from "@toolgate/testing"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as Pglite from "../packages/runtime/test/support/pglite.js"
import * as Cli from "./support/cli.js"
import * as Postgres from "./support/postgres.js"
import * as Worker from "./support/worker.js"

const pg = await Postgres.probe()

type Store =
  | { readonly kind: "embedded"; readonly dataDir: string }
  | { readonly kind: "postgres"; readonly url: string; readonly schema: string }

const storeFlags = (store: Store): Array<string> =>
  store.kind === "embedded" ? ["--data-dir", store.dataDir] : ["--store", store.url]

const verified = Array.from({ length: 12 }, (_, i) => `lead-${i}`)
const leads = [...verified.slice(0, 4), "lead-x-ambiguous", "lead-y-refused", ...verified.slice(4)]

interface RecordJson {
  readonly key: string
  readonly status: string
  readonly downstreamKey: string
  readonly arguments: { readonly lead: string }
}
interface MessageJson {
  readonly deliveryKey: string
  readonly status: string
  readonly attempts: number
}

const leadOf = (body: string): string => (JSON.parse(body) as { lead: string }).lead

const until = (what: string, check: () => boolean, timeoutMs = 90_000) =>
  Effect.promise(async () => {
    const deadline = Date.now() + timeoutMs
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  })

const json = <A>(args: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const out = await Cli.toolgate(args, { timeoutMs: 120_000 })
    if (out.code !== 0) throw new Error(`toolgate ${args.join(" ")}: exit ${out.code}: ${out.stderr}`)
    return JSON.parse(out.stdout) as A
  })

const killed = (w: Worker.Worker) =>
  Effect.promise(async () => {
    w.child.kill("SIGKILL")
    return await w.exit
  })

const scenario = (store: Store) =>
  Effect.scoped(Effect.gen(function*() {
    const tenant = `outbox-${Math.random().toString(36).slice(2, 8)}`
    let cutLead: string | undefined
    // first requests of lead-1 answer 503, of lead-2 stall past the dispatcher's timeout; the
    // ads receiver applies lead-3's first import and answers it only after the test is over
    const fault = (late: boolean) => (r: FakeReceiver.Request): FakeReceiver.Fault => {
      const lead = leadOf(r.body)
      if (r.nth > 1) return { _tag: "Ok" }
      if (lead === "lead-1") return { _tag: "Status", status: 503 }
      if (lead === "lead-2") return { _tag: "Stall", ms: 5_000 }
      if (late && lead === "lead-3") {
        cutLead = lead
        return { _tag: "Slow", ms: 120_000 }
      }
      return { _tag: "Ok" }
    }
    const slack = yield* FakeReceiver.make({ dedupe: true, fault: fault(false) })
    const ads = yield* FakeReceiver.make({ dedupe: false, fault: fault(true) })
    const common = { store, tenant, slack: `${slack.url}/hooks/slack`, ads: `${ads.url}/conversions` }

    // 1. a worker without a dispatcher, SIGKILLed inside its 9th verified call
    const first = Worker.start("outbox.mjs", { ...common, mode: "worker", leads, hangAfter: 8 })
    yield* Effect.promise(() => first.event("inside"))
    const firstExit = yield* killed(first)
    assert.strictEqual(firstExit.signal, "SIGKILL")
    const pending = yield* json<ReadonlyArray<MessageJson>>([
      "records",
      "--messages",
      "--json",
      "--scope",
      tenant,
      "--limit",
      "1000",
      ...storeFlags(store)
    ])
    assert.strictEqual(pending.length, 16, "8 completions × 2 follow-ups")
    assert.isTrue(pending.every((m) => m.status === "pending"))
    assert.strictEqual(slack.requests() + ads.requests(), 0)

    // 2. a dispatcher SIGKILLed while the ads receiver holds lead-3's import (applied, unanswered)
    const doomed = Worker.start("outbox.mjs", { ...common, mode: "dispatch", owner: "doomed", leaseMs: 3_000 })
    yield* until("the cut delivery", () => cutLead !== undefined)
    assert.strictEqual((yield* killed(doomed)).signal, "SIGKILL")

    // 3. a second worker finishes the calls; two dispatchers race (a process and the CLI)
    const second = Worker.start("outbox.mjs", { ...common, mode: "worker", leads })
    const secondExit = yield* Effect.promise(() => second.exit)
    assert.strictEqual(secondExit.code, 0, second.stderr())
    const racer = Worker.start("outbox.mjs", { ...common, mode: "dispatch", owner: "racer", leaseMs: 3_000 })
    // the racer reopens the store first (on the embedded store it takes the directory over)
    yield* Effect.promise(() => racer.event("ready"))
    const cli = spawn(process.execPath, [Cli.bin, "dispatch", "--json", "--poll-ms", "100", ...storeFlags(store)], {
      cwd: Cli.root,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let cliOut = ""
    let cliErr = ""
    cli.stdout.setEncoding("utf8").on("data", (chunk: string) => (cliOut += chunk))
    cli.stderr.setEncoding("utf8").on("data", (chunk: string) => (cliErr += chunk))
    const cliExit = new Promise<number | null>((resolve) => cli.on("exit", (code) => resolve(code)))

    const records = yield* json<ReadonlyArray<RecordJson>>([
      "records",
      "--json",
      "--scope",
      tenant,
      "--limit",
      "1000",
      ...storeFlags(store)
    ])
    const succeeded = records.filter((r) => r.status === "succeeded")
    const unverified = records.filter((r) => r.status !== "succeeded")
    assert.deepStrictEqual(succeeded.map((r) => r.arguments.lead).toSorted(), verified.toSorted())
    assert.deepStrictEqual(unverified.map((r) => r.status).toSorted(), ["failed", "unknown"])
    for (const r of records) assert.strictEqual(r.downstreamKey, IdempotencyKey.downstreamKey(r.key, 1))

    yield* until(
      "every follow-up delivered",
      () =>
        succeeded.every((r) =>
          slack.applied().get(`${r.downstreamKey}:0`) === 1 && (ads.applied().get(`${r.downstreamKey}:1`) ?? 0) >= 1
        )
    )
    const settled = () =>
      json<ReadonlyArray<MessageJson>>([
        "records",
        "--messages",
        "--json",
        "--scope",
        tenant,
        "--limit",
        "1000",
        ...storeFlags(store)
      ])
    let messages = yield* settled()
    while (messages.some((m) => m.status !== "delivered")) {
      yield* Effect.sleep("200 millis")
      messages = yield* settled()
    }

    // the CLI settles its round and exits 0; then the process dispatcher (interrupted: 130)
    cli.kill("SIGTERM")
    assert.strictEqual(yield* Effect.promise(() => cliExit), 0, cliErr)
    racer.child.kill("SIGTERM")
    const racerExit = yield* Effect.promise(() => racer.exit)
    assert.strictEqual(racerExit.code, 130, racer.stderr())
    const lines = cliOut.trim().split("\n").map((l) => JSON.parse(l) as { event: string; delivered?: number })
    const stopped = lines.at(-1)
    assert.strictEqual(stopped?.event, "stopped", cliOut)
    // its totals are the sum of its rounds' (as they were when the signal came, not when it started)
    const rounds = lines.filter((l) => l.event === "round")
    assert.strictEqual(stopped?.delivered, rounds.reduce((n, l) => n + (l.delivered ?? 0), 0), cliOut)

    // exactly once with receiver dedup, at least once without, never for an unverified mutation
    assert.strictEqual(messages.length, succeeded.length * 2)
    assert.strictEqual(slack.applied().size, succeeded.length)
    assert.strictEqual(slack.duplicates(), 0)
    for (const r of succeeded) {
      assert.strictEqual(slack.applied().get(`${r.downstreamKey}:0`), 1)
      assert.isAtLeast(ads.applied().get(`${r.downstreamKey}:1`) ?? 0, 1)
    }
    const cut = succeeded.find((r) => r.arguments.lead === "lead-3")
    assert.isAtLeast(ads.applied().get(`${cut?.downstreamKey}:1`) ?? 0, 2, "the cut delivery was made again")
    for (const r of unverified) {
      assert.strictEqual(slack.requestsOf(`${r.downstreamKey}:0`), 0)
      assert.strictEqual(ads.requestsOf(`${r.downstreamKey}:1`), 0)
    }
    assert.strictEqual(ads.applied().size, succeeded.length)
    const retried = messages.filter((m) => m.attempts > 1).length
    assert.isAtLeast(retried, 3, "503, stall and the cut delivery were retried")
  }))

describe("outbox under real processes", () => {
  it.live(
    "embedded store: worker and dispatcher SIGKILLed, racing dispatchers, faulty receivers",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* Effect.promise(Pglite.freshDir)
        yield* scenario({ kind: "embedded", dataDir }).pipe(
          Effect.ensuring(Effect.sync(() => fs.rmSync(dataDir, { recursive: true, force: true })))
        )
      }),
    180_000
  )

  Postgres.describeServer(pg, "PostgreSQL server", () => {
    it.live(
      "PostgreSQL server: worker and dispatcher SIGKILLed, racing dispatchers, faulty receivers",
      () =>
        Effect.gen(function*() {
          const database = `tg_outbox_${Math.random().toString(36).slice(2, 10)}`
          const admin = (statement: string) => Postgres.admin(statement)
          yield* admin(`CREATE DATABASE ${database}`)
          const url = Postgres.url.replace(/\/[^/?]*(\?|$)/, `/${database}$1`)
          yield* scenario({ kind: "postgres", url, schema: "toolgate" }).pipe(
            Effect.ensuring(Effect.ignore(admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)))
          )
        }),
      180_000
    )
  })
})
