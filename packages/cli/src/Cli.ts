/**
 * The `toolgate` command line, a thin layer of commands over the packages: `demo` (the
 * fault-injection demo of `@toolgate/demo`), `run` (one prompt through the agent loop), `inspect`
 * (one captured stream), `corpus` (every capture of a fixture corpus), and the operator's
 * `records`, `resolve` and `purge` (the `Records` calls of `@toolgate/runtime`). Input errors (a
 * missing file, a directory, an empty or binary file, a file that is not UTF-8 or not an event
 * stream, an unknown provider, a bad tools file, a store that cannot be opened) print one line on
 * stderr and exit 1; a typed failure of what was asked (an inspected stream's error, a failed
 * turn or call, a record that cannot be resolved) exits 2. Every command's help lists its exit
 * codes (`Help.ExitCodes`) and marks its required flags.
 *
 * @since 0.1.0
 */
import * as FinishProfile from "@toolgate/adapters/FinishProfile"
import * as Provider from "@toolgate/adapters/Provider"
import type { IdempotencyStore, Outbox } from "@toolgate/runtime"
import { Console, Deferred, Effect, Fiber, FileSystem, Layer, Option, Path, Redacted, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { userInfo } from "node:os"
import * as Capture from "./Capture.js"
import * as Help from "./Help.js"
import { parseMs } from "./internal/duration.js"

type IdempotencyStoreStatus = IdempotencyStore.Status

/**
 * The modules a command needs beyond its flags, loaded when it runs (`import()`): `--help` loads
 * none of them, and `inspect` and `corpus` never load the store, the runtime, the demo, the HTTP
 * stack or the JSON Schema validator (unless `--tools` is given). Start-up time and memory are in
 * `bench/RESULTS.md`; `test/cli-modules.test.ts` checks what each command loads.
 */
const modules = {
  inspect: Effect.promise(() => import("./Inspect.js")),
  corpus: Effect.promise(() => import("./Corpus.js")),
  run: Effect.promise(() => import("./Run.js")),
  operator: Effect.promise(() => import("./Operator.js")),
  demo: Effect.promise(() => import("@toolgate/demo")),
  runtime: Effect.promise(() => import("@toolgate/runtime")),
  fetchHttpClient: Effect.promise(() => import("effect/http/FetchHttpClient")),
  toolsFile: Effect.promise(() => import("@toolgate/adapters/ToolsFile")),
  toolValidator: Effect.promise(() => import("@toolgate/adapters/ToolValidator"))
}

/**
 * A usage or input error: reported as one line on stderr, exit code 1.
 *
 * @since 0.1.0
 * @category errors
 */
export class InputError extends Schema.TaggedError<InputError>()("InputError", { reason: Schema.String }) {
  override get message(): string {
    return this.reason
  }
}

const loadTools = Effect.fnUntraced(function*(file: string) {
  const ToolsFile = yield* modules.toolsFile
  const fs = yield* FileSystem.FileSystem
  const text = yield* fs.readFileString(file).pipe(
    Effect.mapError(() => new InputError({ reason: `${file}: tools file not found or unreadable` }))
  )
  return yield* ToolsFile.parse(text)
}, Effect.mapError((e) => e._tag === "ToolDefinitionError" ? new InputError({ reason: `--tools: ${e.message}` }) : e))

const providerFlag = Flag.Literals("provider", ["auto", ...Provider.names]).pipe(
  Flag.withAlias("p"),
  Flag.withDescription("the wire format of the capture; auto recognises it from the first events"),
  Flag.withDefault("auto" as const)
)

const finishProfileFlag = (defaultText: string) =>
  Flag.Literals("finish-profile", FinishProfile.names).pipe(
    Flag.withDescription(
      `which finish reasons release tool calls: strict (only tool_calls / tool_use; stop or end_turn with calls is UnexpectedFinishReason) or compatible (stop and end_turn too, for servers that send them with calls); default ${defaultText}`
    ),
    Flag.optional
  )

/**
 * `toolgate inspect FILE [--provider P] [--json] [--tools FILE] [--finish-profile strict|compatible]`.
 * The finish profile defaults to `compatible`: a capture does not say which server sent it.
 *
 * @since 0.1.0
 * @category commands
 */
export const inspect = Command.make("inspect", {
  file: Argument.String("file").pipe(Argument.withDescription("a captured response body (SSE bytes)")),
  provider: providerFlag,
  json: Flag.Boolean("json").pipe(Flag.withDescription("print the result as one JSON object"), Flag.withDefault(false)),
  tools: Flag.String("tools").pipe(
    Flag.withDescription("a JSON file of tool definitions to validate the released calls against"),
    Flag.optional
  ),
  finishProfile: finishProfileFlag("compatible")
}, ({ file, finishProfile, json, provider, tools }) =>
  Effect.gen(function*() {
    const Inspect = yield* modules.inspect
    const body = yield* Capture.open(file)
    const validator = Option.isSome(tools) ? (yield* loadTools(tools.value)).validator : undefined
    const result = yield* Inspect.inspect(body, {
      provider,
      tools: validator,
      finishProfile: Option.getOrUndefined(finishProfile),
      onDetected: (name) => {
        process.stderr.write(`toolgate: detected provider ${name}\n`)
      }
    }).pipe(
      Effect.catchTag("NotAnEventStream", (e) => Effect.fail(new Capture.CaptureError({ file, reason: e.message })))
    )
    if (json) {
      for (const piece of Inspect.jsonPieces(result)) process.stdout.write(piece)
      process.stdout.write("\n")
    } else {
      yield* Console.log(Inspect.render(result))
    }
    if (result.outcome === "error") process.exitCode = 2
  })).pipe(
    Command.withDescription("assemble one captured provider stream and print its text, tool calls or typed error"),
    Command.annotate(Help.ExitCodes, [
      [0, "the stream completed"],
      [
        1,
        "a usage or input error (one line on stderr): a missing, empty or binary file, not an event stream, a bad tools file"
      ],
      [2, "the stream ended in a typed error (printed)"],
      [70, "an internal error (a bug)"]
    ])
  )

/** Where `toolgate corpus` looks when it is given no DIR: the current directory's `test/fixtures`. */
const defaultCorpus = "./test/fixtures"

/**
 * `toolgate corpus [DIR]`: every capture of a fixture corpus, one row each, checked against its
 * `expected.json`. Without DIR: `./test/fixtures` of the current directory when it exists, else a
 * usage error asking for DIR.
 *
 * @since 0.1.0
 * @category commands
 */
export const corpus = Command.make("corpus", {
  dir: Argument.String("dir").pipe(
    Argument.withDescription(`a fixture corpus: provider folders of NAME.sse captures (default ${defaultCorpus})`),
    Argument.optional
  ),
  json: Flag.Boolean("json").pipe(Flag.withDescription("print the rows as JSON"), Flag.withDefault(false))
}, ({ dir: given, json }) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    if (Option.isNone(given) && !(yield* fs.exists(defaultCorpus).pipe(Effect.orElseSucceed(() => false)))) {
      return yield* new InputError({
        reason: `corpus: give the corpus DIR (there is no ${defaultCorpus} in ${path.resolve(".")})`
      })
    }
    const dir = Option.getOrElse(given, () => defaultCorpus)
    const info = yield* fs.stat(dir).pipe(
      Effect.mapError(() => new InputError({ reason: `${dir}: no such directory` }))
    )
    if (info.type !== "Directory") return yield* new InputError({ reason: `${dir}: is not a directory` })
    const Corpus = yield* modules.corpus
    const rows = yield* Corpus.run(dir)
    if (rows.length === 0) {
      return yield* new InputError({ reason: `${dir}: holds no captures (provider folders of .sse files)` })
    }
    yield* Console.log(json ? JSON.stringify(rows) : `toolgate corpus: ${path.resolve(dir)}\n\n${Corpus.render(rows)}`)
    if (rows.some((r) => r.matchesExpected === false)) process.exitCode = 2
  })).pipe(
    Command.withDescription("inspect every capture of a fixture corpus and print one row each"),
    Command.annotate(Help.ExitCodes, [
      [0, "every capture gave its expected.json"],
      [1, "a usage or input error (one line on stderr): no corpus, a capture or expected.json that does not read"],
      [2, "a capture differs from its expected.json"],
      [70, "an internal error (a bug)"]
    ])
  )

/**
 * Checks the store flags of `demo` and `run`: a `--store` must be a `postgres://` URL; otherwise
 * the embedded store's directory is created when missing. Gives the server URL, if any.
 *
 * @since 0.1.0
 * @category input
 */
export const prepareStore = Effect.fnUntraced(function*(store: Option.Option<string>, dataDir: string) {
  const url = Option.getOrUndefined(store)
  if (url !== undefined) {
    if (!/^postgres(ql)?:\/\//.test(url)) return yield* new InputError({ reason: "--store must be a postgres:// URL" })
    return url
  }
  const fs = yield* FileSystem.FileSystem
  yield* fs.makeDirectory(dataDir, { recursive: true }).pipe(
    Effect.mapError(() => new InputError({ reason: `--data-dir ${dataDir}: cannot be created as a directory` }))
  )
  return undefined
})

const dataDirFlag = Flag.String("data-dir").pipe(
  Flag.withDescription("where the embedded PGlite store lives (default .toolgate)"),
  Flag.withDefault(".toolgate")
)

const storeFlag = Flag.String("store").pipe(
  Flag.withDescription("a postgres:// URL: use a PostgreSQL server instead of the embedded store"),
  Flag.optional
)

/** The most steps `run --max-steps` allows (the agent's own bound). */
const maxSteps = 1_000

/** The most leads a demo runs: enough to load the pipeline, bounded so memory stays bounded. */
const maxLeads = 20_000

/**
 * `toolgate demo`: the fault-injection demo (what `npm start` runs).
 *
 * @since 0.1.0
 * @category commands
 */
export const demo = Command.make("demo", {
  leads: Flag.Int("leads").pipe(
    Flag.withDescription(`how many inbound leads to run (default 200, at most ${maxLeads})`),
    Flag.withDefault(200)
  ),
  seed: Flag.Int("seed").pipe(
    Flag.withDescription("seed of the injected faults: the same seed gives the same faults (default 42)"),
    Flag.withDefault(42)
  ),
  dataDir: dataDirFlag,
  store: storeFlag,
  json: Flag.Boolean("json").pipe(Flag.withDescription("print the report as one JSON object"), Flag.withDefault(false)),
  workers: Flag.Int("workers").pipe(
    Flag.withDescription(
      "how many worker processes answer the leads (default 1: in this process, on the embedded store); several form a lead cluster (toolgate worker processes) and need --store postgres://…"
    ),
    Flag.withDefault(1)
  )
}, ({ dataDir, json, leads, seed, store, workers }) =>
  Effect.gen(function*() {
    if (leads < 1 || leads > maxLeads) {
      return yield* new InputError({ reason: `--leads must be between 1 and ${maxLeads}` })
    }
    if (workers < 1 || workers > 16) return yield* new InputError({ reason: "--workers must be between 1 and 16" })
    if (workers > 1) {
      if (Option.isNone(store)) {
        return yield* new InputError({
          reason:
            `--workers ${workers} needs --store postgres://… (the workers share the cluster's tables and the store on one server)`
        })
      }
      const url = yield* prepareStore(store, dataDir)
      const ClusterDemo = yield* Effect.promise(() => import("@toolgate/demo/ClusterDemo"))
      const report = yield* ClusterDemo.run({
        leads,
        seed,
        workers,
        store: url!,
        workerCommand: [process.execPath, process.argv[1]!, "worker"]
      })
      yield* Console.log(json ? JSON.stringify(report) : ClusterDemo.render(report))
      if (report.crmDuplicates > 0) process.exitCode = 2
      return
    }
    const storeUrl = yield* prepareStore(store, dataDir)
    const { Demo } = yield* modules.demo
    const report = yield* Demo.run({
      leads,
      seed,
      dataDir,
      store: storeUrl,
      progress: !json && process.stderr.isTTY === true,
      preview: !json
    })
    yield* Console.log(json ? JSON.stringify(report) : Demo.render(report))
    if (report.toolgate.crmDuplicates > 0) process.exitCode = 2
  })).pipe(
    Command.withDescription("run inbound leads through toolgate and a naive pipeline under injected faults"),
    Command.annotate(Help.ExitCodes, [
      [0, "the report printed; toolgate caused no duplicate CRM mutation"],
      [1, "a usage or input error (one line on stderr), or the store could not be opened"],
      [2, "toolgate caused a duplicate CRM mutation"],
      [70, "an internal error (a bug)"]
    ])
  )

/** A duration flag: `500ms`, `30s`, `10m`, `2h`, `7d`. */
const durationFlag = (name: string, description: string, fallback: string) =>
  Flag.String(name).pipe(
    Flag.withDescription(`${description} (e.g. 500ms, 30s, 10m; default ${fallback})`),
    Flag.withDefault(fallback)
  )

/** The milliseconds of a duration flag, > 0, or a usage error naming the flag. */
const positiveMs = (flag: string, text: string) => {
  const ms = parseMs(text)
  return ms === undefined || !(ms > 0)
    ? Effect.fail(new InputError({ reason: `--${flag} ${text}: not a duration > 0 (e.g. 500ms, 30s, 10m, 2h)` }))
    : Effect.succeed(ms)
}

/** An instant written with its offset (`2024-05-01T10:59:59.9Z`, `…+02:00`): never a bare local time. */
const instant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/i

/**
 * `toolgate run --base-url URL --model M --tools FILE --scope S [--max-steps N] "prompt"`: one
 * prompt through the agent loop against an OpenAI-compatible endpoint (or `--provider
 * anthropic`): the tools' results go back to the model until it answers. `--deadline` bounds the
 * turn's streaming (every step's retries included), `--first-byte-timeout` and `--idle-timeout`
 * each stream attempt; `--event-time` is the business event's time, which window-scoped key
 * policies key by (required when a tool of the tools file has one).
 *
 * @since 0.1.0
 * @category commands
 */
export const run = Command.make("run", {
  prompt: Argument.String("prompt").pipe(Argument.withDescription("the user message")),
  provider: Flag.Literals("provider", ["openai-chat", "anthropic"]).pipe(
    Flag.withDescription("the API's wire format"),
    Flag.withDefault("openai-chat" as const)
  ),
  baseUrl: Flag.String("base-url").pipe(
    Flag.withDescription("the API base URL, e.g. https://api.openai.com/v1 or http://localhost:11434/v1")
  ),
  model: Flag.String("model").pipe(Flag.withDescription("the model name")),
  tools: Flag.String("tools").pipe(
    Flag.withDescription("a JSON file of tool definitions, each with a \"webhook\" URL that performs it")
  ),
  scope: Flag.String("scope").pipe(
    Flag.withDescription(
      "TENANT/TURN (or TURN): the business event; the same scope replays, never re-executes (tools keyed by a calendar window key by TENANT and --event-time instead of TURN)"
    )
  ),
  apiKeyEnv: Flag.String("api-key-env").pipe(
    Flag.withDescription("the environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY)"),
    Flag.optional
  ),
  maxTokens: Flag.Int("max-tokens").pipe(
    Flag.withDescription("the model's output token limit per step (default 1024)"),
    Flag.withDefault(1024)
  ),
  maxSteps: Flag.Int("max-steps").pipe(
    Flag.withDescription(
      `the most model steps of the turn: tool results go back to the model until it answers or this many steps ran (default 8, at most ${maxSteps})`
    ),
    Flag.withDefault(8)
  ),
  dataDir: dataDirFlag,
  store: storeFlag,
  finishProfile: finishProfileFlag("strict for api.openai.com and api.anthropic.com, compatible for other URLs"),
  deadline: durationFlag(
    "deadline",
    "the budget of the whole streaming phase, retries and their back-off included; calls already released still run",
    "10m"
  ),
  firstByteTimeout: durationFlag(
    "first-byte-timeout",
    "per stream attempt: how long to wait for the response's first byte",
    "60s"
  ),
  idleTimeout: durationFlag("idle-timeout", "per stream attempt: the longest silence between two reads", "60s"),
  eventTime: Flag.String("event-time").pipe(
    Flag.withDescription(
      "when the business event happened (ISO 8601 with its offset, e.g. 2024-05-01T10:59:59.900Z): tools keyed by a calendar window take their window from it, so a retry lands in the same window; required when one is"
    ),
    Flag.optional
  )
}, (flags) =>
  Effect.gen(function*() {
    if (!URL.canParse(flags.baseUrl) || !/^https?:$/.test(new URL(flags.baseUrl).protocol)) {
      return yield* new InputError({ reason: `--base-url ${flags.baseUrl}: not an http(s) URL` })
    }
    if (flags.maxTokens < 1) return yield* new InputError({ reason: "--max-tokens must be at least 1" })
    if (flags.maxSteps < 1 || flags.maxSteps > maxSteps) {
      return yield* new InputError({ reason: `--max-steps must be between 1 and ${maxSteps}` })
    }
    const deadlineMs = yield* positiveMs("deadline", flags.deadline)
    const firstByteMs = yield* positiveMs("first-byte-timeout", flags.firstByteTimeout)
    const idleMs = yield* positiveMs("idle-timeout", flags.idleTimeout)
    let eventTime: Date | undefined
    if (Option.isSome(flags.eventTime)) {
      const text = flags.eventTime.value
      eventTime = instant.test(text) ? new Date(text) : undefined
      if (eventTime === undefined || Number.isNaN(eventTime.getTime())) {
        return yield* new InputError({
          reason: `--event-time ${text}: not an ISO 8601 instant with its offset (e.g. 2024-05-01T10:59:59.900Z)`
        })
      }
    }
    const toolsFile = yield* loadTools(flags.tools)
    const windowed = toolsFile.tools.find((d) => d.keyPolicy?.window !== undefined)
    if (windowed !== undefined && eventTime === undefined) {
      const w = windowed.keyPolicy!.window!
      return yield* new InputError({
        reason:
          `--event-time is required: tool ${windowed.name} is keyed by a calendar window (${w.size} in ${w.timeZone}); give the time the event was received, not the time of this run`
      })
    }
    const missing = toolsFile.tools.find((d) => d.webhook === undefined)
    if (missing !== undefined) {
      return yield* new InputError({ reason: `--tools: tool ${missing.name} has no "webhook" URL to call` })
    }
    // Each tool's parameters accept exactly what its JSON Schema accepts and pass the arguments
    // through unchanged (the webhook is sent what the model sent); its result is any JSON.
    const [ToolValidator, { WebhookHandler }, Run] = yield* Effect.all([
      modules.toolValidator,
      modules.runtime,
      modules.run
    ])
    const toolkit = ToolValidator.toToolkit(toolsFile.validator, {
      success: Schema.Json,
      failure: WebhookHandler.WebhookFailure
    })
    const slash = flags.scope.indexOf("/")
    const scope = slash < 0
      ? { tenant: "default", turn: flags.scope, eventTime }
      : { tenant: flags.scope.slice(0, slash), turn: flags.scope.slice(slash + 1), eventTime }
    if (scope.tenant === "" || scope.turn === "") {
      return yield* new InputError({ reason: "--scope must be TENANT/TURN or TURN" })
    }
    const keyEnv = Option.getOrElse(flags.apiKeyEnv, () =>
      flags.provider === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY")
    const key = process.env[keyEnv]
    if (key === undefined || key === "") {
      process.stderr.write(`toolgate: ${keyEnv} is not set; sending no API key (fine for a local server)\n`)
    }
    const storeUrl = yield* prepareStore(flags.store, flags.dataDir)
    const settled = yield* Run.run({
      provider: flags.provider,
      baseUrl: flags.baseUrl,
      model: flags.model,
      prompt: flags.prompt,
      tools: toolsFile.tools,
      toolkit,
      scope,
      apiKey: key === undefined || key === "" ? undefined : Redacted.make(key),
      dataDir: flags.dataDir,
      store: storeUrl,
      maxTokens: flags.maxTokens,
      maxSteps: flags.maxSteps,
      finishProfile: Option.getOrUndefined(flags.finishProfile),
      deadlineMs,
      budgets: { firstByteMs, idleMs },
      write: (s) =>
        process.stdout.write(s),
      warn: (s) => process.stderr.write(s)
    }).pipe(
      Effect.catch((error) => {
        const cause = error._tag === "StepFailed" ? error.error : error
        // An endpoint that does not stream is a usage error (the wrong URL, or a server without
        // streaming), not a failed turn: one line on stderr, exit 1; so is a data dir whose owner
        // does not answer.
        return cause._tag === "NotAnEventStream"
          ? Effect.fail(new InputError({ reason: `${flags.baseUrl} did not stream: ${cause.message}` }))
          : cause._tag === "DataDirInUse"
          ? Effect.fail(new InputError({ reason: cause.message }))
          : Effect.sync(() => {
            process.stdout.write(
              error._tag === "StepFailed"
                ? `\nerror: step ${error.step}: ${cause._tag}: ${cause.message}\ntool calls of step ${error.step}: none released\n`
                : `\nerror: ${error._tag}: ${error.message}\n`
            )
            return false
          })
      })
    )
    if (!settled) process.exitCode = 2
  })).pipe(
    Command.withDescription(
      "run one prompt through the agent loop: each step's streamed text and tool calls' outcomes, until the model answers"
    ),
    Command.annotate(Help.ExitCodes, [
      [0, "the model answered and every tool call was executed or replayed"],
      [
        1,
        "a usage or input error (one line on stderr): a bad flag or tools file, an endpoint that does not stream, a store that cannot be opened"
      ],
      [
        2,
        "the turn failed (its typed error and step are printed), --max-steps ended it before an answer, or a tool call failed (rejected, unknown outcome, …)"
      ],
      [70, "an internal error (a bug)"]
    ])
  )

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

/** Operator refusals (no such record, an ambiguous prefix, not `unknown`, changed meanwhile): one line, exit 2. */
const refused = (error: { readonly message: string }) =>
  Effect.sync(() => {
    process.stderr.write(`toolgate: ${error.message}\n`)
    process.exitCode = 2
  })

/**
 * Runs an operator command's body on the store its flags name: input errors become
 * `InputError` (exit 1), refusals print one line and exit 2.
 */
const operate = <A, E extends { readonly _tag: string; readonly message: string }, R>(
  store: Option.Option<string>,
  dataDir: string,
  body: Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const Operator = yield* modules.operator
    const layer = yield* Operator.storeLayer(Option.getOrUndefined(store), dataDir)
    yield* body.pipe(Effect.provide(layer), Effect.asVoid)
  }).pipe(
    Effect.catch((error: { readonly _tag: string; readonly message: string }) => {
      switch (error._tag) {
        case "RecordNotFound":
        case "AmbiguousKey":
        case "RecordNotUnknown":
        case "RecordChanged":
          return refused(error)
        case "StoreNotFound":
        case "InvalidRecordRequest":
        case "DataDirInUse":
          return Effect.fail(new InputError({ reason: error.message }))
        default:
          return Effect.fail(error)
      }
    })
  )

const operatorExitCodes = (ok: string, refusals: string | undefined) =>
  Command.annotate(Help.ExitCodes, [
    [0, ok],
    [
      1,
      "a usage or input error (one line on stderr): a bad flag, no store in --data-dir, a --store that cannot be reached"
    ],
    ...(refusals === undefined ? [] : [[2, refusals] as const]),
    [70, "an internal error (a bug)"]
  ])

const operatorDataDirFlag = Flag.String("data-dir").pipe(
  Flag.withDescription(
    "the embedded store to open (default .toolgate; it must exist: operator commands never create one)"
  ),
  Flag.withDefault(".toolgate")
)

/**
 * `toolgate records [KEY] [--scope S] [--state S,…] [--tool T] [--limit N] [--json]`: the store's
 * records, newest change first, as a table (or JSON); with KEY (a key or a prefix of at least 8
 * hex digits), that one record with its journal and resolutions.
 *
 * @since 0.1.0
 * @category commands
 */
export const records = Command.make("records", {
  key: Argument.String("key").pipe(
    Argument.withDescription("show this record: its key (tg1:sha256:…) or a prefix of at least 8 hex digits"),
    Argument.optional
  ),
  scope: Flag.String("scope").pipe(
    Flag.withDescription("only this tenant's records (the TENANT of run --scope TENANT/TURN; default for TURN alone)"),
    Flag.optional
  ),
  state: Flag.String("state").pipe(
    Flag.withDescription(
      "only records in these states, comma-separated: in_progress, succeeded, failed, released, unknown"
    ),
    Flag.optional
  ),
  tool: Flag.String("tool").pipe(Flag.withDescription("only this tool's records"), Flag.optional),
  limit: Flag.Int("limit").pipe(
    Flag.withDescription("at most this many records, 1 to 1000 (default 50)"),
    Flag.withDefault(50)
  ),
  messages: Flag.Boolean("messages").pipe(
    Flag.withDescription(
      "list the outbox's follow-up messages instead (oldest first; --state: pending, delivering, delivered, dead)"
    ),
    Flag.withDefault(false)
  ),
  json: Flag.Boolean("json").pipe(Flag.withDescription("print JSON instead of a table"), Flag.withDefault(false)),
  dataDir: operatorDataDirFlag,
  store: storeFlag
}, (flags) =>
  Effect.gen(function*() {
    if (flags.limit < 1 || flags.limit > 1000) {
      return yield* new InputError({ reason: "--limit must be between 1 and 1000" })
    }
    const [{ IdempotencyStore, Outbox, Records }, Operator] = yield* Effect.all([modules.runtime, modules.operator])
    const statuses = new Set<string>(IdempotencyStore.Status.literals)
    const messageStatuses = new Set<string>(Outbox.MessageStatus.literals)
    const wanted = Option.map(flags.state, (text) => text.split(",").map((s) => s.trim()).filter((s) => s !== ""))
    const states = flags.messages ? messageStatuses : statuses
    const unknownState = Option.getOrElse(wanted, () => []).find((s) => !states.has(s))
    if (unknownState !== undefined) {
      return yield* new InputError({
        reason: `--state ${unknownState}: not a ${flags.messages ? "message " : ""}state (${[...states].join(", ")})`
      })
    }
    yield* operate(
      flags.store,
      flags.dataDir,
      Effect.gen(function*() {
        const outbox = yield* Outbox.Outbox
        if (Option.isSome(flags.key)) {
          const detail = yield* Records.show({ key: flags.key.value, scope: Option.getOrUndefined(flags.scope) })
          const messages = yield* outbox.list({ scope: detail.record.scope, key: detail.record.key, limit: 1000 })
          yield* Console.log(
            flags.json
              ? JSON.stringify({ ...Operator.detailJson(detail), messages: messages.map(Operator.messageJson) })
              : [Operator.renderDetail(detail), Operator.renderRecordMessages(messages)].filter((t) => t !== "")
                .join("\n")
          )
          return
        }
        if (flags.messages) {
          const messages = yield* outbox.list({
            scope: Option.getOrUndefined(flags.scope),
            status: Option.getOrUndefined(wanted) as ReadonlyArray<Outbox.MessageStatus> | undefined,
            limit: flags.limit
          })
          yield* Console.log(
            flags.json ? JSON.stringify(messages.map(Operator.messageJson)) : Operator.renderMessages(messages)
          )
          return
        }
        const found = yield* Records.list({
          scope: Option.getOrUndefined(flags.scope),
          status: Option.getOrUndefined(wanted) as ReadonlyArray<IdempotencyStoreStatus> | undefined,
          tool: Option.getOrUndefined(flags.tool),
          limit: flags.limit
        })
        yield* Console.log(
          flags.json ? JSON.stringify(found.map(Operator.recordJson)) : Operator.renderList(found)
        )
      })
    )
  })).pipe(
    Command.withDescription(
      "list the store's records, newest first, or show one with its journal, resolutions and follow-ups; --messages lists the outbox"
    ),
    operatorExitCodes(
      "the records were listed (none is not an error) or the record shown",
      "KEY names no record, or a prefix names several"
    )
  )

/**
 * `toolgate resolve KEY --applied [--result JSON] | --not-applied --reason TEXT [--by NAME]
 * [--fence N]`: settles an `unknown` record, fenced and audited (`Records.resolve`).
 *
 * @since 0.1.0
 * @category commands
 */
export const resolve = Command.make("resolve", {
  key: Argument.String("key").pipe(
    Argument.withDescription("the unknown record: its key (tg1:sha256:…) or a prefix of at least 8 hex digits")
  ),
  applied: Flag.Boolean("applied").pipe(
    Flag.withDescription("the call's effect happened downstream: the record replays --result to every later call"),
    Flag.withDefault(false)
  ),
  notApplied: Flag.Boolean("not-applied").pipe(
    Flag.withDescription(
      "the effect did not happen: the record is released and its next delivery runs it (needs --reason)"
    ),
    Flag.withDefault(false)
  ),
  result: Flag.String("result").pipe(
    Flag.withDescription("with --applied: the JSON result to replay, as the tool would have answered (default null)"),
    Flag.optional
  ),
  reason: Flag.String("reason").pipe(
    Flag.withDescription("why: what you found downstream (recorded in the audit; required with --not-applied)"),
    Flag.optional
  ),
  by: Flag.String("by").pipe(
    Flag.withDescription("who resolves, for the audit (default: the user running the command)"),
    Flag.optional
  ),
  fence: Flag.String("fence").pipe(
    Flag.withDescription(
      "the fence you saw in toolgate records KEY: refuse if the record changed since (default: its fence now)"
    ),
    Flag.optional
  ),
  scope: Flag.String("scope").pipe(Flag.withDescription("the record's tenant, to narrow a key prefix"), Flag.optional),
  json: Flag.Boolean("json").pipe(Flag.withDescription("print the resolution as JSON"), Flag.withDefault(false)),
  dataDir: operatorDataDirFlag,
  store: storeFlag
}, (flags) =>
  Effect.gen(function*() {
    if (flags.applied === flags.notApplied) {
      return yield* new InputError({ reason: "give exactly one of --applied and --not-applied" })
    }
    if (flags.notApplied && Option.isSome(flags.result)) {
      return yield* new InputError({
        reason: "--result goes with --applied: a call that was not applied has no result"
      })
    }
    const [{ Records }, Operator] = yield* Effect.all([modules.runtime, modules.operator])
    yield* Records.keyOf(flags.key).pipe(Effect.mapError((e) => new InputError({ reason: e.message })))
    if (Option.isSome(flags.fence) && !/^[1-9][0-9]{0,18}$/.test(flags.fence.value)) {
      return yield* new InputError({ reason: `--fence ${flags.fence.value}: not a fence (a positive integer)` })
    }
    const by = Option.getOrElse(flags.by, () => {
      try {
        return userInfo().username
      } catch {
        return process.env.USER ?? "operator"
      }
    })
    yield* operate(
      flags.store,
      flags.dataDir,
      Effect.gen(function*() {
        const resolved = yield* Records.resolve(
          { key: flags.key, scope: Option.getOrUndefined(flags.scope) },
          {
            outcome: flags.applied
              ? { _tag: "Applied", result: Option.getOrUndefined(flags.result) }
              : { _tag: "NotApplied" },
            by,
            reason: Option.getOrUndefined(flags.reason),
            fence: Option.getOrUndefined(Option.map(flags.fence, BigInt))
          }
        )
        yield* Console.log(
          flags.json
            ? JSON.stringify({
              record: Operator.recordJson(resolved.record),
              resolution: Operator.resolutionJson(resolved.audit)
            })
            : Operator.renderResolved(resolved)
        )
      })
    )
  })).pipe(
    Command.withDescription(
      "settle an unknown record once you know downstream whether its call applied (fenced, audited)"
    ),
    operatorExitCodes(
      "the record was resolved",
      "refused: KEY names no record or several, the record is not unknown (its state is named), or it changed since it was read (nothing written)"
    )
  )

/**
 * `toolgate dispatch [--once] [--poll-ms N] [--max-attempts N] [--concurrency N] [--json]`: delivers
 * the outbox's follow-ups (`OutboxDispatcher`), woken by `LISTEN` on a PostgreSQL server
 * (`--store`) and polling the embedded store, until SIGTERM or SIGINT: the round in progress is
 * finished (its deliveries settled), then it prints what it did and exits 0. `--once`: until
 * nothing is due, then exit. Named destinations are the application's (a worker that provides
 * them): this command has none, so their messages are retried, then dead-lettered.
 *
 * @since 0.1.0
 * @category commands
 */
export const dispatch = Command.make("dispatch", {
  once: Flag.Boolean("once").pipe(
    Flag.withDescription("deliver until nothing is due, then exit (default: run until SIGTERM or SIGINT)"),
    Flag.withDefault(false)
  ),
  pollMs: Flag.Int("poll-ms").pipe(
    Flag.withDescription("the longest wait between rounds, ms (default 1000; with --store a NOTIFY wakes it sooner)"),
    Flag.withDefault(1_000)
  ),
  maxAttempts: Flag.Int("max-attempts").pipe(
    Flag.withDescription("attempts before a message is dead-lettered (default 8)"),
    Flag.withDefault(8)
  ),
  concurrency: Flag.Int("concurrency").pipe(
    Flag.withDescription("deliveries at once (default 4)"),
    Flag.withDefault(4)
  ),
  json: Flag.Boolean("json").pipe(
    Flag.withDescription("print JSON lines: ready, each round that leased messages, stopped with the totals"),
    Flag.withDefault(false)
  ),
  dataDir: operatorDataDirFlag,
  store: storeFlag
}, (flags) =>
  Effect.gen(function*() {
    const [{ OutboxDispatcher }, Operator, FetchHttpClient] = yield* Effect.all([
      modules.runtime,
      modules.operator,
      modules.fetchHttpClient
    ])
    const layer = yield* Operator.storeLayer(Option.getOrUndefined(flags.store), flags.dataDir).pipe(
      Effect.mapError((e) => new InputError({ reason: e.message }))
    )
    const body = Effect.gen(function*() {
      const wakeups = Option.isSome(flags.store) ? yield* OutboxDispatcher.pgWakeups() : undefined
      const totals = { leased: 0, delivered: 0, retried: 0, deadLettered: 0, leaseLost: 0 }
      const print = (line: Record<string, unknown>, text: string) =>
        flags.json ? Console.log(JSON.stringify(line)) : Console.log(text)
      const dispatcher = yield* OutboxDispatcher.make({
        pollMs: flags.pollMs,
        maxAttempts: flags.maxAttempts,
        concurrency: flags.concurrency,
        owner: `toolgate-dispatch-${process.pid}`,
        wakeups,
        onRound: (round) => {
          for (const k of Object.keys(totals) as Array<keyof typeof totals>) totals[k] += round[k]
          return print(
            { event: "round", ...round },
            `leased ${round.leased}: delivered ${round.delivered}, retried ${round.retried}, dead-lettered ${round.deadLettered}${
              round.leaseLost > 0 ? `, lease lost ${round.leaseLost}` : ""
            }`
          )
        }
      }).pipe(Effect.mapError((e) => new InputError({ reason: e.message })))
      yield* print(
        { event: "ready", wake: wakeups === undefined ? "poll" : "listen" },
        `dispatching the outbox (${wakeups === undefined ? `polling every ${flags.pollMs} ms` : "LISTEN/NOTIFY"})`
      )
      if (flags.once) {
        yield* dispatcher.drain
      } else {
        const stop = yield* Deferred.make<void>()
        const running = yield* Effect.forkChild(dispatcher.run({ stop: Deferred.await(stop) }), {
          startImmediately: true
        })
        // SIGTERM/SIGINT interrupt this fiber: stop claiming, let the round in progress settle
        const stopped = print(
          { event: "stopped", ...totals },
          `stopped: delivered ${totals.delivered}, retried ${totals.retried}, dead-lettered ${totals.deadLettered}`
        )
        yield* Fiber.join(running).pipe(
          Effect.onInterrupt(() =>
            Deferred.succeed(stop, undefined).pipe(
              Effect.andThen(Fiber.await(running)),
              Effect.andThen(stopped),
              // a graceful stop: the executable exits 0 (see bin.ts)
              Effect.andThen(Effect.sync(() => (process.exitCode = 0)))
            )
          )
        )
        return
      }
      yield* print(
        { event: "stopped", ...totals },
        `stopped: delivered ${totals.delivered}, retried ${totals.retried}, dead-lettered ${totals.deadLettered}`
      )
    })
    yield* body.pipe(
      Effect.scoped,
      Effect.provide(Layer.mergeAll(layer, FetchHttpClient.layer)),
      Effect.catchTag("DataDirInUse", (e) => Effect.fail(new InputError({ reason: e.message })))
    )
  })).pipe(
    Command.withDescription(
      "deliver the outbox's follow-up messages (at least once, keyed <downstream key>:<ordinal>) until SIGTERM"
    ),
    Command.annotate(Help.ExitCodes, [
      [0, "stopped by SIGTERM or SIGINT after settling the round in progress (or, with --once, nothing was due)"],
      [
        1,
        "a usage or input error (one line on stderr): a bad flag, no store in --data-dir, a --store that cannot be reached"
      ],
      [70, "an internal error (a bug)"]
    ])
  )

/**
 * `toolgate purge [--older-than D]`: deletes settled records past their retention (or settled
 * longer ago than D) and prints how many.
 *
 * @since 0.1.0
 * @category commands
 */
export const purge = Command.make("purge", {
  olderThan: Flag.String("older-than").pipe(
    Flag.withDescription(
      "delete settled records last changed longer ago than this (30s, 10m, 2h, 7d), even within their retention; default: those past their retention"
    ),
    Flag.optional
  ),
  scope: Flag.String("scope").pipe(Flag.withDescription("only this tenant's records"), Flag.optional),
  json: Flag.Boolean("json").pipe(Flag.withDescription("print {\"purged\": N}"), Flag.withDefault(false)),
  dataDir: operatorDataDirFlag,
  store: storeFlag
}, (flags) =>
  Effect.gen(function*() {
    let olderThanMs: number | undefined
    if (Option.isSome(flags.olderThan)) {
      olderThanMs = parseMs(flags.olderThan.value)
      if (olderThanMs === undefined) {
        return yield* new InputError({
          reason: `--older-than ${flags.olderThan.value}: not a duration (e.g. 30s, 10m, 7d)`
        })
      }
    }
    const { Records, StepJournal } = yield* modules.runtime
    yield* operate(
      flags.store,
      flags.dataDir,
      Effect.gen(function*() {
        const purged = yield* Records.purge({ olderThanMs, scope: Option.getOrUndefined(flags.scope) })
        // A retention purge (no --scope, no --older-than) also purges the agent turns' step
        // journals past their retention (a turn's steps together); the journal keys turns, not
        // the records' tenants, so a scoped or aged purge leaves it alone.
        const steps = Option.isNone(flags.scope) && olderThanMs === undefined
          ? yield* StepJournal.StepJournal.use((journal) => journal.purge())
          : undefined
        yield* Console.log(
          flags.json
            ? JSON.stringify(steps === undefined ? { purged } : { purged, journalSteps: steps })
            : `purged ${purged} settled record${purged === 1 ? "" : "s"}${
              Option.isSome(flags.scope) ? ` of scope ${flags.scope.value}` : ""
            } (${
              olderThanMs === undefined
                ? "past their retention"
                : `last changed more than ${flags.olderThan.pipe(Option.getOrElse(() => ""))} ago`
            }); records in progress or unknown are never purged${
              steps === undefined
                ? ""
                : `; ${steps} journaled step${steps === 1 ? "" : "s"} of agent turns past their retention`
            }`
        )
      })
    )
  })).pipe(
    Command.withDescription(
      "delete settled records past their retention (or older than --older-than) and print the count"
    ),
    operatorExitCodes("the purge ran (its count is printed, 0 included)", undefined)
  )

/**
 * The root `toolgate` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const toolgate = Command.make("toolgate").pipe(
  Command.withDescription("gate streamed LLM tool calls until they are complete, and execute each exactly once"),
  Command.annotate(Help.ExitCodes, [
    [0, "success"],
    [1, "a usage or input error (one line on stderr)"],
    [2, "a typed failure of what was asked (each command's help says which)"],
    [70, "an internal error (a bug)"]
  ]),
  Command.withSubcommands([demo, run, worker, intake, inspect, corpus, records, resolve, purge, dispatch])
)
