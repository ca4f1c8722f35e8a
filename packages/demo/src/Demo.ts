/**
 * `toolgate demo` (what `npm start` runs): a batch of inbound leads, each answered by an SDR agent
 * in a multi-step turn (look up the contact, create the follow-up task, assign the owner, answer),
 * run concurrently through toolgate's agent loop against a fake provider that injects a seeded mix
 * of faults inside the steps' streams and between steps (a worker crash after step 1, a second
 * delivery of the lead after step 2, two deliveries at once), with tool handlers that call a fake
 * CRM, over the embedded PGlite store persisted in `.toolgate/` (or a PostgreSQL server). Then the
 * same leads and faults go through a naive agent loop that asks the model again on every delivery,
 * and a report puts both side by side: model requests made and saved (steps replayed from the
 * journal), retries, calls, executed, replayed, rejected by error tag, outcomes unknown, and the
 * CRM's own count of mutations and duplicates. Each owner assignment is followed by two messages,
 * the rep notification (a Slack-like receiver) and the offline-conversion import (an ads-like
 * receiver), both counting duplicates by (lead, event): toolgate declares them as follow-ups,
 * written with the call's completion and delivered by the outbox's dispatcher (a fiber of the
 * worker); the naive loop fires them on every `assign_owner` it sends.
 *
 * Running it again replays every step from the journal and every call from the store: no model
 * request for a completed turn, no new CRM mutation.
 *
 * (Why one long module: the demo is one program whose run, naive comparison and report read top to
 * bottom; its scenario is `DemoScenario`, the naive loop `NaivePipeline`.)
 *
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import { HttpModelStream, HttpTransport } from "@toolgate/adapters"
import { ModelStream } from "@toolgate/core"
import {
  Agent,
  EmbeddedPostgres,
  FollowUp,
  IdempotencyStore,
  Outbox,
  OutboxDispatcher,
  StepJournal,
  type ToolCallPipeline,
  ToolExecutor,
  WebhookHandler
} from "@toolgate/runtime"
import { FakeCrm, FakeProvider, FakeReceiver } from "@toolgate/testing"
import { Prompt } from "effect/ai"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
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
 * - `preview`: stream the first lead's turn to stdout as it arrives.
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
 * - `attempts`: model requests made (every attempt of every step, as the fake provider counted
 *   them); `retries`: the attempts that repeated a failed one.
 * - `stepsReplayed`, `requestsSaved`: steps replayed from the journal, and the requests they took
 *   when they were asked (toolgate only; the naive loop asks again).
 * - `assembled`: tool calls of the turns (assembled now, or journaled), per delivery.
 * - `executed`, `replayed` (from the store), `unknown` (outcome unknown: parked, never re-run).
 * - `rejected`: turns rejected, by the error tag of their failed step, and calls whose execution
 *   failed, by error tag.
 * - `crmMutations`, `crmDuplicates`: the CRM's own count.
 * - `notificationsDelivered`, `notificationDuplicates`: the receivers' count of rep notifications
 *   and conversion imports applied, and of those that repeated one already applied.
 * - `corrupted`: executions a correct pipeline would never have made (naive only; 0 for toolgate
 *   by construction).
 *
 * @since 0.1.0
 * @category models
 */
export interface Row {
  readonly attempts: number
  readonly retries: number
  readonly stepsReplayed: number
  readonly requestsSaved: number
  readonly assembled: number
  readonly executed: number
  readonly replayed: number
  readonly rejected: Readonly<Record<string, number>>
  readonly unknown: number
  readonly crmMutations: number
  readonly crmDuplicates: number
  readonly notificationsDelivered: number
  readonly notificationDuplicates: number
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

/**
 * The Slack-like and ads-like receivers of one pipeline; they apply every request they get (no
 * deduplication) and count repeats of a (lead, event).
 */
const receivers = Effect.gen(function*() {
  const identity = (request: FakeReceiver.Request) => {
    try {
      const body = JSON.parse(request.body) as { readonly lead?: unknown; readonly event?: unknown }
      return `${String(body.lead)}/${String(body.event)}`
    } catch {
      return request.key ?? "(no key)"
    }
  }
  const slack = yield* FakeReceiver.make({ dedupe: false, identity })
  const ads = yield* FakeReceiver.make({ dedupe: false, identity })
  const count = () => {
    let delivered = 0
    for (const n of [...slack.applied().values(), ...ads.applied().values()]) delivered += n
    return { delivered, duplicates: slack.duplicates() + ads.duplicates() }
  }
  return { slackUrl: `${slack.url}/hooks/rep`, adsUrl: `${ads.url}/conversions`, count }
})

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

const instructions = "You are an SDR agent. For each inbound lead: look up the contact, create a follow-up task, " +
  "assign the lead to its owner, then say what you did."

/** One lead's request; `user` names the lead, so the fake provider knows which it answers. */
const requestOf = (lead: DemoScenario.Lead): ModelStream.ModelRequest => ({
  prompt: Prompt.make([
    { role: "system", content: instructions },
    { role: "user", content: `New inbound lead ${lead.id} from ${lead.company} (${lead.email}).` }
  ]),
  tools: ModelStream.toolsOf(DemoScenario.toolkit),
  toolChoice: "auto",
  providerOptions: { user: lead.id }
})

/** The lead a request is for: its `user` (the lead id, or `tenant/leadId` as the lead cluster sends it). */
const userOf = (body: unknown) => String((body as { user?: unknown }).user).split("/").pop()!

/**
 * The fake provider's plan: each step of each lead's turn, with the lead's fault on its step's
 * first request; `paceMs` between writes.
 *
 * @since 0.1.0
 * @category fakes
 */
export const providerPlan =
  (byId: ReadonlyMap<string, DemoScenario.Lead>, paceMs: number) => (request: FakeProvider.Request) => {
    const lead = byId.get(userOf(request.body))
    const step = FakeProvider.stepOf(request.body)
    const scripted = lead?.steps[Math.min(step, lead.steps.length) - 1]
    const scenario: FakeProvider.Scenario = scripted === undefined
      ? { text: "Unknown lead." }
      : {
        text: scripted.text,
        toolCalls: scripted.calls.map((c) => ({ name: c.name, arguments: c.streamed })),
        finishReason: scripted.finishReason
      }
    const answer: FakeProvider.Answer = { source: FakeProvider.openAiChat(scenario), chunkBytes: [256, 1024], paceMs }
    if (lead === undefined || request.attempt > 1 || step !== lead.faultStep) return answer
    // a step's calls stream in the second half of its body: cut there, or just before the finish
    switch (lead.fault) {
      case "rate_limited":
        return { ...answer, fault: { _tag: "Status", status: 429, retryAfter: 1 } } satisfies FakeProvider.Answer
      case "server_error":
        return { ...answer, fault: { _tag: "Status", status: 500 } } satisfies FakeProvider.Answer
      case "dropped":
        return {
          ...answer,
          fault: { _tag: "Drop", afterBytes: { fraction: 0.6 + (lead.id.charCodeAt(8) % 7) * 0.04 } }
        } satisfies FakeProvider.Answer
      case "stalled":
        return { ...answer, fault: { _tag: "Stall", afterBytes: { fraction: 0.7 } } } satisfies FakeProvider.Answer
      case "truncated":
        return { ...answer, fault: { _tag: "Truncate", afterBytes: { fraction: 0.9 } } } satisfies FakeProvider.Answer
      default:
        return answer
    }
  }

/**
 * The fake provider's request key: attempts are counted per lead and step (a retry of a step is
 * its attempt 2).
 *
 * @since 0.1.0
 * @category fakes
 */
export const requestKey = (r: Omit<FakeProvider.Request, "key" | "attempt" | "seq">) =>
  `${userOf(r.body)}#${FakeProvider.stepOf(r.body)}`

/**
 * The fake CRM's plan: `crm_ambiguous` leads get their first `assign_owner` applied and its answer
 * dropped.
 *
 * @since 0.1.0
 * @category fakes
 */
export const crmPlan =
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
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total} deliveries`
}

/** How many times the queue delivers a lead. */
const deliveriesOf = (lead: DemoScenario.Lead) =>
  lead.fault === "redelivered" || lead.fault === "crashed_after_step_1" || lead.fault === "redelivered_after_step_2"
    ? 2
    : 1

const outcomeText = (call: ToolCallPipeline.CallResult) =>
  call.outcome._tag === "Failed" ? call.outcome.error._tag : call.outcome._tag.toLowerCase()

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

    const provider = yield* FakeProvider.make({ plan: providerPlan(byId, 1), seed: options.seed, requestKey })
    const crm = yield* FakeCrm.make({ plan: crmPlan(byId) })
    const notifications = yield* receivers

    const handlers = {
      lookup_contact: {
        run: (params: { readonly lead_id: string; readonly email: string }) =>
          Effect.succeed(DemoScenario.contactOf(params))
      },
      create_task: crmAction(crm.url, "create_task"),
      assign_owner: {
        ...crmAction(crm.url, "assign_owner"),
        // after the verified assignment only: notify the rep, import the conversion
        followUps: (params: { readonly lead_id: string; readonly owner_id: string }) => [
          FollowUp.webhook(notifications.slackUrl, {
            event: "rep_notified",
            lead: params.lead_id,
            owner: params.owner_id
          }, { orderingKey: `${params.lead_id}/rep` }),
          FollowUp.webhook(notifications.adsUrl, { event: "conversion", lead: params.lead_id })
        ]
      }
    }
    const sql = options.store === undefined
      ? EmbeddedPostgres.layer({ dataDir: options.dataDir })
      : PgClient.layer({ url: Redacted.make(options.store), maxConnections: 8 })
    const stores = Layer.mergeAll(IdempotencyStore.layerSql(), StepJournal.layerSql(), Outbox.layerSql()).pipe(
      Layer.provideMerge(sql)
    )
    const agentLayer = Agent.layer.pipe(
      Layer.provide(
        ToolExecutor.layer(DemoScenario.toolkit, handlers, { timeoutMs: 1_500, waitMs: 5_000 }).pipe(
          Layer.provide(FetchHttpClient.layer)
        )
      ),
      Layer.provide(HttpModelStream.layer(modelOf(provider.url)).pipe(Layer.provide(HttpTransport.layerNode))),
      // the stores stay in context for the worker's dispatcher (one embedded store, one build)
      Layer.provideMerge(stores)
    )

    const row = {
      retries: 0,
      stepsReplayed: 0,
      requestsSaved: 0,
      assembled: 0,
      executed: 0,
      replayed: 0,
      rejected: {} as Record<string, number>,
      unknown: 0
    }
    let done = 0
    const total = leads.reduce((n, l) => n + deliveriesOf(l), 0)
    const draw = options.progress ? () => process.stderr.write(`\r${bar(done, total)}`) : () => undefined
    const print = (preview: boolean, text: string) => {
      if (preview) process.stdout.write(text)
    }

    /**
     * One delivery of a lead: the turn, counted as it goes; `crash` ends it once step 1 has
     * executed (a worker that dies there); `onStep` hears each completed step.
     */
    const deliver = (
      agent: Agent.Service,
      lead: DemoScenario.Lead,
      how: {
        readonly preview?: boolean
        readonly crash?: boolean
        readonly onStep?: (step: number) => Effect.Effect<void>
      }
    ) => {
      const preview = how.preview === true
      const outputs = agent.run(requestOf(lead), {
        toolkit: DemoScenario.toolkit,
        scope: { tenant: "demo", turn: lead.id },
        deadlineMs: 30_000,
        retry: { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 1_000 }
      })
      return (how.crash === true
        ? outputs.pipe(Stream.takeUntil((o) => o._tag === "StepCompleted" && o.result.step === 1))
        : outputs).pipe(
          Stream.runForEach((output) =>
            Effect.gen(function*() {
              switch (output._tag) {
                case "StepStarted":
                  if (output.replayed) row.stepsReplayed++
                  print(preview, `\n  step ${output.step}${output.replayed ? " (from the journal)" : ""}: `)
                  return
                case "TextDelta":
                  return print(preview, output.text)
                case "AttemptFailed":
                  row.retries++
                  return print(preview, ` [attempt ${output.attempt} failed: ${output.error._tag}; retrying] `)
                case "CallCompleted": {
                  const { call } = output
                  row.assembled++
                  const o = call.outcome
                  if (o._tag === "Executed") row.executed++
                  else if (o._tag === "Replayed") row.replayed++
                  else if (o.error._tag === "OutcomeUnknown" || o.error._tag === "ExecutionTimeout") row.unknown++
                  else count(row.rejected, o.error._tag)
                  return print(preview, `\n    → ${call.name}(${JSON.stringify(call.arguments)}): ${outcomeText(call)}`)
                }
                case "StepCompleted":
                  if (output.result.replayed) row.requestsSaved += output.result.attempts
                  if (how.onStep !== undefined) yield* how.onStep(output.result.step)
                  return
                case "TurnCompleted":
                  return
              }
            })
          ),
          Effect.catch((error) =>
            Effect.sync(() => {
              count(row.rejected, error._tag === "StepFailed" ? error.error._tag : error._tag)
              print(preview, `\n  ${error.message}`)
            })
          ),
          Effect.ensuring(Effect.sync(() => {
            done++
            if (!preview) draw()
          }))
        )
    }

    /** A lead as the queue delivers it: once, twice at once, again after a crash, or again after step 2. */
    const handle = (agent: Agent.Service, lead: DemoScenario.Lead, preview: boolean) =>
      Effect.gen(function*() {
        switch (lead.fault) {
          case "redelivered":
            return yield* Effect.all([deliver(agent, lead, { preview }), deliver(agent, lead, {})], {
              concurrency: 2,
              discard: true
            })
          case "crashed_after_step_1":
            yield* deliver(agent, lead, { preview, crash: true })
            print(preview, "\n  ✗ the worker crashed after step 1; the queue delivers the lead again")
            return yield* deliver(agent, lead, { preview })
          case "redelivered_after_step_2": {
            const second = yield* Deferred.make<void>()
            const first = deliver(agent, lead, {
              preview,
              onStep: (step) => step === 2 ? Deferred.succeed(second, undefined) : Effect.void
            }).pipe(Effect.ensuring(Deferred.succeed(second, undefined)))
            return yield* Effect.all([first, Deferred.await(second).pipe(Effect.andThen(deliver(agent, lead, {})))], {
              concurrency: 2,
              discard: true
            })
          }
          default:
            return yield* deliver(agent, lead, { preview })
        }
      })

    yield* Effect.gen(function*() {
      const agent = yield* Agent.Agent
      const [first, ...rest] = leads
      if (options.preview && first !== undefined) {
        yield* Console.log(`▸ ${first.id} (${first.company}), streamed as it arrives:`)
        yield* handle(agent, first, true)
        process.stdout.write("\n\n")
      }
      const batch = options.preview ? rest : leads
      draw()
      // the worker's dispatcher: a fiber beside the turns, then a last drain
      const dispatcher = yield* OutboxDispatcher.make({ pollMs: 100, concurrency: 8 })
      const stop = yield* Deferred.make<void>()
      const dispatching = yield* Effect.forkChild(dispatcher.run({ stop: Deferred.await(stop) }), {
        startImmediately: true
      })
      yield* Effect.forEach(batch, (lead) => handle(agent, lead, false), { concurrency: 64, discard: true })
      yield* Deferred.succeed(stop, undefined)
      yield* Fiber.join(dispatching)
      yield* Effect.ignore(dispatcher.drain)
    }).pipe(Effect.provide(Layer.merge(agentLayer, FetchHttpClient.layer)))
    if (options.progress) process.stderr.write("\n")
    const crmStats = yield* crm.stats
    const providerStats = yield* provider.stats

    // The naive loop: same leads, same faults, its own fake provider and CRM.
    const naiveProvider = yield* FakeProvider.make({ plan: providerPlan(byId, 1), seed: options.seed, requestKey })
    const naiveCrm = yield* FakeCrm.make({ plan: crmPlan(byId) })
    const naiveNotifications = yield* receivers
    const naive = NaivePipeline.emptyStats()
    const naiveModel = modelOf(naiveProvider.url)
    yield* Effect.promise(async () => {
      const queue = [...leads]
      const runLead = (lead: DemoScenario.Lead, more: Partial<NaivePipeline.Options> = {}) => {
        // The body toolgate sends for the lead's first step (a text prompt always encodes), its
        // messages rebuilt by the naive loop at each step.
        const { messages, ...body } = Result.getOrThrow(HttpModelStream.providerRequest(naiveModel, requestOf(lead)))
          .body as { messages: ReadonlyArray<unknown> }
        return NaivePipeline.runLead(lead, {
          providerUrl: `${naiveProvider.url}/v1/chat/completions`,
          crmUrl: naiveCrm.url,
          slackUrl: naiveNotifications.slackUrl,
          adsUrl: naiveNotifications.adsUrl,
          body,
          prompt: messages,
          stats: naive,
          ...more
        })
      }
      const worker = async () => {
        for (let lead = queue.shift(); lead !== undefined; lead = queue.shift()) {
          switch (lead.fault) {
            case "redelivered":
              await Promise.all([runLead(lead), runLead(lead)])
              break
            case "crashed_after_step_1":
              await runLead(lead, { crashAfterStep: 1 })
              await runLead(lead)
              break
            case "redelivered_after_step_2": {
              let again: Promise<void> | undefined
              const current = lead
              await runLead(lead, { afterStep: (step) => (step === 2 ? (again = runLead(current)) : undefined) })
              await again
              break
            }
            default:
              await runLead(lead)
          }
        }
      }
      await Promise.all(Array.from({ length: 64 }, worker))
    })
    const naiveCrmStats = yield* naiveCrm.stats
    const naiveProviderStats = yield* naiveProvider.stats

    const faults: Record<string, number> = {}
    for (const lead of leads) count(faults, lead.fault)
    const report: Report = {
      leads: leads.length,
      seed: options.seed,
      store: options.store === undefined ? `embedded PGlite (${options.dataDir})` : "PostgreSQL server",
      faults,
      elapsedMs: (yield* Clock.currentTimeMillis) - started,
      toolgate: {
        ...row,
        attempts: providerStats.requests,
        crmMutations: crmStats.mutations,
        crmDuplicates: crmStats.duplicates,
        notificationsDelivered: notifications.count().delivered,
        notificationDuplicates: notifications.count().duplicates,
        corrupted: 0
      },
      naive: {
        attempts: naiveProviderStats.requests,
        retries: naive.retries,
        stepsReplayed: 0,
        requestsSaved: 0,
        assembled: naive.assembled,
        executed: naive.executed,
        replayed: 0,
        rejected: naive.rejected,
        unknown: 0,
        crmMutations: naiveCrmStats.mutations,
        crmDuplicates: naiveCrmStats.duplicates,
        notificationsDelivered: naiveNotifications.count().delivered,
        notificationDuplicates: naiveNotifications.count().duplicates,
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
    ["model requests", (r) => String(r.attempts)],
    ["retries", (r) => String(r.retries)],
    ["steps replayed (journal)", (r) => String(r.stepsReplayed)],
    ["model requests saved", (r) => String(r.requestsSaved)],
    ["tool calls", (r) => String(r.assembled)],
    ["executed", (r) => String(r.executed)],
    ["replayed (from the store)", (r) => String(r.replayed)],
    ["rejected, by error tag", (r) => tally(r.rejected) || "-"],
    ["outcome unknown", (r) => String(r.unknown)],
    ["corrupted calls acted on", (r) => String(r.corrupted)],
    ["CRM mutations", (r) => String(r.crmMutations)],
    ["CRM duplicate mutations", (r) => String(r.crmDuplicates)],
    ["notifications delivered", (r) => String(r.notificationsDelivered)],
    ["duplicate notifications", (r) => String(r.notificationDuplicates)]
  ]
  const left = Math.max(...rows.map(([label]) => label.length))
  const mid = Math.max(8, ...rows.map(([, f]) => f(report.toolgate).length))
  const lines = [
    `${"".padEnd(left)}  ${"toolgate".padEnd(mid)}  naive`,
    `${"-".repeat(left)}  ${"-".repeat(mid)}  ${"-".repeat(20)}`,
    ...rows.map(([label, f]) => `${label.padEnd(left)}  ${f(report.toolgate).padEnd(mid)}  ${f(report.naive)}`)
  ]
  const faults = tally(report.faults)
  const { naive, toolgate } = report
  return [
    `${report.leads} leads (3-step SDR turns), seed ${report.seed}, store: ${report.store}, ${
      (report.elapsedMs / 1000).toFixed(1)
    } s`,
    `faults: ${faults}`,
    "",
    ...lines,
    "",
    toolgate.crmDuplicates === 0
      ? `toolgate: 0 duplicate CRM mutations, ${toolgate.notificationDuplicates} duplicate notifications, ${toolgate.requestsSaved} model requests saved by the journal; the naive loop made ${naive.crmDuplicates} duplicate mutations and ${naive.notificationDuplicates} duplicate notifications, acted on ${naive.corrupted} corrupted calls and asked the model ${
        naive.attempts - toolgate.attempts
      } more times.`
      : `toolgate made ${toolgate.crmDuplicates} duplicate CRM mutations: this is a bug, please report it.`,
    toolgate.executed === 0 && toolgate.replayed > 0
      ? `Nothing was executed again: every step was replayed from the journal and every call from the store${
        toolgate.unknown > 0
          ? ` (the ${toolgate.unknown} of unknown outcome stay parked until resolved)`
          : ""
      }; the model was asked only for the steps no run had completed. To start afresh, ${
        report.store.startsWith("embedded")
          ? "use another --data-dir or delete that directory"
          : "drop the toolgate schema"
      }.`
      : "Run it again: every step is replayed from the journal, every call from the store, and the CRM sees no new mutation.",
    "(The naive column varies a little from run to run: its faults race real timeouts.)"
  ].join("\n")
}

/** `tag count` pairs, largest count first, then by name, so a report reads the same every run. */
const tally = (record: Readonly<Record<string, number>>) =>
  Object.entries(record)
    .toSorted(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([k, v]) => `${k} ${v}`)
    .join(", ")
