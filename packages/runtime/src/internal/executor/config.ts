/**
 * The executor's configuration, resolved and validated once at construction: the options and
 * every handler's overrides checked against their rules (`InvalidExecutorOptions` for the first
 * one broken), then one `Entry` per tool with its effective timeout, lease, heartbeat, attempts
 * and JSON codecs. Also the per-execution state (`Run`) and the handler context the other
 * executor modules share.
 *
 * @internal
 */
import { IdempotencyKey, KeyPolicy, type ToolCall } from "@toolgate/core"
import type { Tool, Toolkit } from "effect/ai"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import type * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { type ExecutorOption, InvalidExecutorOptions } from "../../ExecutionError.js"
import * as ExecutionMetrics from "../../ExecutionMetrics.js"
import type * as IdempotencyStore from "../../IdempotencyStore.js"
import { defaultRetentionMs, type Lease, maxResultBytes, type Recovery } from "../../IdempotencyStore.js"
import type * as ToolExecutor from "../../ToolExecutor.js"
import type { Handler, HandlerContext } from "../../ToolHandler.js"

/** The shortest lease: below it a store round trip plus a heartbeat does not fit in one lease. @internal */
export const minLeaseMs = 100

/** The shortest heartbeat interval: more often is store load, not safety. @internal */
export const minHeartbeatMs = 10

/** One tool's effective configuration. @internal */
export interface Entry {
  readonly name: string
  readonly handler: Handler<Tool.Any, unknown>
  /** The key policy: the handler's, else the tool's annotation, else none (version-1 keys). */
  readonly policy: KeyPolicy.KeyPolicy | undefined
  readonly recovery: Recovery
  readonly timeoutMs: number
  readonly leaseMs: number
  readonly heartbeatMs: number
  readonly maxAttempts: number
  readonly encodeSuccess: (u: unknown) => Exit.Exit<unknown, Schema.SchemaError>
  readonly decodeSuccess: (u: unknown) => Exit.Exit<unknown, Schema.SchemaError>
  readonly encodeFailure: (u: unknown) => Exit.Exit<unknown, Schema.SchemaError>
  readonly decodeFailure: (u: unknown) => Exit.Exit<unknown, Schema.SchemaError>
  readonly duration: Metric.Metric<Duration.Duration, Metric.HistogramState>
}

/** The executor-wide configuration. @internal */
export interface Config {
  readonly entries: ReadonlyMap<string, Entry>
  readonly retentionMs: number
  /** The executor's limit of a stored result or failure, ≤ the store's 256 KiB. */
  readonly maxBytes: number
  readonly waitSchedule: Schedule.Schedule<unknown, unknown>
  readonly storeRetry: Schedule.Schedule<unknown, unknown>
  readonly concurrency: number
}

/** What the executor's modules share. @internal */
export interface Env {
  readonly store: IdempotencyStore.Service
  readonly config: Config
  /** The handlers' own services, captured at construction (`undefined`: none). */
  readonly services: Context.Context<unknown> | undefined
}

/** The state of one execution, shared by the executor's steps (one object, no closures per call). @internal */
export interface Run {
  readonly call: ToolCall.ValidatedToolCall
  readonly entry: Entry
  readonly key: string
  readonly fingerprint: string
  /** The arguments' canonical JSON text (what the record keeps; `null` when over the store's limit). */
  readonly arguments: string | null
  readonly tenant: string
  readonly owner: string
  /** The executor clock's reading when the execution began (its first claim), ms. */
  started: number
  /** How long the handler ran (executor clock, ms; `undefined`: it did not run). */
  handlerMs: number | undefined
  waited: boolean
  /** A running handler was interrupted by the caller and the record parked `unknown`. */
  parkedOnInterrupt: boolean
}

/** The handler context; the AbortController is created only when a handler reads `signal`. @internal */
export class LiveContext implements HandlerContext {
  readonly key: string
  readonly downstreamKey: string
  readonly fence: bigint
  readonly attempt: number
  readonly generation: number
  readonly takeover: boolean
  readonly toolCallId: string | null
  private controller: AbortController | undefined = undefined
  private aborted = false
  constructor(run: Run, lease: Lease) {
    this.key = run.key
    this.downstreamKey = IdempotencyKey.downstreamKey(run.key, lease.generation)
    this.fence = lease.fence
    this.attempt = lease.attempt
    this.generation = lease.generation
    this.takeover = lease.kind === "Takeover"
    this.toolCallId = run.call.id
  }
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController()
      if (this.aborted) this.controller.abort()
    }
    return this.controller.signal
  }
  /** Aborts the signal, including one first read after the interruption. */
  abort(): void {
    this.aborted = true
    this.controller?.abort()
  }
}

const render = (value: unknown): string => {
  const text = typeof value === "number" || value === undefined ? String(value) : JSON.stringify(value) ?? "?"
  return text.length <= 40 ? text : `${text.slice(0, 39)}…`
}

const isNumber = (u: unknown): u is number => typeof u === "number" && !Number.isNaN(u)

/** A rule: the words of the error and the check. */
interface Rule {
  readonly rule: string
  readonly holds: (value: number) => boolean
}

const atLeast = (minimum: number, unit: string): Rule => ({
  rule: `a finite number ≥ ${minimum}${unit}`,
  holds: (n) => Number.isFinite(n) && n >= minimum
})
const integerFrom = (minimum: number): Rule => ({
  rule: `an integer ≥ ${minimum}`,
  holds: (n) => Number.isSafeInteger(n) && n >= minimum
})
const rules = {
  leaseMs: atLeast(minLeaseMs, " ms"),
  timeoutMs: { rule: "a number of ms > 0 (Infinity: no timeout)", holds: (n: number) => n > 0 },
  retentionMs: { rule: "a finite number of ms > 0", holds: (n: number) => Number.isFinite(n) && n > 0 },
  maxAttempts: {
    rule: "an integer from 1 to 2147483647",
    holds: (n: number) => Number.isInteger(n) && n >= 1 && n <= 2_147_483_647
  },
  maxResultBytes: integerFrom(1),
  waitMs: atLeast(0, " ms"),
  storeRetries: integerFrom(0),
  concurrency: integerFrom(1)
} satisfies Record<string, Rule>

const jsonCodec = (schema: Schema.Top) => Schema.toCodecJson(schema as Schema.Codec<unknown, unknown>)

/**
 * Resolves the options and the handlers of a toolkit into a {@link Config}, or the first rule
 * broken. The rules are documented on `ToolExecutor.Options`.
 *
 * @internal
 */
export const configure = (
  toolkit: Toolkit.Toolkit<Record<string, Tool.Any>>,
  handlers: Record<string, Handler<Tool.Any, unknown> | undefined>,
  options: ToolExecutor.Options
): Result.Result<Config, InvalidExecutorOptions> => {
  const invalid = (option: ExecutorOption, tool: string | null, value: unknown, rule: string) =>
    Result.fail(new InvalidExecutorOptions({ option, tool, value: render(value), rule }))
  /** The value when given and valid, the default when not given, or the error. */
  const check = (
    option: keyof typeof rules,
    value: unknown,
    fallback: number,
    tool: string | null = null
  ): Result.Result<number, InvalidExecutorOptions> =>
    value === undefined
      ? Result.succeed(fallback)
      : isNumber(value) && rules[option].holds(value)
      ? Result.succeed(value)
      : invalid(option, tool, value, rules[option].rule)

  return Result.gen(function*() {
    const leaseMs = yield* check("leaseMs", options.leaseMs, 30_000)
    const timeoutMs = yield* check("timeoutMs", options.timeoutMs, 60_000)
    const retentionMs = yield* check("retentionMs", options.retentionMs, defaultRetentionMs)
    const maxAttempts = yield* check("maxAttempts", options.maxAttempts, 3)
    const maxBytes = yield* check("maxResultBytes", options.maxResultBytes, maxResultBytes)
    const waitMs = yield* check("waitMs", options.waitMs, 10_000)
    const storeRetries = yield* check("storeRetries", options.storeRetries, 3)
    const concurrency = yield* check("concurrency", options.concurrency, 8)
    const heartbeat = options.heartbeatMs
    if (
      heartbeat !== undefined && !(isNumber(heartbeat) && Number.isFinite(heartbeat) && heartbeat >= minHeartbeatMs)
    ) {
      return yield* invalid("heartbeatMs", null, heartbeat, `a finite number ≥ ${minHeartbeatMs} ms`)
    }

    const entries = new Map<string, Entry>()
    for (const name of Object.keys(toolkit.tools)) {
      const tool: Tool.Any = toolkit.tools[name]
      const handler = handlers[name]
      if (handler === undefined || typeof handler.run !== "function") {
        return yield* invalid("handlers", name, handler, "a handler with a run function")
      }
      const recovery = handler.recovery ?? "manual"
      if (recovery === "reconcile" && typeof handler.probe !== "function") {
        return yield* invalid("probe", name, handler.probe, "a function when recovery is reconcile")
      }
      let policy = Context.get(tool.annotations, IdempotencyKey.Policy)
      if (handler.keyPolicy !== undefined) {
        const made = KeyPolicy.make(handler.keyPolicy, name)
        if (Result.isFailure(made)) {
          return yield* invalid("keyPolicy", name, handler.keyPolicy, `a key policy: ${made.failure.message}`)
        }
        policy = made.success
      }
      const handlerLease = yield* check("leaseMs", handler.leaseMs, leaseMs, name)
      const heartbeatMs = heartbeat ?? Math.floor(handlerLease / 3)
      if (heartbeatMs > handlerLease / 2) {
        // one failed beat must leave time for another before the lease lapses
        return yield* invalid("heartbeatMs", name, heartbeatMs, `at most half the lease (${handlerLease} ms)`)
      }
      entries.set(name, {
        name,
        handler,
        policy,
        recovery,
        timeoutMs: yield* check("timeoutMs", handler.timeoutMs, timeoutMs, name),
        leaseMs: handlerLease,
        heartbeatMs,
        maxAttempts: yield* check("maxAttempts", handler.maxAttempts, maxAttempts, name),
        encodeSuccess: Schema.encodeUnknownExit(jsonCodec(tool.successSchema)),
        decodeSuccess: Schema.decodeUnknownExit(jsonCodec(tool.successSchema)),
        encodeFailure: Schema.encodeUnknownExit(jsonCodec(tool.failureSchema)),
        decodeFailure: Schema.decodeUnknownExit(jsonCodec(tool.failureSchema)),
        duration: Metric.withAttributes(ExecutionMetrics.handlerDuration, { tool: name })
      })
    }
    return {
      entries,
      retentionMs,
      maxBytes: Math.min(maxBytes, maxResultBytes),
      waitSchedule: (options.wait ??
        Schedule.jittered(Schedule.min([Schedule.exponential("10 millis", 1.5), Schedule.spaced("250 millis")])))
        .pipe(Schedule.upTo({ duration: Duration.millis(waitMs) })),
      storeRetry: Schedule.exponential("50 millis", 2).pipe(Schedule.upTo({ times: storeRetries })),
      concurrency
    }
  })
}
