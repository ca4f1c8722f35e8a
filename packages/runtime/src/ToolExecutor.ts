/**
 * The tool executor: runs each validated tool call through the `IdempotencyStore` so that its
 * effect happens once, under client retries that bring fresh provider tool-call ids, duplicate
 * deliveries, concurrent workers, and crashes between the external call and recording it.
 *
 * `execute(call, { scope })`:
 *
 * 1. Derives the intent key and fingerprint (`@toolgate/core` `IdempotencyKey`), under the tool's
 *    key policy (`KeyPolicy`: the handler's `keyPolicy`, else the tool's `IdempotencyKey.Policy`
 *    annotation): key fields by path, free text left out of the key and the match, a calendar
 *    window taken from the scope's `eventTime`. A call that cannot be keyed fails before anything
 *    is claimed (`UnkeyableArguments`, `MissingKeyField`, `MissingEventTime`).
 * 2. Claims the key. A won claim runs the tool's handler under a timeout while the executor's
 *    one heartbeat timer (shared by all its running handlers) extends the lease (every
 *    `heartbeatMs`, default `leaseMs / 3`) and interrupts the handler if the lease is lost or
 *    its deadline passes, then records the outcome with a fenced write and returns
 *    `Executed(result)`.
 * 3. A lost claim is answered by the record that prevented it: a stored result is
 *    `Replayed(result)` — its JSON text byte for byte as the execution produced it (`json`), and
 *    how this call's arguments differ from the recorded call's (`argumentChanges`: a rephrased
 *    free-text field) — and a stored failure answers as the execution did, without calling the
 *    handler; another fingerprint fails with `IdempotencyKeyReused` (naming the differing paths)
 *    and never executes; a record whose attempts
 *    are used up is `AttemptsExhausted` (with the last stored error, a `StoredError`) or
 *    `OutcomeUnknown`.
 * 4. A live lease elsewhere waits (a bounded `Schedule`, polling the claim) and then fails with
 *    `ExecutionInProgress`.
 *
 * Handler failures are classified three ways: `not_applied` (the record is released; calling
 * again may run again), `applied` (terminal; cached and replayed), ambiguous (parked `unknown`;
 * `OutcomeUnknown`). A timeout is treated as dispatched: `ExecutionTimeout`, record `unknown`,
 * never released. Defects and interruptions of a running handler park too. Recovery of a record
 * whose previous attempt may have applied follows the tool's mode: `reexecute` (run again with
 * the same downstream key), `reconcile` (probe the downstream by that key first), `manual`
 * (park; `OutcomeUnknown` until resolved). Results and stored failures are bounded by
 * `maxResultBytes` (`ResultTooLarge`).
 *
 * Time. Every time decision of the executor — the handler's deadline, the heartbeat cadence, the
 * wait for another worker's lease and its `waitedMs`, handler durations — reads effect's `Clock`
 * of the calling fiber, so providing another `Clock` (or `TestClock`) controls them. The one
 * heartbeat timer of an executor runs on the `Clock` of the call that started it (it stops when no
 * handler runs and the next call starts it again), so the calls of one executor are expected to
 * share a clock, as they do unless a caller provides its own. Whether a lease has expired is decided on the store's clock (the database's `now()`), so workers whose
 * clocks disagree still agree on who holds a lease.
 *
 * Handlers are supplied per tool name, typed from an `effect/ai` `Toolkit` (the handler model is
 * `ToolHandler`; its names are exported here too):
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
import type { IdempotencyKey, KeyPolicy, ToolCall } from "@toolgate/core"
import type { Tool, Toolkit } from "effect/ai"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import type * as Schedule from "effect/Schedule"
import type { ExecutionError, InvalidExecutorOptions } from "./ExecutionError.js"
import { IdempotencyStore } from "./IdempotencyStore.js"
import * as ClaimLoop from "./internal/executor/claimLoop.js"
import { configure } from "./internal/executor/config.js"
import type { Handler, Handlers, HandlersServices } from "./ToolHandler.js"

export {
  /**
   * A handler failure after which the outcome is unknown (see `ToolHandler.Ambiguous`).
   *
   * @since 0.1.0
   * @category errors
   */
  Ambiguous,
  /**
   * A handler failure known not to have applied (see `ToolHandler.NotApplied`).
   *
   * @since 0.1.0
   * @category errors
   */
  NotApplied
} from "./ToolHandler.js"

export type {
  /**
   * How a tool's own failure relates to the outside world (see `ToolHandler.Classification`).
   *
   * @since 0.1.0
   * @category models
   */
  Classification,
  /**
   * The handler of one tool (see `ToolHandler.Handler`).
   *
   * @since 0.1.0
   * @category models
   */
  Handler,
  /**
   * What a handler receives besides its parameters (see `ToolHandler.HandlerContext`).
   *
   * @since 0.1.0
   * @category models
   */
  HandlerContext,
  /**
   * What a handler may fail with (see `ToolHandler.HandlerError`).
   *
   * @since 0.1.0
   * @category models
   */
  HandlerError,
  /**
   * One handler per tool of a toolkit (see `ToolHandler.Handlers`).
   *
   * @since 0.1.0
   * @category models
   */
  Handlers,
  /**
   * The services the handlers require (see `ToolHandler.HandlersServices`).
   *
   * @since 0.1.0
   * @category models
   */
  HandlersServices
} from "./ToolHandler.js"

/**
 * Executor options. Durations in milliseconds (on the executor's clock, effect's `Clock`), sizes
 * in bytes. `make` checks each against its rule and fails with `InvalidExecutorOptions` naming the
 * first one broken (a handler's `leaseMs`, `timeoutMs` and `maxAttempts` overrides follow the
 * same rules):
 *
 * - `leaseMs` (30,000; ≥ 100): lease per claim, extended by the heartbeat while the handler
 *   runs. Shorter leases cannot hold: a store round trip and a heartbeat must fit in one.
 * - `heartbeatMs` (default a third of the lease; ≥ 10 and ≤ half of every handler's lease): the
 *   heartbeat interval. At most half the lease, so a beat lost to a store blip is followed by
 *   another before the lease lapses.
 * - `timeoutMs` (60,000; > 0, `Infinity` for none): handler timeout; elapsing is
 *   `ExecutionTimeout` and `unknown`.
 * - `retentionMs` (24 h; finite, > 0): how long settled records are kept (≥ the client's retry
 *   window and the downstream's dedupe window).
 * - `maxAttempts` (3; an integer ≥ 1): attempts per record generation (releases and takeovers
 *   count).
 * - `maxResultBytes` (262,144; an integer ≥ 1, clamped to the store's 262,144): limit of a
 *   result's JSON text and of a stored failure's; larger is `ResultTooLarge`.
 * - `waitMs` (10,000; ≥ 0): how long a call waits for another worker's live lease; `wait` is the
 *   polling schedule (default: exponential from 10 ms ×1.5, at most 250 ms apart, jittered).
 * - `storeRetries` (3; an integer ≥ 0): retries, 50 ms apart doubling, of a store operation that
 *   failed with a retryable `StoreUnavailable` (fenced writes and same-owner claims are safe to
 *   repeat).
 * - `concurrency` (8; an integer ≥ 1): how many calls of a turn `executeAll` runs at once.
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
 * The handler ran now and its outcome was recorded. `json` is the result's JSON text as stored
 * (encoded with the tool's success Schema), `encoded` its value. `reconciled`: a takeover found
 * the effect downstream through the probe and did not run the handler.
 *
 * @since 0.1.0
 * @category models
 */
export interface Executed<A> {
  readonly _tag: "Executed"
  readonly value: A
  readonly encoded: unknown
  readonly json: string
  readonly key: string
  readonly downstreamKey: string
  readonly attempt: number
  readonly reconciled: boolean
}

/**
 * The recorded result of an earlier execution; the handler did not run. `json` is the stored
 * JSON text, byte for byte the `json` of the execution (on every store), `encoded` its parsed
 * value (members in the same order). `waited`: this call waited for another worker's lease first.
 * `argumentChanges`: how this call's arguments differ from the recorded call's (under a key
 * policy, in its free text: a rephrased title), as paths with bounded excerpts of both values;
 * `undefined` when they are the same (or the record keeps no arguments to compare).
 *
 * @since 0.1.0
 * @category models
 */
export interface Replayed<A> {
  readonly _tag: "Replayed"
  readonly value: A
  readonly encoded: unknown
  readonly json: string
  readonly key: string
  readonly waited: boolean
  readonly argumentChanges?: KeyPolicy.Changes | undefined
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
   * The calls that start at once (the first `concurrency` keyable ones) are claimed together
   * (`IdempotencyStore.claimMany`: one statement on SQL), each answered as its own claim would
   * be; a later call claims when it starts, so no lease runs down while its call waits for a slot.
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

/**
 * Builds an executor for a toolkit's handlers over the `IdempotencyStore` in context. The
 * handlers' own services are captured here and provided to every run. Fails with
 * `InvalidExecutorOptions` when an option or a handler's override breaks its rule (see
 * {@link Options}) or a tool of the toolkit has no handler.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <Tools extends Record<string, Tool.Any>, H extends Handlers<Tools>>(
  toolkit: Toolkit.Toolkit<Tools>,
  handlers: H,
  options: Options = {}
): Effect.Effect<Service, InvalidExecutorOptions, IdempotencyStore | HandlersServices<H>> =>
  Effect.gen(function*() {
    const configured = configure(
      toolkit as unknown as Toolkit.Toolkit<Record<string, Tool.Any>>,
      handlers as unknown as Record<string, Handler<Tool.Any, unknown> | undefined>,
      options
    )
    if (Result.isFailure(configured)) return yield* configured.failure
    const store = yield* IdempotencyStore
    const services = yield* Effect.context<HandlersServices<H>>()
    const loop = ClaimLoop.make({
      store,
      config: configured.success,
      services: services.mapUnsafe.size > 0 ? services as Context.Context<unknown> : undefined
    })
    return ToolExecutor.of({
      execute: loop.execute as Service["execute"],
      executeAll: loop.executeAll
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
): Layer.Layer<ToolExecutor, InvalidExecutorOptions, IdempotencyStore | HandlersServices<H>> =>
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
 * bounded concurrency; one `Result` per call, in call order. The calls that start at once are
 * claimed in one store operation (see {@link Service}).
 *
 * @since 0.1.0
 * @category execution
 */
export const executeAll = (
  calls: ReadonlyArray<ToolCall.ValidatedToolCall>,
  options: ExecuteAllOptions
): Effect.Effect<ReadonlyArray<Result.Result<Outcome<unknown>, ExecutionError>>, never, ToolExecutor> =>
  ToolExecutor.use((executor) => executor.executeAll(calls, options))
