/**
 * The `toolgate` executable. Usage and input errors print one line on stderr and exit 1; a
 * defect prints its cause and exits 70 (EX_SOFTWARE); SIGINT/SIGTERM exit 130 unless the command
 * stopped gracefully (`dispatch`: 0).
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Cause from "effect/Cause"
import { CliError, CliOutput, Command } from "effect/cli"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import { toolgate } from "./Cli.js"
import * as Help from "./Help.js"

const version = "0.1.0"

// One line per invocation error on stderr instead of the whole help text.
const presenter = CliOutput.layerPresenter({
  present: (event) =>
    event._tag === "InvalidInvocation"
      ? Console.error(
        `${event.commandPath.join(" ")}: ${
          event.errors.map((e) => e.message.trim().replace(/\s*\n\s*/g, " ")).join("; ")
        } (see --help)`
      )
      : CliOutput.defaultPresenter.present(event)
})

const main = Command.runWith(toolgate, { version })(process.argv.slice(2)).pipe(
  Effect.catchCause((cause) => {
    const error = Cause.findErrorOption(cause)
    if (error._tag === "Some") {
      process.exitCode = 1
      const e = error.value as { _tag?: string; message?: string }
      return CliError.isCliError(e) ? Effect.void : Console.error(`toolgate: ${e.message ?? String(e)}`)
    }
    if (Cause.hasInterruptsOnly(cause)) return Effect.void
    process.exitCode = 70
    return Console.error(`toolgate: internal error (a bug; please report it)\n${Cause.pretty(cause)}`)
  }),
  Effect.provide(Layer.mergeAll(NodeServices.layer, presenter, CliOutput.layer(Help.formatter())))
)

/**
 * SIGINT/SIGTERM interrupt `main` (exit 130), except for a command that stops its own work on a
 * signal and says it ended well by setting `process.exitCode = 0` (`toolgate dispatch`).
 */
const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) && process.exitCode === 0
    ? onExit(0)
    : Runtime.defaultTeardown(exit, onExit)

NodeRuntime.runMain(main, { disableErrorReporting: true, teardown })
