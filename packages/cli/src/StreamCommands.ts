/**
 * The stream commands: `inspect` (one captured provider stream: its text, tool calls or typed
 * error) and `corpus` (every capture of a fixture corpus against its `expected.json`). They load
 * the decoders and the assembler only (`Inspect`, `Corpus`); the JSON Schema validator only with
 * `inspect --tools`.
 *
 * @since 0.1.0
 */
import { Argument, Command, Flag } from "effect/cli"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as Capture from "./Capture.js"
import * as Help from "./Help.js"
import { finishProfileFlag, InputError, loadTools, modules, providerFlag } from "./internal/command.js"

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
