/**
 * The agent-step benchmark: one whole step of an agent turn as `toolgate run` runs it
 * (`packages/cli/src/Run.ts`), in ms, with its parts, on the embedded store (PGlite through
 * `EmbeddedPostgres`, on a data directory) and on the PostgreSQL server.
 *
 * One step: the agent loop (`Agent.runTurn` with `maxSteps: 1`) claims step 1 in the
 * `StepJournal`, sends the request over real HTTP (Undici, `HttpTransport.layerNode`'s client)
 * to a `FakeProvider` on 127.0.0.1, which streams an OpenAI Chat response (a short text, then one
 * `create_task` call whose arguments come in 3–12-character deltas, one write per SSE event);
 * `HttpModelStream` decodes it, the assembler releases the call at the finish, the call is
 * validated against the tools file's JSON Schema (`ToolValidator.toToolkit`, as `run` does), the
 * step is recorded in the journal, and the call is executed exactly once by the `ToolExecutor`
 * (claim, a `WebhookHandler` that POSTs it to a `FakeCrm` on 127.0.0.1 with its
 * `Idempotency-Key`, complete). Every step is a new turn and a new lead, so every step asks the
 * model and executes. After each step, outside its timed span, the bench checks the turn's
 * result (one call, executed), the CRM's books (that lead's mutation applied exactly once) and the
 * journal (the step recorded with its call); a wrong result aborts the run.
 *
 * The parts are timed in the bench, not in the library: the bench wraps the services the loop
 * gets from its context (every method of the `StepJournal` and the `IdempotencyStore`, the
 * handler, the model's `HttpClient`, the `ModelStream`), and stamps `performance.now()` around each
 * call. Validation runs inside the loop between two of those stamps, so it is timed apart, on the
 * same assembled turn. The stores take turns step by step (interleaved), after warm-up steps.
 * Round trips are counted on the wire for the server, in a separate pass through the
 * `roundTripRelay` of `bench/execution.ts` (a `Sync` or simple `Query` message is one).
 *
 * Run: `npx tsc -b bench && npx node bench/dist/agentStep.js [--quick]` (or through
 * `bench/main.ts`, which imports {@link runAgentStepBenchmark}). The server is `TOOLGATE_PG_URL`
 * (default `postgres://postgres@127.0.0.1:5432/test`); the bench works in its own schema and
 * drops it, and in its own temporary data directory for PGlite, removed at the end. About 20 s
 * (`--quick`: about 12 s), of which opening the stores (PGlite's initdb) takes 5–10 s. Progress
 * goes to stderr.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { PgClient } from "@effect/sql-pg"
import { HttpModelStream, HttpTransport, ToolsFile, ToolValidator } from "@toolgate/adapters"
import { Run } from "@toolgate/cli"
import { Assembler, ModelStream, ToolCall } from "@toolgate/core"
import { Agent, EmbeddedPostgres, IdempotencyStore, StepJournal, ToolExecutor, WebhookHandler } from "@toolgate/runtime"
import { FakeCrm, FakeProvider } from "@toolgate/testing"
import { Effect, Layer, Metric, Option, Redacted, Schema, Stream } from "effect"
import { Prompt, type Tool } from "effect/ai"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { roundTripRelay } from "./execution.js"
import { fmt, fmtMs, markdownTable, textTable } from "./report.js"
import { partsOf, percentile, Probe, type StepParts, timed } from "./stepProbe.js"

const title = "Call back about pricing"
const log = (began: number, message: string) =>
  process.stderr.write(`  agent step: ${message} (${((performance.now() - began) / 1000).toFixed(1)} s)\n`)
const leadPattern = /lead-[a-z]+-\d+/

/** The tools file of the run: one CRM tool with its webhook (`FakeCrm.toolDefinition`). */
const toolsFileText = (crmUrl: string) =>
  JSON.stringify([FakeCrm.toolDefinition(crmUrl, "create_task", { lead_id: "string", title: "string" })])

/** The servers and the tools the stores share. */
interface Common {
  readonly providerUrl: string
  readonly crm: FakeCrm.Server
  readonly tools: ToolsFile.ToolsFile
  readonly toolkit: ReturnType<typeof ToolValidator.toToolkit>
}

/** A store's layers (as `Run.run` composes them), with the probe around the services the agent loop uses. */
const stack = (
  common: Common,
  sql: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, unknown>,
  schema: string | undefined,
  probe: Probe
) => {
  const options = schema === undefined ? {} : { schema }
  const stores = Layer.mergeAll(IdempotencyStore.layerSql(options), StepJournal.layerSql(options)).pipe(
    Layer.provideMerge(sql)
  )
  const timedStores = Layer.mergeAll(
    Layer.effect(
      IdempotencyStore.IdempotencyStore,
      Effect.map(IdempotencyStore.IdempotencyStore, (s) => timed("store", s, probe))
    ),
    Layer.effect(StepJournal.StepJournal, Effect.map(StepJournal.StepJournal, (s) => timed("journal", s, probe)))
  ).pipe(Layer.provide(stores))
  const handlers: Record<string, ToolExecutor.Handler<Tool.Any, HttpClient.HttpClient>> = {}
  for (const tool of common.tools.tools) {
    const webhook = WebhookHandler.handler({ url: tool.webhook!, parse: (json) => json })
    handlers[tool.name] = { ...webhook, run: (params, context) => probe.time("handler", webhook.run(params, context)) }
  }
  // The model's client: Undici, as `HttpTransport.layerNode` has it, timed from sending the
  // request to its response head.
  const modelClient = Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, HttpClient.transform((response) => probe.time("http", response)))
  ).pipe(Layer.provide(NodeHttpClient.layerUndici))
  const model = Layer.effect(
    ModelStream.ModelStream,
    Effect.map(ModelStream.ModelStream, (m) =>
      ModelStream.ModelStream.of({
        ...m,
        stream: (request, attempt) =>
          Stream.mapArray(m.stream(request, attempt), (batch) => {
            for (const event of batch) if (event.end === true) probe.released = performance.now()
            return batch
          })
      }))
  ).pipe(
    Layer.provide(
      HttpModelStream.layer(
        Run.modelStream({
          provider: "openai-chat",
          baseUrl: `${common.providerUrl}/v1`,
          apiKey: Redacted.make("sk-bench"),
          model: "gpt-bench",
          finishProfile: undefined,
          budgets: undefined
        })
      )
    ),
    Layer.provide(HttpTransport.layer),
    Layer.provide(modelClient)
  )
  return Agent.layer.pipe(
    Layer.provide(ToolExecutor.layer(common.toolkit, handlers).pipe(Layer.provide(FetchHttpClient.layer))),
    Layer.provide(model),
    Layer.provideMerge(timedStores),
    Layer.provideMerge(stores)
  )
}

/** One step of a new turn for a new lead, timed; its result checked after the timed span. */
const step = (common: Common, probe: Probe, lead: string) =>
  Effect.gen(function*() {
    // the request `Run.modelRequest` makes: the prompt as one user message, the tools file's tools
    const request: ModelStream.ModelRequest = {
      prompt: Prompt.make(`New inbound lead ${lead} asked for pricing. Create a follow-up task.`),
      tools: common.tools.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
      maxOutputTokens: 1024
    }
    const scope = { tenant: "bench", turn: lead }
    probe.reset()
    const trips = probe.trips()
    const cpu = process.cpuUsage()
    const start = performance.now()
    const turn = yield* Agent.runTurn(request, { toolkit: common.toolkit, scope, maxSteps: 1 })
    const total = performance.now() - start
    const used = process.cpuUsage(cpu)
    const parts = partsOf(probe, total, (used.user + used.system) / 1000, probe.trips() - trips)

    const fail = (why: string) => Effect.die(new Error(`agent step ${lead}: ${why}`))
    const calls = turn.steps[0]?.calls ?? []
    if (turn.steps.length !== 1 || turn.steps[0]!.replayed || calls.length !== 1) {
      return yield* fail(`expected one step asked of the model with one call, got ${JSON.stringify(turn.steps)}`)
    }
    const call = calls[0]!
    if (call.outcome._tag !== "Executed" || call.name !== "create_task") {
      return yield* fail(`the call was not executed: ${JSON.stringify(call)}`)
    }
    if (JSON.stringify(call.arguments) !== JSON.stringify({ lead_id: lead, title })) {
      return yield* fail(`unexpected arguments ${JSON.stringify(call.arguments)}`)
    }
    const books = yield* common.crm.stats
    if (books.byKey[`${lead}/create_task`] !== 1) {
      return yield* fail(`the CRM applied ${books.byKey[`${lead}/create_task`] ?? 0} mutations, not 1`)
    }
    const journal = yield* StepJournal.StepJournal
    const recorded = yield* journal.read({ ...scope, step: 1 })
    const output = Option.getOrUndefined(recorded)?.output
    if (Option.getOrUndefined(recorded)?.status !== "recorded" || output?.calls.length !== 1) {
      return yield* fail("the journal does not hold the step with its call")
    }
    return { parts, output }
  })

/** µs per `ToolCall.validate` of the step's assembled turn (the loop's validation), median of 15 batches of 200. */
const validationMicros = (toolkit: Common["toolkit"], output: StepJournal.StepOutput): number => {
  const turn = new Assembler.AssembledTurn({
    text: output.text,
    toolCalls: output.calls.map((c) =>
      new Assembler.AssembledToolCall({ ...c, arguments: JSON.parse(c.argumentsText) as Record<string, unknown> })
    ),
    finishReason: output.finishReason
  }, { disableChecks: true })
  const validate = ToolCall.validate(toolkit)
  const batches: Array<number> = []
  for (let b = 0; b < 15; b++) {
    const start = performance.now()
    for (let i = 0; i < 200; i++) Effect.runSync(validate(turn))
    batches.push(((performance.now() - start) * 1000) / 200)
  }
  return percentile(batches, 0.5)
}

/** One row of the table: a part, its median and p90 per store, and its round trips on the server. */
export interface Row {
  readonly part: string
  readonly "PGlite median ms": string
  readonly "PGlite p90 ms": string
  readonly "PGlite mean ms": string
  readonly "PostgreSQL median ms": string
  readonly "PostgreSQL p90 ms": string
  readonly "PostgreSQL mean ms": string
  readonly "PostgreSQL round trips": string
}

/** The benchmark's result: the table's rows, the samples per store, and how it was measured (Markdown). */
export interface Result {
  readonly rows: ReadonlyArray<Row>
  readonly steps: number
  readonly seconds: number
  readonly note: string
}

const plan = (quick: boolean) => ({ warmup: quick ? 10 : 30, timed: quick ? 30 : 150, counted: quick ? 10 : 30 })

/**
 * Runs the benchmark (`quick`: fewer steps) and returns its table. Fails when the server is
 * unreachable, PGlite cannot open its directory, or a step's result is wrong.
 */
export const runAgentStepBenchmark = (options: { readonly quick?: boolean } = {}): Promise<Result> => {
  const url = process.env.TOOLGATE_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test"
  const schema = `tg_agentstep_${process.pid}`
  const counts = plan(options.quick === true)
  const began = performance.now()

  const program = Effect.gen(function*() {
    const provider = yield* FakeProvider.make({
      seed: 15,
      plan: (request) => ({
        source: FakeProvider.openAiChat({
          text: "Creating the follow-up task for this lead now.",
          toolCalls: [{ name: "create_task", arguments: { lead_id: leadPattern.exec(request.rawBody)![0], title } }]
        })
      })
    })
    const crm = yield* FakeCrm.make()
    const tools = yield* ToolsFile.parse(toolsFileText(crm.url))
    const toolkit = ToolValidator.toToolkit(tools.validator, {
      success: Schema.Json,
      failure: WebhookHandler.WebhookFailure
    })
    const common: Common = { providerUrl: provider.url, crm, tools, toolkit }

    const dataDir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "toolgate-agentstep-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    const stores = [
      {
        name: "PGlite",
        probe: new Probe(),
        sql: EmbeddedPostgres.layer({ dataDir }) as Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, unknown>,
        schema: undefined,
        samples: [] as Array<StepParts>
      },
      {
        name: "PostgreSQL",
        probe: new Probe(),
        sql: PgClient.layer({ url: Redacted.make(url), maxConnections: 4 }),
        schema,
        samples: [] as Array<StepParts>
      }
    ]
    const built = yield* Effect.forEach(
      stores,
      (store) =>
        Effect.map(Layer.build(stack(common, store.sql, store.schema, store.probe)), (context) => ({
          ...store,
          context
        }))
    )
    yield* Effect.addFinalizer(() =>
      Effect.ignore(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)).pipe(
          Effect.provideContext(built[1]!.context)
        )
      )
    )

    log(began, "stores open")
    let n = 0
    let output: StepJournal.StepOutput | undefined
    const once = (store: Pick<typeof built[number], "name" | "probe" | "context" | "samples">, keep: boolean) =>
      step(common, store.probe, `lead-${store.name.toLowerCase()}-${n++}`).pipe(
        Effect.provideContext(store.context),
        Effect.map((done) => {
          if (keep) store.samples.push(done.parts)
          output = done.output
        })
      )
    for (let i = 0; i < counts.warmup; i++) for (const store of built) yield* once(store, false)
    // interleaved, the order alternating, so the machine's load falls on both stores alike
    for (let i = 0; i < counts.timed; i++) {
      for (let k = 0; k < built.length; k++) yield* once(built[(i + k) % built.length]!, true)
    }

    log(began, `${counts.timed} timed steps per store done`)
    // Round trips on the wire: the server through the relay, one step at a time, apart from the timed steps.
    const counted = yield* Effect.scoped(Effect.gen(function*() {
      const relay = yield* roundTripRelay(url)
      const relayed = new URL(url)
      relayed.hostname = "127.0.0.1"
      relayed.port = String(relay.port)
      const probe = new Probe()
      probe.trips = relay.count
      const store = {
        name: "relay",
        probe,
        context: yield* Layer.build(
          stack(common, PgClient.layer({ url: Redacted.make(relayed.href), maxConnections: 4 }), schema, probe)
        ),
        samples: [] as Array<StepParts>
      }
      for (let i = 0; i < 3; i++) yield* once(store, false)
      for (let i = 0; i < counts.counted; i++) yield* once(store, true)
      return store.samples
    }))

    log(began, "round trips counted")
    const validation = validationMicros(toolkit, output!)
    return { samples: built.map((s) => s.samples), counted, validation }
  }).pipe(Effect.scoped, Effect.provideService(Metric.MetricRegistry, new Map()))

  return Effect.runPromise(program).then(({ counted, samples, validation }) => {
    const [pglite, server] = samples as [Array<StepParts>, Array<StepParts>]
    const stat = (xs: ReadonlyArray<StepParts>, f: (p: StepParts) => number) => {
      const values = xs.map(f)
      const mean = values.reduce((n, x) => n + x, 0) / values.length
      return [fmtMs(percentile(values, 0.5)), fmtMs(percentile(values, 0.9)), fmtMs(mean)] as const
    }
    const trips = (f: (p: StepParts["trips"]) => number) => fmt(percentile(counted.map((p) => f(p.trips)), 0.5), 0)
    const line = (part: string, f: (p: StepParts) => number, roundTrips: string): Row => {
      const [pm, pp, pa] = stat(pglite, f)
      const [sm, sp, sa] = stat(server, f)
      return {
        part,
        "PGlite median ms": pm,
        "PGlite p90 ms": pp,
        "PGlite mean ms": pa,
        "PostgreSQL median ms": sm,
        "PostgreSQL p90 ms": sp,
        "PostgreSQL mean ms": sa,
        "PostgreSQL round trips": roundTrips
      }
    }
    const validationMs = fmtMs(validation / 1000)
    const rows: Array<Row> = [
      line("journal claim (step)", (p) => p.journalClaim, trips((t) => t.journalClaim)),
      line("HTTP request → first byte", (p) => p.firstByte, ""),
      line("stream read + assembly → release", (p) => p.stream, ""),
      {
        part: "validation (timed apart; inside rest)",
        "PGlite median ms": validationMs,
        "PGlite p90 ms": "",
        "PGlite mean ms": "",
        "PostgreSQL median ms": validationMs,
        "PostgreSQL p90 ms": "",
        "PostgreSQL mean ms": "",
        "PostgreSQL round trips": ""
      },
      line("journal record (step)", (p) => p.journalRecord, trips((t) => t.journalRecord)),
      line("claim (call)", (p) => p.claim, trips((t) => t.claim)),
      line("handler (webhook POST)", (p) => p.handler, ""),
      line("complete (call)", (p) => p.complete, trips((t) => t.complete)),
      line("rest (loop, executor, validation)", (p) => p.rest, ""),
      line("total per step", (p) => p.total, trips((t) => t.total)),
      line("CPU ms per step (this process)", (p) => p.cpu, "")
    ]
    const note = agentStepNote(pglite.length, counted.length, plan(options.quick === true).warmup)
    return { rows, steps: pglite.length, seconds: (performance.now() - began) / 1000, note }
  })
}

/** How the table is measured, as Markdown (for `bench/RESULTS.md`). */
const agentStepNote = (steps: number, counted: number, warmup: number): string =>
  `One agent step as \`toolgate run\` runs it: \`Agent.runTurn\` (\`maxSteps: 1\`) streams an OpenAI Chat response ` +
  `(text, then one \`create_task\` call) over HTTP from a \`FakeProvider\` on 127.0.0.1 through \`HttpTransport\` ` +
  `(Undici) and \`HttpModelStream\`, assembles and validates it (the tools file's JSON Schema), journals the step ` +
  `(\`StepJournal\`), and executes the call once through the \`ToolExecutor\`, whose \`WebhookHandler\` POSTs it to a ` +
  `\`FakeCrm\` on 127.0.0.1. Every step is a new turn and a new lead; after each one, outside its timed span, the ` +
  `result (one call, executed), the CRM's books (that mutation applied once) and the journal (the step recorded with ` +
  `its call) are checked. ${steps} steps per store, the stores taking turns step by step, after ${warmup} warm-up ` +
  `steps each; PGlite on a data directory in the OS's temporary directory, the server over TCP (4 pooled ` +
  `connections, as \`run\` opens them).\n\n` +
  `- **journal claim / journal record**: the \`StepJournal\`'s \`claim\` and \`record\`, timed around the service ` +
  `calls. **claim / complete**: the \`IdempotencyStore\`'s claim and complete (every store method whose name ` +
  `contains them). **handler**: the webhook handler's run (its HTTP POST to the CRM, answer read).\n` +
  `- **HTTP request → first byte**: the model's \`HttpClient\` call, from sending the request to the response head ` +
  `(the fake provider flushes the head and writes the first event at once). **stream read + assembly → release**: ` +
  `from the response head to the model stream handing on the event that ends the body (the finish, at which the ` +
  `assembler releases the call).\n` +
  `- **validation**: \`ToolCall.validate\` of the step's assembled turn, timed apart (median of 15 batches of 200); ` +
  `in the step it runs between release and journal record, so it is part of **rest**.\n` +
  `- **rest**: the step's total minus the parts timed in it: the loop's streams and fibers, the assembler's end, ` +
  `validation, the executor's key derivation, result encoding and bookkeeping.\n` +
  `- **total**: from \`Agent.runTurn\` to its result. **CPU ms**: \`process.cpuUsage\` over the step, of this ` +
  `process, which runs the fake provider and the fake CRM too, and PGlite's database (the server's runs apart).\n` +
  `- **PostgreSQL round trips**: counted on the wire in a separate pass of ${counted} steps through a TCP relay ` +
  `(\`roundTripRelay\` of \`bench/execution.ts\`: each \`Sync\` or simple \`Query\` the client sends), median per ` +
  `step; the parts' counts are the relay's count across each timed call. No heartbeat falls in a step (the step ` +
  `lease's heartbeat beats every 10 s). PGlite's session is not relayed; it is sent the same statements.\n` +
  `- **median**, **p90** and **mean** of each part over the steps, each part on its own: the parts' medians do not ` +
  `add up to the total's (the slow steps are not slow in the same part), their means do (rest included).`

/** The table as plain text for the terminal, and as Markdown with its note. */
export const render = (result: Result): { readonly text: string; readonly markdown: string } => {
  const keys = Object.keys(result.rows[0]!) as Array<keyof Row>
  const body = result.rows.map((row) => keys.map((key) => row[key]))
  return {
    text: textTable(keys, body),
    markdown: `${markdownTable(keys, body)}\n\n${result.note}\n\nThe benchmark took ${fmt(result.seconds, 1)} s.`
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runAgentStepBenchmark({ quick: process.argv.includes("--quick") })
  process.stdout.write(`${render(result).text}\n\n${result.steps} steps per store in ${fmt(result.seconds, 1)} s\n`)
}
