/**
 * `toolgate worker`: a runner process of the lead cluster (`@toolgate/cluster`). It joins the
 * cluster whose storage is on the PostgreSQL server `--store` names, takes its share of the
 * shards, and answers each lead event routed to it with an agent turn: the model at `--base-url`,
 * the tools of `--tools` (each performed by its webhook, like `toolgate run`), the idempotency
 * store and the step journal on the same server. Each answered event prints one JSON line on
 * stdout (`{"event":"turn",…}`), so a supervisor can count what each worker did.
 *
 * On SIGTERM the runner stops taking shards and lets its in-flight turns finish for at most the
 * termination timeout; what it did not answer is delivered by the shards' next owners.
 *
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import { type FinishProfile, HttpModelStream, HttpTransport, type ToolsFile } from "@toolgate/adapters"
import { LeadEntity, type LeadEvent, Runner } from "@toolgate/cluster"
import { Agent, IdempotencyStore, StepJournal, ToolExecutor, WebhookHandler } from "@toolgate/runtime"
import type { Tool } from "effect/ai"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Run from "./Run.js"

/**
 * Options of a worker.
 *
 * - `store`: the `postgres://` URL of the server holding the cluster's tables, the idempotency
 *   store and the step journal.
 * - `host`, `port`: the runner's address (other runners and intakes connect there).
 * - `cluster`: the cluster's table prefix and shard settings (`Runner.Options`).
 * - `provider`, `baseUrl`, `model`, `apiKey`, `finishProfile`, `budgets`: the model endpoint, as for
 *   `toolgate run`.
 * - `tools`, `toolkit`: the tools file's tools (each with its webhook) and their toolkit.
 * - `maxSteps`, `deadlineMs`, `leaseMs`: the agent turn's options (`leaseMs`: the lease of a
 *   journaled step and of a call's claim, which bounds how long a turn whose runner was killed
 *   mid-step or mid-call waits before taking them over).
 * - `recovery`: what becomes of a call whose previous attempt may have applied (its runner died
 *   mid-call, its answer was lost): `manual` (default: parked `unknown` for an operator, never
 *   re-sent) or `reexecute` (re-sent with the same `Idempotency-Key`: for webhooks that honour it,
 *   which then apply it once).
 * - `connections`: the pool size on the server (default 8).
 * - `log`: receives each answer or failure.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly store: string
  readonly host: string
  readonly port: number
  readonly cluster: Runner.Options
  readonly provider: HttpModelStream.Format
  readonly baseUrl: string
  readonly model: string
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly finishProfile?: FinishProfile.FinishProfile | undefined
  readonly budgets?: { readonly firstByteMs?: number | undefined; readonly idleMs?: number | undefined } | undefined
  readonly tools: ReadonlyArray<ToolsFile.Tool>
  readonly toolkit: LeadEntity.Options["toolkit"]
  readonly maxSteps?: number | undefined
  readonly deadlineMs?: number | undefined
  readonly leaseMs?: number | undefined
  readonly recovery?: "manual" | "reexecute" | undefined
  readonly connections?: number | undefined
  readonly log: (event: LeadEvent.LeadEvent, outcome: LeadEntity.Answer | LeadEntity.TurnFailed) => void
}

/**
 * The worker's agent, without the cluster: the model endpoint, the tools' webhooks (with the
 * `recovery` policy), the idempotency store and the step journal on the `SqlClient` in context
 * (a turn run through it directly is what a worker runs for an event, without the cluster hop).
 *
 * @since 0.1.0
 * @category layers
 */
export const agent = (options: Omit<Options, "host" | "port" | "cluster" | "log">) => {
  const handlers: Record<string, ToolExecutor.Handler<Tool.Any, HttpClient.HttpClient>> = {}
  for (const tool of options.tools) {
    handlers[tool.name] = {
      ...WebhookHandler.handler({ url: tool.webhook!, parse: (json) => json }),
      recovery: options.recovery ?? "manual"
    }
  }
  const stores = Layer.mergeAll(IdempotencyStore.layerSql(), StepJournal.layerSql())
  return Agent.layer.pipe(
    Layer.provide(
      ToolExecutor.layer(options.toolkit, handlers, options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs })
        .pipe(Layer.provide(FetchHttpClient.layer))
    ),
    Layer.provide(
      HttpModelStream.layer(Run.modelStream(options)).pipe(Layer.provide(HttpTransport.layerNode))
    ),
    Layer.provide(stores)
  )
}

/**
 * The worker: the lead entity registered on a runner at `host:port`, its agent ({@link agent}) on
 * the model endpoint and the tools' webhooks, everything stored on `store`. Launch it with
 * `Layer.launch`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options) =>
  LeadEntity.layer({
    toolkit: options.toolkit,
    runner: `${options.host}:${options.port}`,
    turn: {
      maxSteps: options.maxSteps,
      deadlineMs: options.deadlineMs,
      ...(options.leaseMs === undefined ? {} : { journal: { leaseMs: options.leaseMs } })
    },
    onTurn: (event, outcome) => Effect.sync(() => options.log(event, outcome))
  }).pipe(
    Layer.provide(agent(options)),
    Layer.provide(Runner.layer({ ...options.cluster, host: options.host, port: options.port })),
    Layer.provide(PgClient.layer({ url: Redacted.make(options.store), maxConnections: options.connections ?? 8 }))
  )
