/**
 * `toolgate demo`: the fault-injection demo of `@toolgate/demo` (what `npm start` runs), in this
 * process on the embedded store, or with `--workers N` as a lead cluster of `toolgate worker`
 * processes on a PostgreSQL server (`@toolgate/demo/ClusterDemo`). Both are loaded when it runs.
 *
 * @since 0.1.0
 */
import { Command, Flag } from "effect/cli"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Help from "./Help.js"
import { dataDirFlag, InputError, modules, prepareStore, storeFlag } from "./internal/command.js"

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
