/**
 * The operator's commands on a store (the `Records` calls and the `OutboxDispatcher` of
 * `@toolgate/runtime`, rendered by `Operator`): `records` (list or show), `resolve` (settle an
 * `unknown` record, fenced and audited), `purge` (settled records past their retention) and
 * `dispatch` (deliver the outbox). Refusals (no such record, an ambiguous prefix, not `unknown`,
 * changed meanwhile) print one line and exit 2. The runtime, the store and the HTTP client load
 * when a command runs. The four commands stay in one module (about 450 lines, mostly flag
 * descriptions) because they share the store flags, `operate` and the exit codes.
 *
 * @since 0.1.0
 */
import type { IdempotencyStore, Outbox } from "@toolgate/runtime"
import { Argument, Command, Flag } from "effect/cli"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { userInfo } from "node:os"
import * as Help from "./Help.js"
import { InputError, modules, storeFlag } from "./internal/command.js"
import { parseMs } from "./internal/duration.js"

type IdempotencyStoreStatus = IdempotencyStore.Status

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
      // the totals as they are when it runs (after a drain, or once a signal stopped the rounds)
      const stopped = Effect.suspend(() =>
        print(
          { event: "stopped", ...totals },
          `stopped: delivered ${totals.delivered}, retried ${totals.retried}, dead-lettered ${totals.deadLettered}`
        )
      )
      if (flags.once) {
        yield* dispatcher.drain
      } else {
        const stop = yield* Deferred.make<void>()
        const running = yield* Effect.forkChild(dispatcher.run({ stop: Deferred.await(stop) }), {
          startImmediately: true
        })
        // SIGTERM/SIGINT interrupt this fiber: stop claiming, let the round in progress settle
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
      yield* stopped
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
