/**
 * `toolgate demo` (what `npm start` runs): a batch of inbound leads, each answered by a model
 * that calls `create_task` and `assign_owner`, runs concurrently through the toolgate pipeline
 * against a fake provider that injects a seeded mix of faults, with tool handlers that call a
 * fake CRM, over the embedded PGlite store persisted in `.toolgate/` (or a PostgreSQL server).
 * Then the same leads and faults go through a naive pipeline, and a report puts both side by
 * side: stream attempts, retries, calls assembled, executed, replayed, rejected by error tag,
 * outcomes unknown, and the CRM's own count of mutations and duplicates.
 *
 * Running it again replays every call from the durable store: no new CRM mutation.
 *
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import { HttpModelStream, HttpTransport } from "@toolgate/adapters"
import { ModelStream } from "@toolgate/core"
import { EmbeddedPostgres, IdempotencyStore, ToolCallPipeline, ToolExecutor, WebhookHandler } from "@toolgate/runtime"
import { FakeCrm, FakeProvider } from "@toolgate/testing"
import { Clock, Console, Effect, Layer, Redacted, Result, Stream } from "effect"
import { Prompt } from "effect/ai"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as DemoScenario from "./DemoScenario.js"
import * as NaivePipeline from "./NaivePipeline.js"

/**
 * Demo options.
 *
 * - `leads`: how many leads (default 200).
 * - `seed`: the seed of the faults (default 42): the same seed gives the same faults.
 * - `dataDir`: where the embedded store lives (default `.toolgate/`).
 * - `store`: a `postgres://` URL to use a PostgreSQL server instead.
 * - `progress`: draw a progress bar on stderr.
 * - `preview`: stream the first lead's text to stdout as it arrives.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly leads: number
  readonly seed: number
  readonly dataDir: string
  readonly store: string | undefined
  readonly progress: boolean
  readonly preview: boolean
}

/**
 * One pipeline's row of the report.
 *
 * @since 0.1.0
 * @category models
 */
export interface Row {
  readonly attempts: number
  readonly retries: number
  readonly assembled: number
  readonly executed: number
  readonly replayed: number
  /** Turns rejected by the pipeline, and calls whose execution failed, by error tag. */
  readonly rejected: Readonly<Record<string, number>>
  readonly unknown: number
  readonly crmMutations: number
  readonly crmDuplicates: number
  /** Executions a correct pipeline would never have made (naive only; 0 for toolgate by construction). */
  readonly corrupted: number
}

/**
 * The report `--json` prints.
 *
 * @since 0.1.0
 * @category models
 */
export interface Report {
  readonly leads: number
  readonly seed: number
  readonly store: string
  readonly faults: Readonly<Record<string, number>>
  readonly elapsedMs: number
  readonly toolgate: Row
  readonly naive: Row
}

const crmAction = (crmUrl: string, action: "create_task" | "assign_owner") =>
  WebhookHandler.handler({
    url: `${crmUrl}/tools/${action}`,
    body: (params: { readonly lead_id: string }) => ({ lead: params.lead_id, action, ...params }),
    parse: (json) => ({ id: String((json as { readonly id?: unknown }).id) }),
    timeoutMs: 1_500
  })

/**
 * The model stream of a fake provider at `url`: OpenAI Chat, a model and a key it checks neither
 * of, 2 s to the response head and 750 ms between reads.
 */
const modelOf = (url: string): HttpModelStream.Options => ({
  provider: "openai-chat",
  baseUrl: `${url}/v1`,
  model: "gpt-demo",
  apiKey: Redacted.make("sk-demo-not-a-real-key"),
  budgets: { firstByteMs: 2_000, idleMs: 750 }
})

/** One lead's model request; `user` names the lead, so the fake provider knows which it answers. */
const requestOf = (lead: DemoScenario.Lead): ModelStream.ModelRequest => ({
  prompt: Prompt.make(`New inbound lead ${lead.id} from ${lead.company}.`),
  tools: ModelStream.toolsOf(DemoScenario.toolkit),
  toolChoice: "auto",
  providerOptions: { user: lead.id }
})

const providerPlan =
  (byId: ReadonlyMap<string, DemoScenario.Lead>, paceMs: number) => (request: FakeProvider.Request) => {
    const lead = byId.get(String((request.body as { user?: unknown }).user))
    const scenario: FakeProvider.Scenario = lead === undefined
      ? { text: "Unknown lead." }
      : { text: lead.text, toolCalls: lead.streamed, finishReason: lead.finishReason }
    const answer: FakeProvider.Answer = { source: FakeProvider.openAiChat(scenario), chunkBytes: [48, 400], paceMs }
    if (lead === undefined || request.attempt > 1) return answer
    switch (lead.fault) {
      case "rate_limited":
        return { ...answer, fault: { _tag: "Status", status: 429, retryAfter: 1 } } satisfies FakeProvider.Answer
      case "server_error":
        return { ...answer, fault: { _tag: "Status", status: 500 } } satisfies FakeProvider.Answer
      case "dropped":
        return {
          ...answer,
          fault: { _tag: "Drop", afterBytes: 2_500 + (lead.id.charCodeAt(8) % 7) * 500 }
        } satisfies FakeProvider.Answer
      case "stalled":
        return { ...answer, fault: { _tag: "Stall", afterBytes: 2_000 } } satisfies FakeProvider.Answer
      case "truncated":
        return { ...answer, fault: { _tag: "Truncate", afterBytes: 3_000 } } satisfies FakeProvider.Answer
      default:
        return answer
    }
  }

const crmPlan =
  (byId: ReadonlyMap<string, DemoScenario.Lead>) => (request: FakeCrm.Request): FakeCrm.Fault | undefined =>
    byId.get(request.lead)?.fault === "crm_ambiguous" && request.action === "assign_owner" && request.attempt === 1
      ? { _tag: "ApplyThenDrop" }
      : undefined

const count = (record: Record<string, number>, key: string) => {
  record[key] = (record[key] ?? 0) + 1
}

const bar = (done: number, total: number) => {
  const width = 30
  const filled = Math.round((done / total) * width)
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total} runs (leads and redeliveries)`
}

/**
 * Runs the demo and returns its report. Needs nothing but the machine: the servers listen on
 * 127.0.0.1, the store is embedded unless `store` names a server.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (options: Options) =>
  Effect.gen(function*() {
    const leads = DemoScenario.leads(options.leads, options.seed)
    const byId = new Map(leads.map((l) => [l.id, l]))
    const started = yield* Clock.currentTimeMillis

    const provider = yield* FakeProvider.make({
      plan: providerPlan(byId, 1),
      seed: options.seed,
      requestKey: (r) => String((r.body as { user?: unknown }).user)
    })
    const crm = yield* FakeCrm.make({ plan: crmPlan(byId) })

    const handlers = {
      create_task: crmAction(crm.url, "create_task"),
      assign_owner: crmAction(crm.url, "assign_owner")
    }
    const sql = options.store === undefined
      ? EmbeddedPostgres.layer({ dataDir: options.dataDir })
      : PgClient.layer({ url: Redacted.make(options.store), maxConnections: 8 })
    const store = IdempotencyStore.layerSql().pipe(Layer.provide(sql))
    const modelOptions = modelOf(provider.url)
    const pipelineLayer = ToolCallPipeline.layer.pipe(
      Layer.provide(
        ToolExecutor.layer(DemoScenario.toolkit, handlers, { timeoutMs: 1_500, waitMs: 5_000 }).pipe(
          Layer.provide(FetchHttpClient.layer)
        )
      ),
      Layer.provide(HttpModelStream.layer(modelOptions).pipe(Layer.provide(HttpTransport.layerNode))),
      Layer.provide(store)
    )

    const row = {
      attempts: 0,
      retries: 0,
      assembled: 0,
      executed: 0,
      replayed: 0,
      rejected: {} as Record<string, number>,
      unknown: 0
    }
    let done = 0
    const total = leads.length + leads.filter((l) => l.fault === "redelivered").length
    const draw = options.progress ? () => process.stderr.write(`\r${bar(done, total)}`) : () => undefined

    const runOnce = (pipeline: ToolCallPipeline.Service, lead: DemoScenario.Lead, preview: boolean) =>
      pipeline.run(
        requestOf(lead),
        {
          toolkit: DemoScenario.toolkit,
          scope: { tenant: "demo", turn: lead.id },
          deadlineMs: 30_000,
          retry: { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 1_000 }
        }
      ).pipe(
        Stream.runForEach((output) =>
          Effect.sync(() => {
            if (output._tag === "TextDelta") {
              if (preview) process.stdout.write(output.text)
            } else if (output._tag === "AttemptFailed") {
              row.attempts++
              row.retries++
            } else {
              row.attempts++
              row.assembled += output.result.calls.length
              for (const call of output.result.calls) {
                if (call.outcome._tag === "Executed") row.executed++
                else if (call.outcome._tag === "Replayed") row.replayed++
                else if (
                  call.outcome.error._tag === "OutcomeUnknown" || call.outcome.error._tag === "ExecutionTimeout"
                ) {
                  row.unknown++
                } else count(row.rejected, call.outcome.error._tag)
                if (preview) {
                  const o = call.outcome
                  process.stdout.write(
                    `\n  → ${call.name}(${JSON.stringify(call.arguments)}): ${
                      o._tag === "Failed" ? o.error._tag : o._tag.toLowerCase()
                    }`
                  )
                }
              }
            }
          })
        ),
        Effect.catch((error) =>
          Effect.sync(() => {
            row.attempts++
            count(row.rejected, error._tag)
          })
        ),
        Effect.ensuring(Effect.sync(() => {
          done++
          if (!preview) draw()
        }))
      )

    yield* Effect.gen(function*() {
      const pipeline = yield* ToolCallPipeline.ToolCallPipeline
      const [first, ...rest] = leads
      if (options.preview && first !== undefined) {
        yield* Console.log(`▸ ${first.id} (${first.company}), streamed as it arrives:\n`)
        process.stdout.write("  ")
        yield* runOnce(pipeline, first, true)
        process.stdout.write("\n\n")
      }
      const batch = options.preview ? rest : leads
      draw()
      yield* Effect.forEach(
        batch.flatMap((lead) => lead.fault === "redelivered" ? [lead, lead] : [lead]),
        (lead) => runOnce(pipeline, lead, false),
        { concurrency: 64, discard: true }
      )
    }).pipe(Effect.provide(pipelineLayer))
    if (options.progress) process.stderr.write("\n")
    const crmStats = yield* crm.stats

    // The naive pipeline: same leads, same faults, its own fake provider and CRM.
    const naiveProvider = yield* FakeProvider.make({
      plan: providerPlan(byId, 1),
      seed: options.seed,
      requestKey: (r) => String((r.body as { user?: unknown }).user)
    })
    const naiveCrm = yield* FakeCrm.make({ plan: crmPlan(byId) })
    const naive = NaivePipeline.emptyStats()
    const naiveModel = modelOf(naiveProvider.url)
    yield* Effect.promise(async () => {
      const queue = leads.flatMap((lead) => lead.fault === "redelivered" ? [lead, lead] : [lead])
      const worker = async () => {
        for (let lead = queue.shift(); lead !== undefined; lead = queue.shift()) {
          await NaivePipeline.runLead(lead, {
            providerUrl: `${naiveProvider.url}/v1/chat/completions`,
            crmUrl: naiveCrm.url,
            // The body toolgate sends for the lead (a text prompt always encodes).
            body: Result.getOrThrow(HttpModelStream.providerRequest(naiveModel, requestOf(lead))).body,
            stats: naive
          })
        }
      }
      await Promise.all(Array.from({ length: 64 }, worker))
    })
    const naiveCrmStats = yield* naiveCrm.stats

    const faults: Record<string, number> = {}
    for (const lead of leads) count(faults, lead.fault)
    const report: Report = {
      leads: leads.length,
      seed: options.seed,
      store: options.store === undefined ? `embedded PGlite (${options.dataDir})` : "PostgreSQL server",
      faults,
      elapsedMs: (yield* Clock.currentTimeMillis) - started,
      toolgate: { ...row, crmMutations: crmStats.mutations, crmDuplicates: crmStats.duplicates, corrupted: 0 },
      naive: {
        attempts: naive.attempts,
        retries: naive.retries,
        assembled: naive.assembled,
        executed: naive.executed,
        replayed: 0,
        rejected: naive.rejected,
        unknown: 0,
        crmMutations: naiveCrmStats.mutations,
        crmDuplicates: naiveCrmStats.duplicates,
        corrupted: naive.corrupted
      }
    }
    return report
  }).pipe(Effect.scoped)

/**
 * The report as the side-by-side table the demo prints.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (report: Report): string => {
  const rows: Array<[string, (r: Row) => string]> = [
    ["stream attempts", (r) => String(r.attempts)],
    ["retries", (r) => String(r.retries)],
    ["tool calls assembled", (r) => String(r.assembled)],
    ["executed", (r) => String(r.executed)],
    ["replayed (from the store)", (r) => String(r.replayed)],
    ["rejected, by error tag", (r) => tally(r.rejected) || "-"],
    ["outcome unknown", (r) => String(r.unknown)],
    ["corrupted calls acted on", (r) => String(r.corrupted)],
    ["CRM mutations", (r) => String(r.crmMutations)],
    ["CRM duplicate mutations", (r) => String(r.crmDuplicates)]
  ]
  const left = Math.max(...rows.map(([label]) => label.length))
  const mid = Math.max(8, ...rows.map(([, f]) => f(report.toolgate).length))
  const lines = [
    `${"".padEnd(left)}  ${"toolgate".padEnd(mid)}  naive`,
    `${"-".repeat(left)}  ${"-".repeat(mid)}  ${"-".repeat(20)}`,
    ...rows.map(([label, f]) => `${label.padEnd(left)}  ${f(report.toolgate).padEnd(mid)}  ${f(report.naive)}`)
  ]
  const faults = tally(report.faults)
  return [
    `${report.leads} leads, seed ${report.seed}, store: ${report.store}, ${(report.elapsedMs / 1000).toFixed(1)} s`,
    `faults: ${faults}`,
    "",
    ...lines,
    "",
    report.toolgate.crmDuplicates === 0
      ? `toolgate: 0 duplicate CRM mutations; the naive pipeline made ${report.naive.crmDuplicates} and acted on ${report.naive.corrupted} corrupted calls.`
      : `toolgate made ${report.toolgate.crmDuplicates} duplicate CRM mutations: this is a bug, please report it.`,
    report.toolgate.executed === 0 && report.toolgate.replayed > 0
      ? `Nothing was executed again: every completed call was replayed from the store${
        report.toolgate.unknown > 0
          ? ` (the ${report.toolgate.unknown} of unknown outcome stay parked until resolved)`
          : ""
      }. To start afresh, ${
        report.store.startsWith("embedded")
          ? "use another --data-dir or delete that directory"
          : "drop the toolgate schema"
      }.`
      : "Run it again: every call is replayed from the durable store and the CRM sees no new mutation.",
    "(The naive column varies a little from run to run: its faults race real timeouts.)"
  ].join("\n")
}

/** `tag count` pairs, largest count first, then by name, so a report reads the same every run. */
const tally = (record: Readonly<Record<string, number>>) =>
  Object.entries(record)
    .toSorted(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([k, v]) => `${k} ${v}`)
    .join(", ")
