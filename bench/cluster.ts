/**
 * `npm run bench:cluster`: the lead cluster (`@toolgate/cluster`) against one PostgreSQL server
 * (`TOOLGATE_PG_URL`, default `postgres://postgres@127.0.0.1:5432/test`; each configuration in a
 * fresh database, dropped after):
 *
 * - turns per second with 1, 2 and 4 `toolgate worker` processes (the built CLI), `EVENTS` lead
 *   events over `EVENTS / 2` leads sent at once (64 in flight) through a cluster client, each a
 *   3-step turn (two webhook calls on a fake CRM, then the answer) against a fake provider in this
 *   process; the ratio to 1 worker, same run;
 * - the cluster hop: the median latency of one turn sent through the cluster to 1 worker, one at a
 *   time, minus that of the same turn run directly on the same agent stack in this process;
 * - the rows the server wrote per turn (inserts, updates and deletes on the store's and the
 *   cluster's tables, from `pg_stat_user_tables` once the workers have exited) and so its rows per
 *   second at the highest rate.
 *
 * Prints a table and rewrites the block between `<!-- cluster:begin -->` and
 * `<!-- cluster:end -->` in the hand-written part of `bench/RESULTS.md` (which `npm run bench`
 * keeps). It is its own script: it takes about two minutes and needs the server.
 */
import { PgClient } from "@effect/sql-pg"
import { ToolsFile, ToolValidator } from "@toolgate/adapters"
import * as Worker from "@toolgate/cli/Worker"
import { LeadEntity, LeadEvent, Runner } from "@toolgate/cluster"
import { WebhookHandler } from "@toolgate/runtime"
import { FakeCrm, FakeProvider } from "@toolgate/testing"
import { Effect, Exit, Layer, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const EVENTS = Number(process.env.TOOLGATE_BENCH_CLUSTER_EVENTS ?? 240)
const RUNNERS = [1, 2, 4] as const
const LATENCY_TURNS = 25
const base = process.env.TOOLGATE_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const root = fileURLToPath(new URL("../..", import.meta.url))
const bin = join(root, "packages/cli/bin/toolgate.js")
const resultsPath = join(root, "bench/RESULTS.md")
const log = (message: string) => process.stderr.write(`${message}\n`)

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

const admin = (statement: string) =>
  SqlClient.SqlClient.use((sql) => sql.unsafe(statement)).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(base), maxConnections: 1 })),
    Effect.orDie
  )

/** A fresh database for one configuration, dropped when the scope closes; its URL. */
const database = (label: string) =>
  Effect.gen(function*() {
    const name = `tg_bench_cluster_${label}_${process.pid}`
    yield* admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    yield* Effect.acquireRelease(
      admin(`CREATE DATABASE "${name}"`),
      () => Effect.ignore(admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))
    )
    const url = new URL(base)
    url.pathname = `/${name}`
    return url.toString()
  })

/** The event a model request is for: the user message names it. */
const eventIdOf = (body: unknown) => /, event (\S+) at /.exec(JSON.stringify(body))?.[1] ?? "unknown"

const eventsOf = (count: number, label: string) =>
  Array.from({ length: count }, (_, i) =>
    LeadEvent.fromSubmission({
      tenant: "bench",
      leadId: `lead-${String(i % Math.max(1, Math.floor(count / 2))).padStart(4, "0")}`,
      eventId: `${label}-${i}`,
      eventTime: new Date(Date.UTC(2026, 11, 1, 9, 0, i)).toISOString(),
      payload: { _tag: "chat_message", text: `Pricing for ${i % 7 + 1} seats, please.` }
    }))

/** The fake provider (a 3-step turn per event) and the fake CRM, and the tools file on it. */
const servers = Effect.gen(function*() {
  const provider = yield* FakeProvider.make({
    seed: 14,
    requestKey: (r) => `${eventIdOf(r.body)}#${FakeProvider.stepOf(r.body)}`,
    plan: (request) => {
      const event = eventIdOf(request.body)
      const steps: ReadonlyArray<FakeProvider.Scenario> = [
        { text: "Looking up the contact.", toolCalls: [{ name: "lookup_contact", arguments: { lead: event } }] },
        { text: "Creating the task.", toolCalls: [{ name: "create_task", arguments: { lead: event, title: "Call" } }] },
        { text: `Done: ${event}.` }
      ]
      return { source: FakeProvider.openAiChat(steps[Math.min(FakeProvider.stepOf(request.body), 3) - 1]!) }
    }
  })
  const crm = yield* FakeCrm.make()
  const tool = (name: string, properties: ReadonlyArray<string>) => ({
    type: "function",
    function: {
      name,
      parameters: {
        type: "object",
        properties: Object.fromEntries(properties.map((p) => [p, { type: "string" }])),
        required: properties
      }
    },
    webhook: `${crm.url}/tools/${name}`
  })
  const tools = join(mkdtempSync(join(os.tmpdir(), "toolgate-bench-")), "tools.json")
  writeFileSync(tools, JSON.stringify([tool("lookup_contact", ["lead"]), tool("create_task", ["lead", "title"])]))
  return { provider, crm, tools }
})

const cluster: Runner.Options = { shardsPerGroup: 60, refreshAssignmentsMs: 500, messagePollMs: 1_000 }

/** Starts `count` worker processes on `store`; they are SIGTERMed and awaited when the scope closes. */
const workers = (count: number, store: string, providerUrl: string, tools: string) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      Promise.all(Array.from({ length: count }, async () => {
        const port = await freePort()
        const child = spawn(process.execPath, [
          bin,
          "worker",
          "--store",
          store,
          "--port",
          String(port),
          "--shards",
          "60",
          "--refresh-interval",
          "500ms",
          "--poll-interval",
          "1s",
          "--base-url",
          `${providerUrl}/v1`,
          "--model",
          "gpt-bench",
          "--tools",
          tools
        ], { stdio: ["ignore", "pipe", "inherit"] })
        await new Promise<void>((resolve, reject) => {
          let buffer = ""
          child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
            buffer += chunk
            if (buffer.includes("\"event\":\"ready\"")) resolve()
          })
          child.once("exit", (code) => reject(new Error(`a worker exited (${code}) before it was ready`)))
        })
        return child
      }))
    ),
    (children: ReadonlyArray<ChildProcess>) =>
      Effect.promise(() =>
        Promise.all(children.map((child) =>
          new Promise<void>((resolve) => {
            child.once("exit", () => resolve())
            child.kill("SIGTERM")
          })
        ))
      )
  )

const client = (store: string) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      Runner.layerClient(cluster).pipe(Layer.provide(PgClient.layer({ url: Redacted.make(store), maxConnections: 4 })))
    )
    const clientFor = yield* LeadEntity.Lead.client.pipe(Effect.provideContext(context))
    return (event: LeadEvent.LeadEvent) => clientFor(LeadEvent.entityId(event)).Handle(event)
  })

const rowsWritten = (store: string) =>
  SqlClient.SqlClient.use((sql) =>
    sql<{ store: string | null; cluster: string | null }>`
      SELECT sum(n_tup_ins + n_tup_upd + n_tup_del) FILTER (WHERE relname NOT LIKE 'toolgate_cluster_%') AS store,
             sum(n_tup_ins + n_tup_upd + n_tup_del) FILTER (WHERE relname LIKE 'toolgate_cluster_%') AS cluster
      FROM pg_stat_user_tables`
  ).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(store), maxConnections: 1 })),
    Effect.map(([row]) => ({ store: Number(row?.store ?? 0), cluster: Number(row?.cluster ?? 0) }))
  )

interface Throughput {
  readonly runners: number
  readonly turns: number
  readonly seconds: number
  readonly turnsPerSecond: number
  readonly storeRowsPerTurn: number
  readonly clusterRowsPerTurn: number
}

const throughput = (runners: number) =>
  Effect.gen(function*() {
    const store = yield* database(`r${runners}`)
    const { crm, provider, tools } = yield* servers
    const rows = yield* Effect.scoped(Effect.gen(function*() {
      yield* workers(runners, store, provider.url, tools)
      const send = yield* client(store)
      // warm-up: every worker has its shards and its connections
      yield* Effect.forEach(eventsOf(runners * 8, `warm${runners}`), send, { concurrency: 16, discard: true })
      const events = eventsOf(EVENTS, `run${runners}`)
      const started = performance.now()
      const exits = yield* Effect.forEach(events, (e) => Effect.exit(send(e)), { concurrency: 64 })
      const seconds = (performance.now() - started) / 1000
      const failed = exits.filter(Exit.isFailure).length
      if (failed > 0) throw new Error(`${failed} turns failed with ${runners} runners`)
      return { seconds, warm: runners * 8 }
    }))
    const stats = yield* crm.stats
    if (stats.duplicates > 0) throw new Error(`${stats.duplicates} duplicate CRM mutations`)
    const written = yield* rowsWritten(store)
    const turns = EVENTS + rows.warm
    log(`${runners} runner(s): ${EVENTS} turns in ${rows.seconds.toFixed(1)} s`)
    return {
      runners,
      turns: EVENTS,
      seconds: rows.seconds,
      turnsPerSecond: EVENTS / rows.seconds,
      storeRowsPerTurn: written.store / turns,
      clusterRowsPerTurn: written.cluster / turns
    } satisfies Throughput
  }).pipe(Effect.scoped)

const median = (xs: ReadonlyArray<number>) => {
  const sorted = xs.toSorted((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

/** Median ms of one turn run directly, and of one sent through the cluster to 1 runner. */
const latency = Effect.gen(function*() {
  const store = yield* database("latency")
  const { provider, tools } = yield* servers
  const file = yield* ToolsFile.parse(readFileSync(tools, "utf8"))
  const toolkit = ToolValidator.toToolkit(file.validator, {
    success: Schema.Json,
    failure: WebhookHandler.WebhookFailure
  })
  const agent = yield* Layer.build(
    Worker.agent({
      store,
      provider: "openai-chat",
      baseUrl: `${provider.url}/v1`,
      model: "gpt-bench",
      apiKey: undefined,
      tools: file.tools,
      toolkit
    }).pipe(Layer.provide(PgClient.layer({ url: Redacted.make(store), maxConnections: 4 })))
  )
  const answer = LeadEntity.answer({ toolkit, runner: "direct" })
  const direct: Array<number> = []
  for (const event of eventsOf(LATENCY_TURNS + 5, "direct")) {
    const started = performance.now()
    yield* answer(event).pipe(Effect.provideContext(agent))
    direct.push(performance.now() - started)
  }
  yield* workers(1, store, provider.url, tools)
  const send = yield* client(store)
  const hop: Array<number> = []
  for (const event of eventsOf(LATENCY_TURNS + 5, "hop")) {
    const started = performance.now()
    yield* send(event)
    hop.push(performance.now() - started)
  }
  // the first 5 of each warm the connections and the shard
  return { direct: median(direct.slice(5)), cluster: median(hop.slice(5)) }
}).pipe(Effect.scoped)

const program = Effect.gen(function*() {
  const began = performance.now()
  const load = os.loadavg()
  const rows: Array<Throughput> = []
  for (const runners of RUNNERS) rows.push(yield* throughput(runners))
  const hop = yield* latency
  const one = rows[0]!.turnsPerSecond
  const best = rows.reduce((a, b) => (b.turnsPerSecond > a.turnsPerSecond ? b : a))
  const perTurn = best.storeRowsPerTurn + best.clusterRowsPerTurn
  const table = [
    "| runners | turns | seconds | turns/s | × 1 runner | store rows/turn | cluster rows/turn |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows.map((r) =>
      `| ${r.runners} | ${r.turns} | ${r.seconds.toFixed(1)} | ${r.turnsPerSecond.toFixed(1)} | ${
        (r.turnsPerSecond / one).toFixed(2)
      } | ${r.storeRowsPerTurn.toFixed(1)} | ${r.clusterRowsPerTurn.toFixed(1)} |`
    )
  ].join("\n")
  const block = `<!-- cluster:begin -->
## Lead cluster (\`npm run bench:cluster\`, \`bench/cluster.ts\`)

Written on ${new Date().toISOString().slice(0, 10)} in ${
    ((performance.now() - began) / 1000).toFixed(0)
  } s; ${os.cpus().length} cores, load average at the start ${
    load.map((l) => l.toFixed(2)).join(" / ")
  }. ${EVENTS} lead events over ${
    EVENTS / 2
  } leads, 64 in flight, each a 3-step turn (two webhook calls on the fake CRM, then the answer); the workers, the
fake provider, the fake CRM, the client and PostgreSQL share the machine.

${table}

- Cluster hop: a turn sent through the cluster to 1 worker, one at a time, takes ${
    hop.cluster.toFixed(1)
  } ms (median of ${LATENCY_TURNS}); the same turn run directly on the same agent stack, ${
    hop.direct.toFixed(1)
  } ms: the hop adds ${(hop.cluster - hop.direct).toFixed(1)} ms per turn.
- Store rows at the highest rate (${best.runners} runner${best.runners === 1 ? "" : "s"}, ${
    best.turnsPerSecond.toFixed(1)
  } turns/s): ${perTurn.toFixed(1)} rows written per turn (${
    best.storeRowsPerTurn.toFixed(1)
  } idempotency store and journal, ${best.clusterRowsPerTurn.toFixed(1)} cluster), ${
    (perTurn * best.turnsPerSecond).toFixed(0)
  } rows/s.
<!-- cluster:end -->`
  process.stdout.write(`${block}\n`)
  const text = readFileSync(resultsPath, "utf8")
  const begin = text.indexOf("<!-- cluster:begin -->")
  const end = text.indexOf("<!-- cluster:end -->")
  writeFileSync(
    resultsPath,
    begin >= 0 && end > begin
      ? `${text.slice(0, begin)}${block}${text.slice(end + "<!-- cluster:end -->".length)}`
      : `${text.trimEnd()}\n\n${block}\n`
  )
})

Effect.runPromise(program).then(
  () => process.exit(0),
  (error) => {
    log(`bench:cluster failed: ${String(error)}`)
    process.exit(1)
  }
)
