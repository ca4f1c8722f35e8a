/**
 * The tool executor: runs each validated tool call through the `IdempotencyStore` so that its
 * effect happens once, under client retries that bring fresh provider tool-call ids, duplicate
 * deliveries, concurrent workers, and crashes between the external call and recording it.
 *
 * `execute(call, { scope })`:
 *
 * 1. Derives the intent key and fingerprint (`@toolgate/core` `IdempotencyKey`).
 * 2. Claims the key. A won claim runs the tool's handler under a timeout, with a heartbeat fiber
 *    that extends the lease (every `leaseMs / 3`) and interrupts the handler if the lease is lost,
 *    then records the outcome with a fenced write and returns `Executed(result)`.
 * 3. A settled record answers at once: `Replayed(result)`, or the cached failure, without calling
 *    the handler. Another fingerprint fails with `IdempotencyKeyReused` and never executes.
 * 4. A live lease elsewhere waits (a bounded `Schedule`, polling the claim) and then fails with
 *    `ExecutionInProgress`.
 *
 * Handler failures are classified three ways (`research/idempotency.md` c.1 #2): `not_applied`
 * (the record is released; calling again may run again), `applied` (terminal; cached and
 * replayed), ambiguous (parked `unknown`; `OutcomeUnknown`). A timeout is treated as dispatched:
 * `ExecutionTimeout`, record `unknown`, never released. Defects and interruptions of a running
 * handler park too. Recovery of a record whose previous attempt may have applied follows the
 * tool's mode: `reexecute` (run again with the same downstream key), `reconcile` (probe the
 * downstream by that key first), `manual` (park; `OutcomeUnknown` until resolved).
 *
 * Handlers are supplied per tool name, typed from an `effect/ai` `Toolkit` — the same shape as
 * `Toolkit.of`, plus the execution context and the recovery policy:
 *
 * ```ts
 * const Crm = Toolkit.make(CreateTask, UpdateStage)
 * const Executor = ToolExecutor.layer(Crm, {
 *   CreateTask: {
 *     recovery: "reexecute", // the CRM deduplicates on our key
 *     run: (params, ctx) => crm.createTask(params, { idempotencyKey: ctx.downstreamKey, signal: ctx.signal })
 *   },
 *   UpdateStage: {
 *     recovery: "reconcile",
 *     probe: (params, ctx) => crm.findByExternalId(ctx.downstreamKey),
 *     run: (params, ctx) => crm.updateStage(params, ctx.downstreamKey)
 *   }
 * })
 * // then, for each validated call of a turn:
 * ToolExecutor.execute(call, { scope: { tenant, turn } })
 * ```
 *
 * @since 0.1.0
 */
import { IdempotencyKey, type ToolCall } from "@toolgate/core"
import {
  Cause,
  Clock,
  Context,
  Data,
  Duration,
  Effect,
  Exit,
  Fiber,
  Layer,
  Metric,
  Option,
  Result,
  Schedule,
  Schema
} from "effect"
import type { Tool, Toolkit } from "effect/ai"
import { createHash, randomUUID } from "node:crypto"
import {
  AttemptsExhausted,
  type ExecutionError,
  ExecutionInProgress,
  ExecutionTimeout,
  IdempotencyKeyReused,
  LeaseLost,
  OutcomeUnknown,
  ResultTooLarge,
  type StoreUnavailable,
  ToolExecutionFailed
} from "./ExecutionError.js"
import * as ExecutionMetrics from "./ExecutionMetrics.js"
import {
  defaultRetentionMs,
  IdempotencyStore,
  type Lease,
  maxResultBytes,
  type Recovery,
  type StoredRecord
} from "./IdempotencyStore.js"

/**
 * What a handler receives besides its parameters.
 *
 * - `key`: the intent key (`tg1:sha256:…`), for logs.
 * - `downstreamKey`: the key to send downstream (an `Idempotency-Key` header, an external id, a
 *   marker on the created object). Identical across attempts and takeovers of the record.
 * - `fence`: this attempt's fencing token; strictly larger than every earlier attempt's. A handler
 *   that writes to its own database can guard with `… WHERE last_fence < $fence` (Kleppmann).
 * - `attempt`: 1 for the first attempt of this record generation.
 * - `generation`: bumps when the key is reused after retention.
 * - `takeover`: a previous attempt may have applied the effect (its lease expired, or its outcome
 *   was unknown); the downstream must deduplicate on `downstreamKey`.
 * - `toolCallId`: the provider's id of this delivery, for logs only (it changes on retries).
 * - `signal`: aborted when the handler is interrupted (timeout, lease lost, caller interrupted).
 *
 * @since 0.1.0
 * @category models
 */
export interface HandlerContext {
  readonly key: string
  readonly downstreamKey: string
  readonly fence: bigint
  readonly attempt: number
  readonly generation: number
  readonly takeover: boolean
  readonly toolCallId: string | null
  readonly signal: AbortSignal
}

/**
 * A handler failure known not to have applied (connection refused, 429/503 answered before any
 * effect). The record is released; a later call may run the handler again, within `maxAttempts`.
 * `detail` is stored; keep argument values out of it.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotApplied extends Schema.TaggedError<NotApplied>()("NotApplied", {
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {
  override get message(): string {
    return `not applied: ${this.detail}`
  }
}

/**
 * A handler failure after which the downstream may or may not have applied the call (a read
 * timeout or connection reset after the request was sent). The record is parked `unknown`.
 *
 * @since 0.1.0
 * @category errors
 */
export class Ambiguous extends Schema.TaggedError<Ambiguous>()("Ambiguous", {
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {
  override get message(): string {
    return `outcome ambiguous: ${this.detail}`
  }
}

/**
 * How a failure of the tool's own failure type relates to the outside world (see
 * `ExecutionError.FailureClass`; `ambiguous` parks the record).
 *
 * @since 0.1.0
 * @category models
 */
export type Classification = "not_applied" | "applied" | "ambiguous"

/**
 * What a handler may fail with: its tool's failure type, `NotApplied` or `Ambiguous`.
 *
 * @since 0.1.0
 * @category models
 */
export type HandlerError<T extends Tool.Any> = Tool.Failure<T> | NotApplied | Ambiguous

interface HandlerBase<T extends Tool.Any, R> {
  /** Performs the call. */
  readonly run: (
    params: Tool.Parameters<T>,
    context: HandlerContext
  ) => Effect.Effect<Tool.Success<T>, HandlerError<T>, R>
  /** Classifies failures of the tool's failure type. Default: `applied` (terminal, cached). */
  readonly classify?: ((failure: Tool.Failure<T>) => Classification) | undefined
  /** Handler timeout in ms (overrides the executor's). */
  readonly timeoutMs?: number | undefined
  /** Lease length in ms (overrides the executor's). */
  readonly leaseMs?: number | undefined
  /** Attempts allowed per record generation (overrides the executor's). */
  readonly maxAttempts?: number | undefined
  /** A downstream reference to store with a result (a CRM object id), for reconciliation. */
  readonly externalRef?: ((result: Tool.Success<T>) => string | null) | undefined
}

/**
 * The handler of one tool. `recovery` (default `manual`) says what happens when a previous
 * attempt may have applied; `reconcile` requires `probe`, which looks the effect up downstream by
 * `context.downstreamKey` and returns its result when it is there.
 *
 * @since 0.1.0
 * @category models
 */
export type Handler<T extends Tool.Any, R = never> =
  & HandlerBase<T, R>
  & (
    | { readonly recovery?: "reexecute" | "manual" | undefined; readonly probe?: undefined }
    | {
      readonly recovery: "reconcile"
      readonly probe: (
        params: Tool.Parameters<T>,
        context: HandlerContext
      ) => Effect.Effect<Option.Option<Tool.Success<T>>, HandlerError<T>, R>
    }
  )

/**
 * One handler per tool of a toolkit, keyed by tool name.
 *
 * @since 0.1.0
 * @category models
 */
export type Handlers<Tools extends Record<string, Tool.Any>> = {
  readonly [K in keyof Tools]: Handler<Tools[K], any>
}

/**
 * The services the handlers of `H` require.
 *
 * @since 0.1.0
 * @category models
 */
export type HandlersServices<H> = {
  [K in keyof H]: H[K] extends { readonly run: (...args: ReadonlyArray<any>) => Effect.Effect<any, any, infer R> } ? R
    : never
}[keyof H]

/**
 * Executor options. Durations in milliseconds, sizes in bytes.
 *
 * - `leaseMs` (30,000): lease per claim, extended by the heartbeat every `heartbeatMs`
 *   (default `leaseMs / 3`) while the handler runs.
 * - `timeoutMs` (60,000): handler timeout; elapsing is `ExecutionTimeout` and `unknown`.
 * - `retentionMs` (24 h): how long settled records are kept (≥ the client's retry window and the
 *   downstream's dedupe window).
 * - `maxAttempts` (3): attempts per record generation (releases and takeovers count).
 * - `maxResultBytes` (262,144): limit of a result's JSON text; larger is `ResultTooLarge`.
 * - `waitMs` (10,000): how long a call waits for another worker's live lease; `wait` is the
 *   polling schedule (default: exponential from 10 ms ×1.5, at most 250 ms apart, jittered).
 * - `storeRetries` (3): retries, 50 ms apart doubling, of a store operation that failed with a
 *   retryable `StoreUnavailable` (fenced writes and same-owner claims are safe to repeat).
 * - `concurrency` (8): how many calls of a turn `executeAll` runs at once.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly leaseMs?: number | undefined
  readonly heartbeatMs?: number | undefined
  readonly timeoutMs?: number | undefined
  readonly retentionMs?: number | undefined
  readonly maxAttempts?: number | undefined
  readonly maxResultBytes?: number | undefined
  readonly waitMs?: number | undefined
  readonly wait?: Schedule.Schedule<unknown, unknown> | undefined
  readonly storeRetries?: number | undefined
  readonly concurrency?: number | undefined
}

/**
 * Options of one execution.
 *
 * - `scope`: tenant + turn (see `IdempotencyKey.Scope`).
 * - `ordinal`: the call's occurrence ordinal in the turn (default 0; `executeAll` computes it).
 * - `strategy`: `"intent"` (default) or `"providerId"` (documented to double-execute).
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecuteOptions {
  readonly scope: IdempotencyKey.Scope
  readonly ordinal?: number | undefined
  readonly strategy?: IdempotencyKey.Strategy | undefined
}

/**
 * Options of a turn's execution: those of {@link ExecuteOptions} but the ordinal, plus
 * `occurrences` to share ordinals across the model steps of one turn, and `concurrency`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecuteAllOptions {
  readonly scope: IdempotencyKey.Scope
  readonly strategy?: IdempotencyKey.Strategy | undefined
  readonly occurrences?: IdempotencyKey.Occurrences | undefined
  readonly concurrency?: number | undefined
}

/**
 * The handler ran now and its outcome was recorded. `encoded` is the result as stored (JSON).
 * `reconciled`: a takeover found the effect downstream through the probe and did not run the
 * handler.
 *
 * @since 0.1.0
 * @category models
 */
export interface Executed<A> {
  readonly _tag: "Executed"
  readonly value: A
  readonly encoded: unknown
  readonly key: string
  readonly downstreamKey: string
  readonly attempt: number
  readonly reconciled: boolean
}

/**
 * The recorded result of an earlier execution; the handler did not run. `waited`: this call
 * waited for another worker's lease first.
 *
 * @since 0.1.0
 * @category models
 */
export interface Replayed<A> {
  readonly _tag: "Replayed"
  readonly value: A
  readonly encoded: unknown
  readonly key: string
  readonly waited: boolean
}

/**
 * The success of an execution.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome<A> = Executed<A> | Replayed<A>

/**
 * The executor service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Executes one validated call exactly once per key. Fails with an `ExecutionError`. */
  readonly execute: <T extends Tool.Any>(
    call: ToolCall.ValidatedToolCall<T>,
    options: ExecuteOptions
  ) => Effect.Effect<Outcome<Tool.Success<T>>, ExecutionError>
  /**
   * Executes the calls of one turn with bounded concurrency, ordinals assigned in call order;
   * one result per call, in call order (a failure never hides another call's executed result).
   */
  readonly executeAll: (
    calls: ReadonlyArray<ToolCall.ValidatedToolCall>,
    options: ExecuteAllOptions
  ) => Effect.Effect<ReadonlyArray<Result.Result<Outcome<unknown>, ExecutionError>>>
}

/**
 * The tool executor service.
 *
 * @since 0.1.0
 * @category services
 */
export class ToolExecutor extends Context.Service<ToolExecutor, Service>()("@toolgate/runtime/ToolExecutor") {}

/** A timeout of the handler (internal signal). */
class HandlerTimedOut extends Data.TaggedError("HandlerTimedOut")<{}> {}

/** A live lease elsewhere (internal signal for the wait schedule). */
class Busy extends Data.TaggedError("Busy")<{ readonly retryAfterMs: number }> {}

/** SHA-256 through `node:crypto`: synchronous, and about 8× cheaper per key than Web Crypto. */
const nodeDigest: IdempotencyKey.SyncDigest = (text) => createHash("sha256").update(text).digest("hex")

const excerpt = (text: string): string => text.length <= 200 ? text : `${text.slice(0, 199)}…`

const defectDetail = (cause: Cause.Cause<unknown>): string => {
  const defect = cause.reasons.find(Cause.isDieReason)?.defect
  return excerpt(defect instanceof Error ? `${defect.name}: ${defect.message}` : String(defect))
}

const isBusy = (e: { readonly _tag: string }): e is Busy => e._tag === "Busy"

const isRetryable = (e: { readonly _tag: string }): boolean =>
  e._tag === "StoreUnavailable" && (e as StoreUnavailable).retryable

interface Entry {
  readonly name: string
  readonly handler: Handler<Tool.Any, unknown>
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

/** The state of one execution, shared by the steps below (one object, no closures per call). */
interface Run {
  readonly call: ToolCall.ValidatedToolCall
  readonly entry: Entry
  readonly key: string
  readonly fingerprint: string
  readonly tenant: string
  readonly owner: string
  readonly started: number
  waited: boolean
}

/** The handler context; the AbortController is created only when a handler reads `signal`. */
class LiveContext implements HandlerContext {
  readonly key: string
  readonly downstreamKey: string
  readonly fence: bigint
  readonly attempt: number
  readonly generation: number
  readonly takeover: boolean
  readonly toolCallId: string | null
  private controller: AbortController | undefined = undefined
  constructor(run: Run, lease: Lease) {
    this.key = run.key
    this.downstreamKey = IdempotencyKey.downstreamKey(run.key, lease.generation)
    this.fence = lease.fence
    this.attempt = lease.attempt
    this.generation = lease.generation
    this.takeover = lease.kind === "Takeover"
    this.toolCallId = run.call.id
  }
  private aborted = false
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

const jsonCodec = (schema: Schema.Top) => Schema.toCodecJson(schema as Schema.Codec<unknown, unknown>)

/** The tool's classification of its own failure; a classifier that throws cannot say, so ambiguous. */
const classifyOwn = (entry: Entry, error: unknown): Classification => {
  try {
    return entry.handler.classify?.(error) ?? "applied"
  } catch {
    return "ambiguous"
  }
}

const lastFailure = (cause: Cause.Cause<unknown>): unknown => cause.reasons.find(Cause.isFailReason)?.error

/**
 * Builds an executor for a toolkit's handlers over the `IdempotencyStore` in context. The
 * handlers' own services are captured here and provided to every run. Dies when a tool of the
 * toolkit has no handler (a configuration error).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <Tools extends Record<string, Tool.Any>, H extends Handlers<Tools>>(
  toolkit: Toolkit.Toolkit<Tools>,
  handlers: H,
  options: Options = {}
): Effect.Effect<Service, never, IdempotencyStore | HandlersServices<H>> =>
  Effect.gen(function*() {
    const store = yield* IdempotencyStore
    const services = yield* Effect.context<HandlersServices<H>>()
    const provideServices = services.mapUnsafe.size > 0
    const leaseMs = options.leaseMs ?? 30_000
    const retentionMs = options.retentionMs ?? defaultRetentionMs
    const maxBytes = Math.min(options.maxResultBytes ?? maxResultBytes, maxResultBytes)
    const waitMs = options.waitMs ?? 10_000
    const waitSchedule = (options.wait ??
      Schedule.jittered(Schedule.min([Schedule.exponential("10 millis", 1.5), Schedule.spaced("250 millis")])))
      .pipe(Schedule.upTo({ duration: Duration.millis(waitMs) }))
    const storeRetry = Schedule.exponential("50 millis", 2).pipe(Schedule.upTo({ times: options.storeRetries ?? 3 }))
    const defaultConcurrency = options.concurrency ?? 8

    const entries = new Map<string, Entry>()
    for (const name of Object.keys(toolkit.tools)) {
      const tool: Tool.Any = toolkit.tools[name]
      const handler = (handlers as Record<string, Handler<Tool.Any, unknown> | undefined>)[name]
      if (handler === undefined) return yield* Effect.die(new Error(`ToolExecutor: no handler for tool ${name}`))
      const handlerLease = handler.leaseMs ?? leaseMs
      entries.set(name, {
        name,
        handler,
        recovery: handler.recovery ?? "manual",
        timeoutMs: handler.timeoutMs ?? options.timeoutMs ?? 60_000,
        leaseMs: handlerLease,
        heartbeatMs: options.heartbeatMs ?? Math.max(1, Math.floor(handlerLease / 3)),
        maxAttempts: handler.maxAttempts ?? options.maxAttempts ?? 3,
        encodeSuccess: Schema.encodeUnknownExit(jsonCodec(tool.successSchema)),
        decodeSuccess: Schema.decodeUnknownExit(jsonCodec(tool.successSchema)),
        encodeFailure: Schema.encodeUnknownExit(jsonCodec(tool.failureSchema)),
        decodeFailure: Schema.decodeUnknownExit(jsonCodec(tool.failureSchema)),
        duration: Metric.withAttributes(ExecutionMetrics.handlerDuration, { tool: name })
      })
    }

    const instance = randomUUID().slice(0, 8)
    let executions = 0

    /** Repeats a store operation that failed with a retryable `StoreUnavailable` (fenced, so safe). */
    const retryStore = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
      Effect.catchIf(effect, isRetryable, () => Effect.retry(effect, { schedule: storeRetry, while: isRetryable }))

    const replayFailure = (run: Run, record: StoredRecord): Effect.Effect<never, ExecutionError> => {
      const stored = record.error as { readonly _tag?: string; readonly [k: string]: unknown } | null
      if (stored?._tag === "ResultTooLarge") {
        return Effect.fail(
          new ResultTooLarge({
            keyHash: run.key,
            toolName: run.entry.name,
            bytes: Number(stored.bytes),
            maxBytes: Number(stored.maxBytes),
            replayed: true
          })
        )
      }
      const decoded = stored?._tag === "ToolFailure" && stored.failure !== undefined && stored.failure !== null
        ? run.entry.decodeFailure(stored.failure)
        : undefined
      return Effect.fail(
        new ToolExecutionFailed({
          keyHash: run.key,
          toolName: run.entry.name,
          classification: "applied",
          retryable: false,
          replayed: true,
          failure: decoded === undefined ? null : Exit.isSuccess(decoded) ? decoded.value : stored?.failure,
          detail: typeof stored?.detail === "string" ? stored.detail : "recorded failure"
        })
      )
    }

    /** Whether a claim may take this record over (the S1 takeover condition of the SQL store). */
    const takeable = (record: StoredRecord) => record.recovery !== "manual" && record.attempt < record.maxAttempts

    /** The answer to a claim that another record state prevented (b.4 decision table). */
    const answer = Effect.fnUntraced(function*(
      run: Run,
      record: StoredRecord
    ): Effect.fn.Return<Outcome<unknown>, ExecutionError | Busy> {
      const { entry, key } = run
      if (record.fingerprint !== run.fingerprint) {
        yield* ExecutionMetrics.count("mismatch")
        return yield* new IdempotencyKeyReused({
          keyHash: key,
          toolName: entry.name,
          storedFingerprint: record.fingerprint,
          fingerprint: run.fingerprint
        })
      }
      const downstreamKey = IdempotencyKey.downstreamKey(key, record.generation)
      switch (record.status) {
        case "succeeded": {
          const decoded = entry.decodeSuccess(record.result)
          yield* ExecutionMetrics.count("replayed")
          if (Exit.isFailure(decoded)) {
            return yield* new ToolExecutionFailed({
              keyHash: key,
              toolName: entry.name,
              classification: "applied",
              retryable: false,
              replayed: true,
              failure: null,
              detail: "the recorded result no longer matches the tool's success schema"
            })
          }
          return { _tag: "Replayed", value: decoded.value, encoded: record.result, key, waited: run.waited } as const
        }
        case "failed": {
          yield* ExecutionMetrics.count("replayed")
          return yield* replayFailure(run, record)
        }
        case "released": {
          yield* ExecutionMetrics.count("exhausted")
          return yield* new AttemptsExhausted({
            keyHash: key,
            toolName: entry.name,
            attempts: record.attempt,
            maxAttempts: record.maxAttempts,
            lastError: record.error
          })
        }
        case "unknown": {
          // Taken over by a claim when recovery allows it: the record changed between our claim
          // and this read (another caller parked it), so claim again.
          if (takeable(record)) return yield* new Busy({ retryAfterMs: 0 })
          yield* ExecutionMetrics.count("unknown")
          return yield* new OutcomeUnknown({
            keyHash: key,
            toolName: entry.name,
            downstreamKey,
            reason: record.attempt >= record.maxAttempts
              ? "attempts_exhausted"
              : record.recovery === "manual"
              ? "manual"
              : "parked",
            attempt: record.attempt
          })
        }
        case "in_progress": {
          if (!record.leaseExpired) return yield* new Busy({ retryAfterMs: record.retryAfterMs })
          // The lease ran out between our claim (which saw it live) and this read: claim again,
          // since a claim takes an expired lease over when recovery allows it.
          if (takeable(record)) return yield* new Busy({ retryAfterMs: 0 })
          // Expired but not ours to take (manual recovery, or attempts used up): park it.
          const parked = yield* retryStore(store.parkExpired(record))
          if (Option.isNone(parked)) return yield* new Busy({ retryAfterMs: 0 })
          yield* ExecutionMetrics.count("unknown")
          return yield* new OutcomeUnknown({
            keyHash: key,
            toolName: entry.name,
            downstreamKey,
            reason: record.attempt >= record.maxAttempts ? "attempts_exhausted" : "abandoned",
            attempt: record.attempt
          })
        }
      }
    })

    /**
     * Extends the lease every `heartbeatMs`; fails with `HandlerTimedOut` at the deadline, or with
     * `LeaseLost` when a heartbeat is fenced off.
     */
    const watchdog = (
      entry: Entry,
      lease: Lease,
      deadline: number
    ): Effect.Effect<never, LeaseLost | HandlerTimedOut> =>
      Effect.gen(function*() {
        for (;;) {
          const now = yield* Clock.currentTimeMillis
          if (now >= deadline) return yield* new HandlerTimedOut()
          const wait = Math.min(entry.heartbeatMs, deadline - now)
          yield* Effect.sleep(wait)
          if (wait === entry.heartbeatMs) {
            // an unreachable store is retried at the next beat; the lease may lapse meanwhile
            yield* Effect.catchTag(
              store.heartbeat(lease, { leaseMs: entry.leaseMs }),
              "StoreUnavailable",
              () => Effect.void
            )
          }
        }
      })

    /**
     * Runs handler code in its own fiber, aborting the context's signal when it is interrupted.
     * While it runs, a watchdog fiber extends the lease and, at the timeout or when the lease is
     * lost, interrupts the handler and fails with the reason. A handler that finishes without
     * suspending (it had nothing to wait for) is done before a heartbeat or a timeout could
     * matter, so no watchdog is started for it.
     */
    const guarded = <A>(
      entry: Entry,
      lease: Lease,
      context: LiveContext,
      effect: Effect.Effect<A, unknown, unknown>,
      deadline: number
    ): Effect.Effect<A, unknown> =>
      Effect.flatMap(
        Effect.forkChild(
          (provideServices ? Effect.provideContext(effect, services as Context.Context<unknown>) : effect).pipe(
            Effect.onInterrupt(() => Effect.sync(() => context.abort()))
          ) as Effect.Effect<A, unknown>,
          { startImmediately: true }
        ),
        (handler) => {
          const done = handler.pollUnsafe()
          if (done !== undefined) return done
          let stopped: LeaseLost | HandlerTimedOut | undefined
          const dog = watchdog(entry, lease, deadline).pipe(
            Effect.catch((reason) => Effect.andThen(Effect.sync(() => (stopped = reason)), Fiber.interrupt(handler)))
          )
          return Effect.flatMap(Effect.forkChild(dog), (dogFiber) =>
            Fiber.await(handler).pipe(
              Effect.onExit(() => Effect.andThen(Fiber.interrupt(dogFiber), Fiber.interrupt(handler))),
              // the handler's own outcome wins; the watchdog's reason explains an interruption
              Effect.flatMap((exit): Effect.Effect<A, unknown> =>
                stopped !== undefined && Exit.isFailure(exit) && Cause.hasInterrupts(exit.cause)
                  ? Effect.fail(stopped)
                  : exit
              )
            ))
        }
      )

    const parkOwn = (run: Run, lease: Lease, reason: string, detail: string): Effect.Effect<never, ExecutionError> =>
      retryStore(store.park(lease, { error: JSON.stringify({ _tag: "Ambiguous", reason, detail }) })).pipe(
        Effect.tapError((e) => e._tag === "LeaseLost" ? ExecutionMetrics.count("lease_lost") : Effect.void),
        Effect.andThen(ExecutionMetrics.count("unknown")),
        Effect.andThen(
          Effect.fail(
            new OutcomeUnknown({
              keyHash: run.key,
              toolName: run.entry.name,
              downstreamKey: IdempotencyKey.downstreamKey(run.key, lease.generation),
              reason,
              attempt: lease.attempt
            })
          )
        )
      )

    const recordFailure = (lease: Lease, error: Record<string, unknown>) =>
      retryStore(store.fail(lease, { error: JSON.stringify(error), retentionMs })).pipe(
        Effect.tap(() => ExecutionMetrics.count("failed")),
        Effect.tapError((e) => e._tag === "LeaseLost" ? ExecutionMetrics.count("lease_lost") : Effect.void)
      )

    /**
     * The completion was fenced off. If the record was parked `unknown` meanwhile, this worker
     * holds the real outcome and resolves it (S9). Otherwise someone took over: journal the
     * orphaned result and fail with `LeaseLost`.
     */
    const completedAfterLoss = Effect.fnUntraced(function*(
      lease: Lease,
      lost: LeaseLost,
      result: string,
      externalRef: string | null
    ) {
      const current = yield* retryStore(store.read(lease))
      if (Option.isSome(current) && current.value.status === "unknown") {
        const resolved = yield* Effect.exit(
          retryStore(store.resolve(current.value, { _tag: "Succeeded", result, externalRef }, { retentionMs }))
        )
        if (Exit.isSuccess(resolved)) return
      }
      yield* ExecutionMetrics.count("lease_lost")
      yield* retryStore(store.journal(lease, { attempt: lease.attempt, outcome: "lease_lost", detail: result }))
      return yield* lost
    })

    /** Records a successful handler result: encoded, size-checked, fenced. */
    const finish = Effect.fnUntraced(function*(
      run: Run,
      lease: Lease,
      context: LiveContext,
      value: unknown,
      reconciled: boolean
    ): Effect.fn.Return<Outcome<unknown>, ExecutionError> {
      const { entry, key } = run
      const encoded = entry.encodeSuccess(value)
      let text: string | undefined
      if (Exit.isSuccess(encoded)) {
        try {
          text = JSON.stringify(encoded.value)
        } catch {
          text = undefined
        }
      }
      if (text === undefined || !Exit.isSuccess(encoded)) {
        // The effect happened; its result cannot be stored. Terminal, never re-executed.
        yield* recordFailure(lease, { _tag: "ResultInvalid", detail: "the result does not match the success schema" })
        return yield* new ToolExecutionFailed({
          keyHash: key,
          toolName: entry.name,
          classification: "applied",
          retryable: false,
          replayed: false,
          failure: null,
          detail: "the result does not match the tool's success schema"
        })
      }
      const bytes = Buffer.byteLength(text, "utf8")
      if (bytes > maxBytes) {
        yield* recordFailure(lease, { _tag: "ResultTooLarge", bytes, maxBytes })
        return yield* new ResultTooLarge({ keyHash: key, toolName: entry.name, bytes, maxBytes, replayed: false })
      }
      // diagnostics only: a throwing externalRef must not strand a result whose effect happened
      let externalRef: string | null = null
      try {
        externalRef = entry.handler.externalRef?.(value) ?? null
      } catch {
        externalRef = null
      }
      const result = text
      yield* Effect.catchTag(
        retryStore(store.complete(lease, { result, externalRef, retentionMs })),
        "LeaseLost",
        (lost) => completedAfterLoss(lease, lost, result, externalRef)
      )
      yield* ExecutionMetrics.count("executed")
      return {
        _tag: "Executed",
        value,
        encoded: encoded.value,
        key,
        downstreamKey: context.downstreamKey,
        attempt: lease.attempt,
        reconciled
      } as const
    })

    /** Classifies and records a failed handler run. */
    const failed = Effect.fnUntraced(function*(
      run: Run,
      lease: Lease,
      context: LiveContext,
      cause: Cause.Cause<unknown>
    ): Effect.fn.Return<never, ExecutionError> {
      const { entry, key } = run
      const error = lastFailure(cause)
      if (error instanceof LeaseLost) {
        yield* ExecutionMetrics.count("lease_lost")
        yield* retryStore(
          store.journal(lease, {
            attempt: lease.attempt,
            outcome: "lease_lost",
            detail: JSON.stringify({ detail: "handler interrupted: lease lost" })
          })
        )
        return yield* error
      }
      if (error instanceof HandlerTimedOut) {
        yield* retryStore(
          store.park(lease, { error: JSON.stringify({ _tag: "ExecutionTimeout", timeoutMs: entry.timeoutMs }) })
        ).pipe(Effect.tapError(() => ExecutionMetrics.count("lease_lost")))
        yield* ExecutionMetrics.count("unknown")
        return yield* new ExecutionTimeout({
          keyHash: key,
          toolName: entry.name,
          timeoutMs: entry.timeoutMs,
          downstreamKey: context.downstreamKey
        })
      }
      if (error === undefined) {
        if (Cause.hasInterrupts(cause) && !Cause.hasDies(cause)) {
          // The caller interrupted a running handler: it may have dispatched. Park, then let the
          // interruption go on.
          yield* Effect.ignore(retryStore(store.park(lease, { error: JSON.stringify({ _tag: "Interrupted" }) })))
          yield* ExecutionMetrics.count("unknown")
          return yield* Effect.failCause(cause as Cause.Cause<never>)
        }
        return yield* parkOwn(run, lease, "defect", defectDetail(cause))
      }
      const classification: Classification = error instanceof NotApplied
        ? "not_applied"
        : error instanceof Ambiguous
        ? "ambiguous"
        : classifyOwn(entry, error)
      const detail = error instanceof NotApplied || error instanceof Ambiguous
        ? excerpt(error.detail)
        : "the tool reported a failure"
      if (classification === "ambiguous") return yield* parkOwn(run, lease, "ambiguous_failure", detail)
      const own = error instanceof NotApplied || error instanceof Ambiguous ? undefined : error
      const encodedFailure = own === undefined ? undefined : entry.encodeFailure(own)
      const stored = {
        _tag: classification === "applied" ? "ToolFailure" : "NotApplied",
        failure: encodedFailure !== undefined && Exit.isSuccess(encodedFailure) ? encodedFailure.value : null,
        detail
      }
      if (classification === "applied") {
        yield* recordFailure(lease, stored)
      } else {
        yield* retryStore(store.release(lease, { error: JSON.stringify(stored) })).pipe(
          Effect.tap(() => ExecutionMetrics.count("failed")),
          Effect.tapError((e) => e._tag === "LeaseLost" ? ExecutionMetrics.count("lease_lost") : Effect.void)
        )
      }
      return yield* new ToolExecutionFailed({
        keyHash: key,
        toolName: entry.name,
        classification,
        retryable: classification === "not_applied" && lease.attempt < lease.maxAttempts,
        replayed: false,
        failure: own ?? null,
        detail
      })
    })

    /** Runs the handler (after a reconcile probe on takeovers) and records its outcome. */
    const runClaimed = (run: Run, lease: Lease): Effect.Effect<Outcome<unknown>, ExecutionError> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const { call, entry } = run
          const context = new LiveContext(run, lease)
          if (context.takeover) yield* ExecutionMetrics.count("takeover")
          const t0 = yield* Clock.currentTimeMillis
          const deadline = t0 + entry.timeoutMs
          const probe = entry.handler.probe
          if (context.takeover && entry.recovery === "reconcile" && probe !== undefined) {
            const probed = yield* Effect.exit(
              restore(guarded(entry, lease, context, Effect.suspend(() => probe(call.params, context)), deadline))
            )
            if (Exit.isFailure(probed)) {
              const error = lastFailure(probed.cause)
              if (error instanceof LeaseLost || error instanceof HandlerTimedOut || Cause.hasInterrupts(probed.cause)) {
                return yield* failed(run, lease, context, probed.cause)
              }
              return yield* parkOwn(run, lease, "probe_failed", "the reconcile probe failed")
            }
            if (Option.isSome(probed.value)) {
              yield* ExecutionMetrics.count("reconciled")
              return yield* finish(run, lease, context, probed.value.value, true)
            }
          }
          const exit = yield* Effect.exit(
            restore(
              guarded(entry, lease, context, Effect.suspend(() => entry.handler.run(call.params, context)), deadline)
            )
          )
          yield* Metric.update(entry.duration, Duration.millis((yield* Clock.currentTimeMillis) - t0))
          return yield* Exit.isSuccess(exit)
            ? finish(run, lease, context, exit.value, false)
            : failed(run, lease, context, exit.cause)
        })
      )

    /** One claim round: the outcome, a typed failure, or `Busy` while another lease is live. */
    const round = (run: Run): Effect.Effect<Outcome<unknown>, ExecutionError | Busy> =>
      retryStore(store.claim({
        scope: run.tenant,
        key: run.key,
        tool: run.entry.name,
        fingerprint: run.fingerprint,
        owner: run.owner,
        leaseMs: run.entry.leaseMs,
        retentionMs,
        maxAttempts: run.entry.maxAttempts,
        recovery: run.entry.recovery
      })).pipe(
        Effect.flatMap((claim) => claim._tag === "Claimed" ? runClaimed(run, claim.lease) : answer(run, claim.record))
      )

    const inProgress = (run: Run, busy: Busy) =>
      Effect.gen(function*() {
        yield* ExecutionMetrics.count("in_progress")
        return yield* new ExecutionInProgress({
          keyHash: run.key,
          toolName: run.entry.name,
          retryAfterMs: busy.retryAfterMs,
          waitedMs: (yield* Clock.currentTimeMillis) - run.started
        })
      })

    /**
     * Polls the claim on the wait schedule after a first `Busy`, then gives up with
     * `ExecutionInProgress`. (Set up only when needed: the usual execution never waits.)
     */
    const wait = (run: Run, first: Busy): Effect.Effect<Outcome<unknown>, ExecutionError> => {
      run.waited = true
      let pending: Busy | undefined = first
      const again = Effect.suspend(() => {
        if (pending === undefined) return round(run)
        const busy = pending
        pending = undefined
        return Effect.fail(busy)
      })
      return ExecutionMetrics.count("waited").pipe(
        Effect.andThen(Effect.retry(again, { schedule: waitSchedule, while: isBusy })),
        Effect.catchTag("Busy", (busy) => inProgress(run, busy))
      )
    }

    const executeOne = Effect.fn("ToolExecutor.execute")(function*(
      call: ToolCall.ValidatedToolCall,
      execution: ExecuteOptions,
      material?: IdempotencyKey.Material
    ): Effect.fn.Return<Outcome<unknown>, ExecutionError> {
      const entry = entries.get(call.name)
      if (entry === undefined) {
        return yield* Effect.die(new Error(`ToolExecutor: tool ${call.name} is not in the executor's toolkit`))
      }
      const keys = IdempotencyKey.forCallSync(call, {
        scope: execution.scope,
        ordinal: execution.ordinal,
        strategy: execution.strategy,
        digest: nodeDigest,
        material
      })
      if (Result.isFailure(keys)) return yield* keys.failure
      const key = keys.success.key
      yield* Effect.annotateCurrentSpan({ "toolgate.key": key, "toolgate.tool": call.name })
      const run: Run = {
        call,
        entry,
        key,
        fingerprint: keys.success.fingerprint,
        tenant: execution.scope.tenant,
        owner: `${instance}:${++executions}`,
        started: yield* Clock.currentTimeMillis,
        waited: false
      }
      return yield* Effect.catchIf(round(run), isBusy, (busy) => wait(run, busy))
    })

    const executeAll = Effect.fn("ToolExecutor.executeAll")(function*(
      calls: ReadonlyArray<ToolCall.ValidatedToolCall>,
      turn: ExecuteAllOptions
    ) {
      const occurrences = turn.occurrences ?? new IdempotencyKey.Occurrences()
      const planned = calls.map((call) => {
        const material = IdempotencyKey.materialOf(call)
        return material._tag === "Success"
          ? { call, material: material.success, ordinal: occurrences.next(material.success) }
          : { call, material: undefined, ordinal: 0 }
      })
      return yield* Effect.forEach(
        planned,
        ({ call, material, ordinal }) =>
          Effect.result(executeOne(call, { scope: turn.scope, strategy: turn.strategy, ordinal }, material)),
        { concurrency: turn.concurrency ?? defaultConcurrency }
      )
    })

    return ToolExecutor.of({
      execute: executeOne as Service["execute"],
      executeAll
    })
  })

/**
 * The {@link ToolExecutor} layer of a toolkit's handlers (see {@link make}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <Tools extends Record<string, Tool.Any>, H extends Handlers<Tools>>(
  toolkit: Toolkit.Toolkit<Tools>,
  handlers: H,
  options?: Options
): Layer.Layer<ToolExecutor, never, IdempotencyStore | HandlersServices<H>> =>
  Layer.effect(ToolExecutor, make(toolkit, handlers, options))

/**
 * Executes one validated call through the {@link ToolExecutor} in context; the result is typed
 * by the call's tool. See the module docs for the flow and the errors.
 *
 * @since 0.1.0
 * @category execution
 */
export const execute = <T extends Tool.Any>(
  call: ToolCall.ValidatedToolCall<T>,
  options: ExecuteOptions
): Effect.Effect<Outcome<Tool.Success<T>>, ExecutionError, ToolExecutor> =>
  ToolExecutor.use((executor) => executor.execute(call, options))

/**
 * Executes the validated calls of one turn through the {@link ToolExecutor} in context, with
 * bounded concurrency; one `Result` per call, in call order.
 *
 * @since 0.1.0
 * @category execution
 */
export const executeAll = (
  calls: ReadonlyArray<ToolCall.ValidatedToolCall>,
  options: ExecuteAllOptions
): Effect.Effect<ReadonlyArray<Result.Result<Outcome<unknown>, ExecutionError>>, never, ToolExecutor> =>
  ToolExecutor.use((executor) => executor.executeAll(calls, options))
