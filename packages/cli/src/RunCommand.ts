/**
 * `toolgate run`: one prompt through the agent loop of `@toolgate/runtime` (`Run`) against an
 * OpenAI-compatible or Anthropic endpoint, each tool performed by its webhook. This module checks
 * the flags and the tools file; the runtime, the store and the validator load when it runs.
 *
 * @since 0.1.0
 */
import { Argument, Command, Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Help from "./Help.js"
import {
  dataDirFlag,
  durationFlag,
  finishProfileFlag,
  InputError,
  loadTools,
  maxSteps,
  modules,
  positiveMs,
  prepareStore,
  storeFlag
} from "./internal/command.js"

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
