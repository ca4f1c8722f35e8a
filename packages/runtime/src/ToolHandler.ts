/**
 * The handler model: what an application writes for each tool the `ToolExecutor` runs. A handler
 * performs the call (`run`), says how its failures relate to the outside world (`classify`,
 * `NotApplied`, `Ambiguous`), and chooses what happens when a previous attempt may have applied
 * (`recovery`, with `probe` for `reconcile`). Handlers are supplied per tool name, typed from an
 * `effect/ai` `Toolkit` — the same shape as `Toolkit.of`, plus the execution context and the
 * recovery policy. Every name here is also exported by `ToolExecutor`.
 *
 * @since 0.1.0
 */
import type { KeyPolicy } from "@toolgate/core"
import type { Tool } from "effect/ai"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { FollowUp } from "./FollowUp.js"

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
 * `detail` is stored (its first 200 characters); keep argument values out of it.
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
  /** Handler timeout in ms (overrides the executor's; same rule). */
  readonly timeoutMs?: number | undefined
  /** Lease length in ms (overrides the executor's; same rule). */
  readonly leaseMs?: number | undefined
  /** Attempts allowed per record generation (overrides the executor's; same rule). */
  readonly maxAttempts?: number | undefined
  /** A downstream reference to store with a result (a CRM object id), for reconciliation. */
  readonly externalRef?: ((result: Tool.Success<T>) => string | null) | undefined
  /**
   * The call's follow-up messages (`FollowUp`: notify the rep, import the conversion), declared
   * from its parameters and its verified result. They are written to the outbox in the statement
   * that completes the call (the same fence: a stale worker's are never written), delivered by
   * `OutboxDispatcher`, each with `Idempotency-Key: <downstreamKey>:<ordinal>`. Nothing is written
   * for a call that fails, is released or is parked `unknown`. A declaration the store cannot take
   * (`FollowUp.InvalidFollowUp`), or a function that throws, makes the call a terminal
   * `ToolExecutionFailed` (`applied`: the effect happened, its follow-ups cannot be written).
   */
  readonly followUps?:
    | ((params: Tool.Parameters<T>, result: Tool.Success<T>, context: HandlerContext) => ReadonlyArray<FollowUp>)
    | undefined
  /**
   * The tool's key policy (see `KeyPolicy` of `@toolgate/core`), checked or as written; it takes
   * precedence over the tool's `IdempotencyKey.Policy` annotation. A policy `KeyPolicy.make`
   * refuses fails construction with `InvalidExecutorOptions` (`keyPolicy`).
   */
  readonly keyPolicy?: KeyPolicy.KeyPolicy | KeyPolicy.Input | undefined
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
