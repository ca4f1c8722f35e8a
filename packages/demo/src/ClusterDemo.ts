/**
 * `toolgate demo --workers N` (N ≥ 2): the demo's leads answered by a lead cluster of N real
 * worker processes (`toolgate worker`, started by the caller's `workerCommand`) on a PostgreSQL
 * server, sent as lead events through a cluster client, against the same fake provider (the
 * demo's stream faults) and fake CRM (every tool a webhook on it). The demo's delivery faults
 * become real ones: `redelivered` is the event sent twice at once, and `crashed_after_step_1`
 * SIGKILLs a worker once that lead's step 1 has executed (a runner killed mid-turn: its turns are
 * delivered again by the shards' next owners, which replay their journals); a fresh worker takes
 * its place. The report gives each worker's turns, the kills, the redeliveries and the CRM's count
 * of mutations and duplicates.
 *
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import { LeadEntity, LeadEvent, Runner } from "@toolgate/cluster"
import { FakeCrm, FakeProvider } from "@toolgate/testing"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Demo from "./Demo.js"
import * as DemoScenario from "./DemoScenario.js"

/**
 * Options of a cluster demo.
 *
 * - `leads`, `seed`: as for the demo.
 * - `workers`: how many worker processes (≥ 1).
 * - `store`: the PostgreSQL server's `postgres://` URL (the cluster, the store, the journal).
 * - `workerCommand`: the argv that starts `toolgate worker` (the flags are appended).
 * - `kills`: the most workers SIGKILLed by `crashed_after_step_1` leads (default 2).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly leads: number
  readonly seed: number
  readonly workers: number
  readonly store: string
  readonly workerCommand: ReadonlyArray<string>
  readonly kills?: number | undefined
}

/**
 * One worker's line of the report: its address, the turns it answered (or rejected), and whether
 * the demo SIGKILLed it.
 *
 * @since 0.1.0
 * @category models
 */
export interface WorkerRow {
  readonly runner: string
  readonly turns: number
  readonly killed: boolean
}

/**
 * The cluster demo's report.
 *
 * - `answered`, `rejected` (by the failed step's error tag): the leads' replies.
 * - `redeliveries.turnsReplayingSteps`: turns that replayed journaled steps (a delivery after a
 *   kill); `redeliveries.eventsTurnedTwice`: events whose turn completed on two workers (the first
 *   one killed before its reply was stored).
 * - `crmMutations`, `crmDuplicates`: the CRM's own count (lookups included: every tool is a
 *   webhook here); `crmExpected`: what a correct run applies (each lead's lookup, and its task and
 *   owner when its turn is actionable).
 *
 * @since 0.1.0
 * @category models
 */
export interface Report {
  readonly leads: number
  readonly seed: number
  readonly workers: ReadonlyArray<WorkerRow>
  readonly kills: number
  readonly answered: number
  readonly rejected: Readonly<Record<string, number>>
  readonly redeliveries: { readonly turnsReplayingSteps: number; readonly eventsTurnedTwice: number }
  readonly crmMutations: number
  readonly crmDuplicates: number
  readonly crmExpected: number
  readonly elapsedMs: number
}

/**
 * A worker process exited before it joined the cluster (its error is on stderr): `code` or
 * `signal`.
 *
 * @since 0.1.0
 * @category errors
 */
export class WorkerExited extends Schema.TaggedError<WorkerExited>()("WorkerExited", {
  code: Schema.NullOr(Schema.Number),
  signal: Schema.NullOr(Schema.String)
}) {
  override get message(): string {
    return `a worker process exited before joining the cluster (${this.code ?? this.signal}); see its error above`
  }
}

interface Proc {
  readonly child: ChildProcess
  readonly runner: string
  readonly turns: Array<Record<string, unknown>>
  readonly ready: Promise<void>
  killed: boolean
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

/** A tool the fake CRM performs, every argument a required string. */
const tool = (crm: string, name: string, properties: ReadonlyArray<string>) =>
  FakeCrm.toolDefinition(crm, name, Object.fromEntries(properties.map((p) => [p, "string" as const])))

const prefix = "toolgate_demo"
const shards = 30

/**
 * Runs the cluster demo and returns its report (the workers are stopped with SIGTERM at the end).
 *
 * @since 0.1.0
 * @category running
 */
export const run = (options: Options) =>
  Effect.gen(function*() {
    const leads = DemoScenario.leads(options.leads, options.seed)
    const byId = new Map(leads.map((l) => [l.id, l]))
    const started = yield* Clock.currentTimeMillis
    const procs: Array<Proc> = []
    let kills = 0
    const maxKills = options.kills ?? 2

    const crm = yield* FakeCrm.make({ plan: Demo.crmPlan(byId) })
    const plan = Demo.providerPlan(byId, 1)
    let startWorker: () => Promise<Proc> = () => Promise.reject(new Error("not yet"))
    const provider = yield* FakeProvider.make({
      seed: options.seed,
      requestKey: Demo.requestKey,
      plan: (request) => {
        const lead = byId.get(String((request.body as { user?: unknown }).user).split("/").pop()!)
        // step 2 asked: the lead's step 1 has executed; kill a live worker mid-turn
        if (
          lead?.fault === "crashed_after_step_1" && request.attempt === 1 &&
          FakeProvider.stepOf(request.body) === 2 && kills < maxKills
        ) {
          const victim = procs.find((p) => !p.killed && p.turns.length > 0)
          if (victim !== undefined) {
            kills++
            victim.killed = true
            victim.child.kill("SIGKILL")
            startWorker().catch(() => undefined)
          }
        }
        return plan(request)
      }
    })
    const tools = join(mkdtempSync(join(tmpdir(), "toolgate-demo-")), "tools.json")
    writeFileSync(
      tools,
      JSON.stringify([
        tool(crm.url, "lookup_contact", ["lead_id", "email"]),
        tool(crm.url, "create_task", ["lead_id", "title", "due_date"]),
        tool(crm.url, "assign_owner", ["lead_id", "owner_id"])
      ])
    )

    startWorker = async () => {
      const port = await freePort()
      const [command, ...rest] = options.workerCommand
      const child = spawn(command!, [
        ...rest,
        "--store",
        options.store,
        "--port",
        String(port),
        "--cluster-prefix",
        prefix,
        "--shards",
        String(shards),
        "--refresh-interval",
        "500ms",
        "--poll-interval",
        "1s",
        "--health-check-interval",
        "1s",
        "--step-lease",
        "3s",
        "--base-url",
        `${provider.url}/v1`,
        "--model",
        "gpt-demo",
        "--tools",
        tools,
        "--first-byte-timeout",
        "2s",
        "--idle-timeout",
        "750ms",
        "--recovery",
        "reexecute"
      ], { stdio: ["ignore", "pipe", "inherit"] })
      let ready!: () => void
      const proc: Proc = {
        child,
        runner: `127.0.0.1:${port}`,
        turns: [],
        ready: new Promise<void>((resolve, reject) => {
          ready = resolve
          child.once("exit", (code, signal) => reject(new WorkerExited({ code, signal: signal ?? null })))
        }),
        killed: false
      }
      let buffer = ""
      child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
        buffer += chunk
        for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
          const line = buffer.slice(0, nl)
          buffer = buffer.slice(nl + 1)
          if (!line.startsWith("{")) continue
          const event = JSON.parse(line) as Record<string, unknown>
          if (event.event === "ready") ready()
          else if (event.event === "turn") proc.turns.push(event)
        }
      })
      procs.push(proc)
      await proc.ready
      return proc
    }
    yield* Effect.addFinalizer(() =>
      Effect.promise(() =>
        Promise.all(procs.map((p) =>
          p.child.exitCode !== null || p.child.signalCode !== null
            ? Promise.resolve()
            : new Promise<void>((resolve) => {
              p.child.once("exit", () => resolve())
              p.child.kill("SIGTERM")
            })
        ))
      )
    )
    yield* Effect.tryPromise({
      try: () => Promise.all(Array.from({ length: options.workers }, () => startWorker())),
      catch: (e) => e instanceof WorkerExited ? e : new WorkerExited({ code: null, signal: null })
    })

    const clientContext = yield* Layer.build(
      Runner.layerClient({ prefix, shardsPerGroup: shards }).pipe(
        Layer.provide(PgClient.layer({ url: Redacted.make(options.store), maxConnections: 4 }))
      )
    )
    const clientFor = yield* LeadEntity.Lead.client.pipe(Effect.provideContext(clientContext))
    const eventOf = (lead: DemoScenario.Lead, i: number) =>
      LeadEvent.fromSubmission({
        tenant: "demo",
        leadId: lead.id,
        eventId: `${lead.id}-s${options.seed}`,
        eventTime: new Date(Date.UTC(2026, 11, 1, 9, 0, i)).toISOString(),
        payload: { _tag: "form_submission", form: "demo-request", fields: { company: lead.company, email: lead.email } }
      })
    const exits = yield* Effect.forEach(leads, (lead, i) => {
      const event = eventOf(lead, i)
      const send = Effect.exit(clientFor(LeadEvent.entityId(event)).Handle(event))
      return lead.fault === "redelivered"
        ? Effect.map(Effect.all([send, send], { concurrency: 2 }), ([a]) => a)
        : send
    }, { concurrency: 32 })

    const rejected: Record<string, number> = {}
    let answered = 0
    for (const exit of exits) {
      if (Exit.isSuccess(exit)) answered++
      else {
        const failure = exit.cause.reasons.find((r) => r._tag === "Fail")
        const tag = failure?._tag === "Fail" && failure.error instanceof LeadEntity.TurnFailed
          ? failure.error.error
          : "ClusterError"
        rejected[tag] = (rejected[tag] ?? 0) + 1
      }
    }
    const turns = procs.flatMap((p) => p.turns)
    const perEvent = new Map<string, number>()
    for (const t of turns) perEvent.set(String(t.eventId), (perEvent.get(String(t.eventId)) ?? 0) + 1)
    const stats = yield* crm.stats
    return {
      leads: options.leads,
      seed: options.seed,
      workers: procs.map((p) => ({ runner: p.runner, turns: p.turns.length, killed: p.killed })),
      kills,
      answered,
      rejected,
      redeliveries: {
        turnsReplayingSteps: turns.filter((t) => Number(t.stepsReplayed ?? 0) > 0).length,
        eventsTurnedTwice: [...perEvent.values()].filter((n) => n > 1).length
      },
      crmMutations: stats.mutations,
      crmDuplicates: stats.duplicates,
      crmExpected: leads.reduce((n, l) => n + (l.actionable ? 3 : 1), 0),
      elapsedMs: (yield* Clock.currentTimeMillis) - started
    } satisfies Report
  }).pipe(Effect.scoped)

/**
 * The report as text.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (report: Report): string =>
  [
    `toolgate demo: ${report.leads} leads (seed ${report.seed}) on a lead cluster of ${
      report.workers.filter((w) => !w.killed).length
    } workers, ${report.kills} SIGKILLed mid-turn and replaced, in ${(report.elapsedMs / 1000).toFixed(1)} s`,
    "",
    "  worker             turns",
    ...report.workers.map((w) =>
      `  ${w.runner.padEnd(18)} ${String(w.turns).padStart(5)}${w.killed ? "  (SIGKILLed)" : ""}`
    ),
    "",
    `  answered: ${report.answered}; rejected: ${
      Object.entries(report.rejected).map(([k, v]) => `${k} ${v}`).join(", ") || "none"
    }`,
    `  redeliveries: ${report.redeliveries.turnsReplayingSteps} turns replayed journaled steps, ${report.redeliveries.eventsTurnedTwice} events turned twice`,
    `  CRM: ${report.crmMutations} mutations (lookups included; a first run on this store applies ${report.crmExpected}), ${report.crmDuplicates} duplicates`
  ].join("\n")
