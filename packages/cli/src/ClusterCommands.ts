/**
 * The lead cluster's processes: `toolgate worker` (a runner answering lead events with agent
 * turns, `Worker`) and `toolgate intake` (the HTTP intake, `Intake`), with the cluster flags every
 * runner and intake of a cluster must agree on. `Worker` and `Intake` (the cluster, SQL and HTTP
 * modules) load when the command runs.
 *
 * @since 0.1.0
 */
import { Command, Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Help from "./Help.js"
import { durationFlag, InputError, loadTools, maxSteps, modules, positiveMs } from "./internal/command.js"

/** The cluster flags `worker` and `intake` share (every runner and intake of a cluster must agree). */
const clusterFlags = {
  store: Flag.String("store").pipe(
    Flag.withDescription(
      "the postgres:// URL of the server holding the cluster's tables, the idempotency store and the step journal"
    )
  ),
  host: Flag.String("host").pipe(
    Flag.withDescription("the address to listen on, which the others connect to (default 127.0.0.1)"),
    Flag.withDefault("127.0.0.1")
  ),
  port: Flag.Int("port").pipe(Flag.withDescription("the port to listen on")),
  prefix: Flag.String("cluster-prefix").pipe(
    Flag.withDescription("the cluster's table prefix, the same for every runner and intake (default toolgate_cluster)"),
    Flag.withDefault("toolgate_cluster")
  ),
  shards: Flag.Int("shards").pipe(
    Flag.withDescription("shards per group, the same for every runner and intake (default 300)"),
    Flag.withDefault(300)
  ),
  refresh: durationFlag("refresh-interval", "how often a runner reads the runners and shard assignments", "3s"),
  poll: durationFlag("poll-interval", "how often a runner reads its shards' unprocessed messages", "10s")
}

/** The `Runner.Options` of the cluster flags, or a usage error. */
const clusterOptions = (flags: {
  readonly store: string
  readonly port: number
  readonly prefix: string
  readonly shards: number
  readonly refresh: string
  readonly poll: string
}) =>
  Effect.gen(function*() {
    if (!/^postgres(ql)?:\/\//.test(flags.store)) {
      return yield* new InputError({ reason: "--store must be a postgres:// URL" })
    }
    if (flags.port < 0 || flags.port > 65_535) return yield* new InputError({ reason: "--port must be 0 to 65535" })
    if (flags.shards < 1) return yield* new InputError({ reason: "--shards must be at least 1" })
    if (!/^[a-z_][a-z0-9_]{0,40}$/.test(flags.prefix)) {
      return yield* new InputError({
        reason: "--cluster-prefix must be a lower-case SQL identifier of at most 41 characters"
      })
    }
    return {
      prefix: flags.prefix,
      shardsPerGroup: flags.shards,
      refreshAssignmentsMs: yield* positiveMs("refresh-interval", flags.refresh),
      messagePollMs: yield* positiveMs("poll-interval", flags.poll)
    }
  })

/** Prints one JSON line on stdout. */
const jsonLine = (value: unknown) => Effect.sync(() => process.stdout.write(`${JSON.stringify(value)}\n`))

/**
 * `toolgate worker --store postgres://… --port P --base-url URL --model M --tools FILE`: a runner
 * of the lead cluster (see `Worker`). Prints `{"event":"ready","runner"}` once it has joined,
 * `{"event":"turn",…}` per answered event and `{"event":"stopped"}` after a SIGTERM's graceful
 * stop.
 *
 * @since 0.1.0
 * @category commands
 */
export const worker = Command.make("worker", {
  ...clusterFlags,
  provider: Flag.Literals("provider", ["openai-chat", "anthropic"]).pipe(
    Flag.withDescription("the API's wire format"),
    Flag.withDefault("openai-chat" as const)
  ),
  baseUrl: Flag.String("base-url").pipe(Flag.withDescription("the model API's base URL")),
  model: Flag.String("model").pipe(Flag.withDescription("the model name")),
  tools: Flag.String("tools").pipe(
    Flag.withDescription("a JSON file of tool definitions, each with a \"webhook\" URL that performs it")
  ),
  apiKeyEnv: Flag.String("api-key-env").pipe(
    Flag.withDescription("the environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY)"),
    Flag.optional
  ),
  maxSteps: Flag.Int("max-steps").pipe(
    Flag.withDescription(`the most model steps of a turn (default 8, at most ${maxSteps})`),
    Flag.withDefault(8)
  ),
  lockExpiration: durationFlag(
    "lock-expiration",
    "how long a shard lock outlives a runner that stopped refreshing it (a killed runner's locks go with its connection)",
    "35s"
  ),
  healthCheck: durationFlag(
    "health-check-interval",
    "how often runners ping each other; one that does not answer loses its shards",
    "60s"
  ),
  termination: durationFlag(
    "termination-timeout",
    "on SIGTERM, how long in-flight turns may finish before they are handed to the shards' next owners",
    "15s"
  ),
  lease: durationFlag(
    "step-lease",
    "a journaled step's lease: how long a turn whose runner died mid-step waits before asking that step again",
    "30s"
  ),
  recovery: Flag.Literals("recovery", ["manual", "reexecute"]).pipe(
    Flag.withDescription(
      "a call whose previous attempt may have applied (its runner died mid-call, its answer was lost): manual parks it unknown for an operator; reexecute sends it again with the same Idempotency-Key, for webhooks that honour it (default manual)"
    ),
    Flag.withDefault("manual" as const)
  ),
  firstByteTimeout: durationFlag("first-byte-timeout", "per stream attempt: the wait for the first byte", "60s"),
  idleTimeout: durationFlag("idle-timeout", "per stream attempt: the longest silence between two reads", "60s")
}, (flags) =>
  Effect.gen(function*() {
    const cluster = yield* clusterOptions(flags)
    if (!URL.canParse(flags.baseUrl) || !/^https?:$/.test(new URL(flags.baseUrl).protocol)) {
      return yield* new InputError({ reason: `--base-url ${flags.baseUrl}: not an http(s) URL` })
    }
    if (flags.maxSteps < 1 || flags.maxSteps > maxSteps) {
      return yield* new InputError({ reason: `--max-steps must be between 1 and ${maxSteps}` })
    }
    const toolsFile = yield* loadTools(flags.tools)
    const missing = toolsFile.tools.find((d) => d.webhook === undefined)
    if (missing !== undefined) {
      return yield* new InputError({ reason: `--tools: tool ${missing.name} has no "webhook" URL to call` })
    }
    const [ToolValidator, { WebhookHandler }] = yield* Effect.all([modules.toolValidator, modules.runtime])
    const toolkit = ToolValidator.toToolkit(toolsFile.validator, {
      success: Schema.Json,
      failure: WebhookHandler.WebhookFailure
    })
    const keyEnv = Option.getOrElse(flags.apiKeyEnv, () =>
      flags.provider === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY")
    const key = process.env[keyEnv]
    const options = {
      store: flags.store,
      host: flags.host,
      port: flags.port,
      cluster: {
        ...cluster,
        lockExpirationMs: yield* positiveMs("lock-expiration", flags.lockExpiration),
        healthCheckMs: yield* positiveMs("health-check-interval", flags.healthCheck),
        terminationTimeoutMs: yield* positiveMs("termination-timeout", flags.termination)
      },
      provider: flags.provider,
      baseUrl: flags.baseUrl,
      model: flags.model,
      apiKey: key === undefined || key === "" ? undefined : Redacted.make(key),
      budgets: {
        firstByteMs: yield* positiveMs("first-byte-timeout", flags.firstByteTimeout),
        idleMs: yield* positiveMs("idle-timeout", flags.idleTimeout)
      },
      tools: toolsFile.tools,
      toolkit,
      maxSteps: flags.maxSteps,
      leaseMs: yield* positiveMs("step-lease", flags.lease),
      recovery: flags.recovery
    }
    const Worker = yield* Effect.promise(() =>
      import("./Worker.js")
    )
    const runner = `${flags.host}:${flags.port}`
    yield* Effect.gen(function*() {
      yield* Layer.build(Worker.layer({
        ...options,
        log: (event, outcome) =>
          process.stdout.write(`${
            JSON.stringify({
              event: "turn",
              eventId: event.eventId,
              entityId: `${event.tenant}/${event.leadId}`,
              runner,
              ...("error" in outcome
                ? { outcome: "failed", error: outcome.error, step: outcome.step }
                : {
                  outcome: "answered",
                  stepsReplayed: outcome.stepsReplayed,
                  modelRequests: outcome.modelRequests,
                  calls: outcome.calls.map((c) => `${c.name}:${c.outcome}`)
                })
            })
          }\n`)
      }))
      yield* Effect.addFinalizer(() => jsonLine({ event: "stopped", runner }))
      yield* jsonLine({ event: "ready", runner })
      return yield* Effect.never
    }).pipe(Effect.scoped)
  })).pipe(
    Command.withDescription(
      "run a runner of the lead cluster: answer the lead events of its shards with agent turns, exactly once per intent"
    ),
    Command.annotate(Help.ExitCodes, [
      [1, "a usage or input error (one line on stderr): a bad flag or tools file"],
      [70, "an internal error (a bug), or the store or the port could not be opened"],
      [130, "stopped by SIGTERM or SIGINT, its shards handed over (effect's exit code for an interrupted program)"]
    ])
  )

/**
 * `toolgate intake --store postgres://… --port P`: the lead cluster's HTTP intake (`POST
 * /lead-events`, see `@toolgate/cluster`'s `Intake`). Prints `{"event":"ready","url"}` once it
 * listens.
 *
 * @since 0.1.0
 * @category commands
 */
export const intake = Command.make("intake", clusterFlags, (flags) =>
  Effect.gen(function*() {
    const cluster = yield* clusterOptions(flags)
    const Intake = yield* Effect.promise(() => import("./Intake.js"))
    yield* Effect.gen(function*() {
      yield* Layer.build(Intake.layer({ store: flags.store, host: flags.host, port: flags.port, cluster }))
      yield* Effect.addFinalizer(() => jsonLine({ event: "stopped" }))
      yield* jsonLine({ event: "ready", url: `http://${flags.host}:${flags.port}/lead-events` })
      return yield* Effect.never
    }).pipe(Effect.scoped)
  })).pipe(
    Command.withDescription("serve the lead cluster's HTTP intake: POST /lead-events sends a lead event to its lead"),
    Command.annotate(Help.ExitCodes, [
      [1, "a usage or input error (one line on stderr)"],
      [70, "an internal error (a bug), or the store or the port could not be opened"],
      [130, "stopped by SIGTERM or SIGINT (effect's exit code for an interrupted program)"]
    ])
  )
