/**
 * The `toolgate` command line, a thin layer of commands over the packages: `demo` (the
 * fault-injection demo of `@toolgate/demo`), `run` (one prompt through the agent loop), `inspect`
 * (one captured stream) and `corpus` (every capture of a fixture corpus). Input errors (a missing
 * file, a directory, an empty or binary file, a file that is not UTF-8 or not an event stream, an
 * unknown provider, a bad tools file) print one line on stderr and exit 1; an inspected stream that
 * ends in a typed error exits 2.
 *
 * @since 0.1.0
 */
import { FinishProfile, Provider, ToolsFile, ToolValidator } from "@toolgate/adapters"
import { Demo } from "@toolgate/demo"
import { WebhookHandler } from "@toolgate/runtime"
import { Console, Effect, FileSystem, Option, Path, Redacted, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Capture from "./Capture.js"
import * as Corpus from "./Corpus.js"
import * as Inspect from "./Inspect.js"
import * as Run from "./Run.js"

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
    Command.withDescription("assemble one captured provider stream and print its text, tool calls or typed error")
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
    const rows = yield* Corpus.run(dir)
    if (rows.length === 0) {
      return yield* new InputError({ reason: `${dir}: holds no captures (provider folders of .sse files)` })
    }
    yield* Console.log(json ? JSON.stringify(rows) : `toolgate corpus: ${path.resolve(dir)}\n\n${Corpus.render(rows)}`)
    if (rows.some((r) => r.matchesExpected === false)) process.exitCode = 2
  })).pipe(Command.withDescription("inspect every capture of a fixture corpus and print one row each"))

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
  json: Flag.Boolean("json").pipe(Flag.withDescription("print the report as one JSON object"), Flag.withDefault(false))
}, ({ dataDir, json, leads, seed, store }) =>
  Effect.gen(function*() {
    if (leads < 1 || leads > maxLeads) {
      return yield* new InputError({ reason: `--leads must be between 1 and ${maxLeads}` })
    }
    const storeUrl = yield* prepareStore(store, dataDir)
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
  })).pipe(Command.withDescription("run inbound leads through toolgate and a naive pipeline under injected faults"))

/**
 * `toolgate run --base-url URL --model M --tools FILE --scope S [--max-steps N] "prompt"`: one
 * prompt through the agent loop against an OpenAI-compatible endpoint (or `--provider
 * anthropic`): the tools' results go back to the model until it answers.
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
    Flag.withDescription("TENANT/TURN (or TURN): the business event; the same scope replays, never re-executes")
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
  finishProfile: finishProfileFlag("strict for api.openai.com and api.anthropic.com, compatible for other URLs")
}, (flags) =>
  Effect.gen(function*() {
    if (!URL.canParse(flags.baseUrl) || !/^https?:$/.test(new URL(flags.baseUrl).protocol)) {
      return yield* new InputError({ reason: `--base-url ${flags.baseUrl}: not an http(s) URL` })
    }
    if (flags.maxTokens < 1) return yield* new InputError({ reason: "--max-tokens must be at least 1" })
    if (flags.maxSteps < 1 || flags.maxSteps > maxSteps) {
      return yield* new InputError({ reason: `--max-steps must be between 1 and ${maxSteps}` })
    }
    const toolsFile = yield* loadTools(flags.tools)
    const missing = toolsFile.tools.find((d) => d.webhook === undefined)
    if (missing !== undefined) {
      return yield* new InputError({ reason: `--tools: tool ${missing.name} has no "webhook" URL to call` })
    }
    // Each tool's parameters accept exactly what its JSON Schema accepts and pass the arguments
    // through unchanged (the webhook is sent what the model sent); its result is any JSON.
    const toolkit = ToolValidator.toToolkit(toolsFile.validator, {
      success: Schema.Json,
      failure: WebhookHandler.WebhookFailure
    })
    const slash = flags.scope.indexOf("/")
    const scope = slash < 0
      ? { tenant: "default", turn: flags.scope }
      : { tenant: flags.scope.slice(0, slash), turn: flags.scope.slice(slash + 1) }
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
    )
  )

/**
 * The root `toolgate` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const toolgate = Command.make("toolgate").pipe(
  Command.withDescription("gate streamed LLM tool calls until they are complete, and execute each exactly once"),
  Command.withSubcommands([demo, run, inspect, corpus])
)
