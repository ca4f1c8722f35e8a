/**
 * What the command modules share: the usage/input error (`InputError`, exit 1), the lazily loaded
 * modules a command needs when it runs (`modules`: none of them is imported statically, so
 * `--help` and `inspect` load no store, runtime, demo, HTTP transport or validator), and the flags
 * and checks more than one command uses (`--provider`, `--finish-profile`, `--store`,
 * `--data-dir`, durations, the tools file).
 *
 * @since 0.1.0
 */
import * as FinishProfile from "@toolgate/adapters/FinishProfile"
import * as Provider from "@toolgate/adapters/Provider"
import { Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { parseMs } from "./duration.js"

/**
 * The modules a command needs beyond its flags, loaded when it runs (`import()`): `--help` loads
 * none of them, and `inspect` and `corpus` never load the store, the runtime, the demo, the HTTP
 * stack or the JSON Schema validator (unless `--tools` is given). Start-up time and memory are in
 * `bench/RESULTS.md`; `test/cli-modules.test.ts` checks what each command loads.
 */
export const modules = {
  inspect: Effect.promise(() => import("../Inspect.js")),
  corpus: Effect.promise(() => import("../Corpus.js")),
  run: Effect.promise(() => import("../Run.js")),
  operator: Effect.promise(() => import("../Operator.js")),
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

export const loadTools = Effect.fnUntraced(function*(file: string) {
  const ToolsFile = yield* modules.toolsFile
  const fs = yield* FileSystem.FileSystem
  const text = yield* fs.readFileString(file).pipe(
    Effect.mapError(() => new InputError({ reason: `${file}: tools file not found or unreadable` }))
  )
  return yield* ToolsFile.parse(text)
}, Effect.mapError((e) => e._tag === "ToolDefinitionError" ? new InputError({ reason: `--tools: ${e.message}` }) : e))

export const providerFlag = Flag.Literals("provider", ["auto", ...Provider.names]).pipe(
  Flag.withAlias("p"),
  Flag.withDescription("the wire format of the capture; auto recognises it from the first events"),
  Flag.withDefault("auto" as const)
)

export const finishProfileFlag = (defaultText: string) =>
  Flag.Literals("finish-profile", FinishProfile.names).pipe(
    Flag.withDescription(
      `which finish reasons release tool calls: strict (only tool_calls / tool_use; stop or end_turn with calls is UnexpectedFinishReason) or compatible (stop and end_turn too, for servers that send them with calls); default ${defaultText}`
    ),
    Flag.optional
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

export const dataDirFlag = Flag.String("data-dir").pipe(
  Flag.withDescription("where the embedded PGlite store lives (default .toolgate)"),
  Flag.withDefault(".toolgate")
)

export const storeFlag = Flag.String("store").pipe(
  Flag.withDescription("a postgres:// URL: use a PostgreSQL server instead of the embedded store"),
  Flag.optional
)

/** The most steps `run --max-steps` allows (the agent's own bound). */
export const maxSteps = 1_000

/** A duration flag: `500ms`, `30s`, `10m`, `2h`, `7d`. */
export const durationFlag = (name: string, description: string, fallback: string) =>
  Flag.String(name).pipe(
    Flag.withDescription(`${description} (e.g. 500ms, 30s, 10m; default ${fallback})`),
    Flag.withDefault(fallback)
  )

/** The milliseconds of a duration flag, > 0, or a usage error naming the flag. */
export const positiveMs = (flag: string, text: string) => {
  const ms = parseMs(text)
  return ms === undefined || !(ms > 0)
    ? Effect.fail(new InputError({ reason: `--${flag} ${text}: not a duration > 0 (e.g. 500ms, 30s, 10m, 2h)` }))
    : Effect.succeed(ms)
}
