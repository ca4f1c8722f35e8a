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
 * This module is the root `toolgate` command; the commands live by group, each loading what it
 * needs only when it runs (`test/cli-modules.test.ts`): `StreamCommands` (inspect, corpus),
 * `RunCommand`, `DemoCommand`, `ClusterCommands` (worker, intake) and `OperatorCommands` (records,
 * resolve, purge, dispatch), sharing `internal/command.ts` (`InputError`, the common flags). It
 * re-exports them all, so `Cli.run`, `Cli.InputError`, … are where they were.
 *
 * @since 0.1.0
 */
import { Command } from "effect/cli"
import { intake, worker } from "./ClusterCommands.js"
import { demo } from "./DemoCommand.js"
import * as Help from "./Help.js"
import { dispatch, purge, records, resolve } from "./OperatorCommands.js"
import { run } from "./RunCommand.js"
import { corpus, inspect } from "./StreamCommands.js"

export {
  /**
   * @since 0.1.0
   * @category commands
   */
  intake,
  /**
   * @since 0.1.0
   * @category commands
   */
  worker
} from "./ClusterCommands.js"
export {
  /**
   * @since 0.1.0
   * @category commands
   */
  demo
} from "./DemoCommand.js"
export {
  /**
   * @since 0.1.0
   * @category errors
   */
  InputError,
  /**
   * @since 0.1.0
   * @category input
   */
  prepareStore
} from "./internal/command.js"
export {
  /**
   * @since 0.1.0
   * @category commands
   */
  dispatch,
  /**
   * @since 0.1.0
   * @category commands
   */
  purge,
  /**
   * @since 0.1.0
   * @category commands
   */
  records,
  /**
   * @since 0.1.0
   * @category commands
   */
  resolve
} from "./OperatorCommands.js"
export {
  /**
   * @since 0.1.0
   * @category commands
   */
  run
} from "./RunCommand.js"
export {
  /**
   * @since 0.1.0
   * @category commands
   */
  corpus,
  /**
   * @since 0.1.0
   * @category commands
   */
  inspect
} from "./StreamCommands.js"

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
