/**
 * The `toolgate` command line: `inspect` (one captured stream) and `corpus` (every capture of a
 * fixture corpus). Input errors (a missing file, a directory, an empty or binary file, an unknown
 * provider, a bad tools file) print one line on stderr and exit 1; an inspected stream that ends
 * in a typed error exits 2.
 *
 * @since 0.1.0
 */
import { Provider } from "@toolgate/adapters"
import { Console, Data, Effect, FileSystem, Option, Path, Stream } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { fileURLToPath } from "node:url"
import * as Corpus from "./Corpus.js"
import * as Inspect from "./Inspect.js"
import * as ToolsFile from "./ToolsFile.js"

/**
 * A usage or input error: reported as one line on stderr, exit code 1.
 *
 * @since 0.1.0
 * @category errors
 */
export class InputError extends Data.TaggedError("InputError")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

/**
 * Reads a capture for inspection, refusing what is not a text stream: a directory, an empty
 * file, or bytes that contain NUL or are not valid UTF-8.
 *
 * @since 0.1.0
 * @category input
 */
export const readCapture = Effect.fnUntraced(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  const info = yield* fs.stat(file).pipe(Effect.mapError(() => new InputError({ reason: `${file}: no such file` })))
  if (info.type === "Directory") return yield* new InputError({ reason: `${file}: is a directory, not a capture file` })
  const bytes = yield* fs.readFile(file).pipe(
    Effect.mapError((e) => new InputError({ reason: `${file}: cannot be read (${e.message})` }))
  )
  if (bytes.length === 0) return yield* new InputError({ reason: `${file}: is empty` })
  if (bytes.includes(0)) {
    return yield* new InputError({ reason: `${file}: is binary (contains NUL bytes), not a text stream` })
  }
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    return yield* new InputError({ reason: `${file}: is not valid UTF-8 text` })
  }
  return bytes
})

const loadToolkit = Effect.fnUntraced(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  const text = yield* fs.readFileString(file).pipe(
    Effect.mapError(() => new InputError({ reason: `${file}: tools file not found or unreadable` }))
  )
  const definitions = yield* ToolsFile.parse(text)
  return yield* ToolsFile.toToolkit(definitions)
}, Effect.mapError((e) => e._tag === "ToolsFileError" ? new InputError({ reason: `--tools: ${e.message}` }) : e))

const providerFlag = Flag.Literals("provider", ["auto", ...Provider.names]).pipe(
  Flag.withAlias("p"),
  Flag.withDescription("the wire format of the capture; auto recognises it from the first events"),
  Flag.withDefault("auto" as const)
)

/**
 * `toolgate inspect FILE [--provider P] [--json] [--tools FILE]`.
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
  )
}, ({ file, json, provider, tools }) =>
  Effect.gen(function*() {
    const bytes = yield* readCapture(file)
    const toolkit = Option.isSome(tools) ? yield* loadToolkit(tools.value) : undefined
    const result = yield* Inspect.inspect(Stream.succeed(bytes), {
      provider,
      toolkit,
      onDetected: (name) => {
        process.stderr.write(`toolgate: detected provider ${name}\n`)
      }
    })
    yield* Console.log(json ? JSON.stringify(result) : Inspect.render(result))
    if (result.outcome === "error") process.exitCode = 2
  })).pipe(
    Command.withDescription("assemble one captured provider stream and print its text, tool calls or typed error")
  )

const defaultCorpus = fileURLToPath(new URL("../../../test/fixtures", import.meta.url))

/**
 * `toolgate corpus [DIR]`: the main job of the foundation slice.
 *
 * @since 0.1.0
 * @category commands
 */
export const corpus = Command.make("corpus", {
  dir: Argument.String("dir").pipe(
    Argument.withDescription("a fixture corpus: provider folders of NAME.sse captures"),
    Argument.withDefault(defaultCorpus)
  ),
  json: Flag.Boolean("json").pipe(Flag.withDescription("print the rows as JSON"), Flag.withDefault(false))
}, ({ dir, json }) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
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
 * The root `toolgate` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const toolgate = Command.make("toolgate").pipe(
  Command.withDescription("gate streamed LLM tool calls until they are complete, and execute each exactly once"),
  Command.withSubcommands([inspect, corpus])
)
