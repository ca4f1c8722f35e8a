/**
 * Settling outcomes: how the end of a won claim is written to its record — a result completes it,
 * a failure fails or releases it, an ambiguous end, timeout or interruption parks it `unknown`, a
 * lost lease is journalled — each write fenced and retried when the store was briefly
 * unreachable, each stored error a `StoredError` bounded by the executor's size limit. Also the
 * one metric tap: every execution is counted once, by its final exit, in `outcomeOf`.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import {
  type ExecutionError,
  ExecutionTimeout,
  LeaseLost,
  OutcomeUnknown,
  ResultTooLarge,
  type StoreUnavailable,
  ToolExecutionFailed
} from "../../ExecutionError.js"
import * as ExecutionMetrics from "../../ExecutionMetrics.js"
import * as FollowUp from "../../FollowUp.js"
import type * as IdempotencyStore from "../../IdempotencyStore.js"
import * as StoredError from "../../StoredError.js"
import type * as ToolExecutor from "../../ToolExecutor.js"
import type { Classification } from "../../ToolHandler.js"
import { Ambiguous, NotApplied } from "../../ToolHandler.js"
import type { Env, LiveContext, Run } from "./config.js"
import { HandlerTimedOut } from "./lease.js"

/** The reasons an attempt parks its own record `unknown` with. */
type AmbiguousReason = typeof StoredError.Ambiguous.Type["reason"]

/** Stored details are short: a description, never a payload. */
const excerpt = (text: string): string => text.length <= 200 ? text : `${text.slice(0, 199)}…`

const defectDetail = (cause: Cause.Cause<unknown>): string => {
  const defect = cause.reasons.find(Cause.isDieReason)?.defect
  return excerpt(defect instanceof Error ? `${defect.name}: ${defect.message}` : String(defect))
}

/** The first typed failure of a cause. @internal */
export const lastFailure = (cause: Cause.Cause<unknown>): unknown => cause.reasons.find(Cause.isFailReason)?.error

const isRetryable = (e: { readonly _tag: string }): boolean =>
  e._tag === "StoreUnavailable" && (e as StoreUnavailable).retryable

/** The detail of a result the success Schema does not encode (the same on the execution and its replays). */
const resultInvalid = "the result does not match the tool's success schema"

const bytesOf = (text: string): number => Buffer.byteLength(text, "utf8")

/** The stored text of a failure; a failure value that does not encode as JSON is stored as `null`. */
const failureText = (
  stored: typeof StoredError.ToolFailure.Type | typeof StoredError.NotApplied.Type
): string => {
  try {
    return StoredError.encode(stored)
  } catch {
    return StoredError.encode({ ...stored, failure: null })
  }
}

/**
 * The metric outcome of an execution's final exit (`undefined`: not counted — an interruption
 * before anything was written, or a defect of the executor itself).
 *
 * @internal
 */
export const outcomeOf = (
  run: Run | undefined,
  exit: Exit.Exit<ToolExecutor.Outcome<unknown>, ExecutionError>
): ExecutionMetrics.Outcome | undefined => {
  if (Exit.isSuccess(exit)) return exit.value._tag === "Executed" ? "executed" : "replayed"
  const error = Cause.findErrorOption(exit.cause)
  if (Option.isNone(error)) return run?.parkedOnInterrupt === true ? "unknown" : undefined
  const e = error.value
  switch (e._tag) {
    case "IdempotencyKeyReused":
      return "mismatch"
    case "ExecutionInProgress":
      return "in_progress"
    case "ToolExecutionFailed":
    case "ResultTooLarge":
      return e.replayed ? "replayed" : "failed"
    case "ExecutionTimeout":
    case "OutcomeUnknown":
      return "unknown"
    case "LeaseLost":
      return "lease_lost"
    case "AttemptsExhausted":
      return "exhausted"
    case "StoreUnavailable":
      return "store_unavailable"
    case "UnkeyableArguments":
    case "MissingKeyField":
    case "MissingEventTime":
      return "unkeyable"
  }
}

/**
 * Counts an execution by its final exit and records its handler's duration (when a handler ran),
 * in one step: the one place execution outcomes and handler durations reach the metrics.
 *
 * @internal
 */
export const tap = (
  run: Run | undefined,
  exit: Exit.Exit<ToolExecutor.Outcome<unknown>, ExecutionError>
): Effect.Effect<void> => {
  const outcome = outcomeOf(run, exit)
  const ms = run?.handlerMs
  if (outcome === undefined && ms === undefined) return Effect.void
  return Effect.withFiber((fiber) => {
    if (run !== undefined && ms !== undefined) run.entry.duration.updateUnsafe(Duration.millis(ms), fiber.context)
    if (outcome !== undefined) ExecutionMetrics.executionsOf(outcome).updateUnsafe(1, fiber.context)
    return Effect.void
  })
}

/**
 * The stored form of the follow-ups the handler declares for a verified result (`undefined`: it
 * declares none); a declaration that throws is refused like one the store cannot take.
 */
const declaredFollowUps = (
  run: Run,
  context: LiveContext,
  value: unknown
): ReadonlyArray<FollowUp.Message> | FollowUp.InvalidFollowUp | undefined => {
  const declare = run.entry.handler.followUps
  if (declare === undefined) return undefined
  let declared: ReadonlyArray<FollowUp.FollowUp>
  try {
    declared = declare(run.call.params as never, value as never, context)
  } catch (error) {
    const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
    return new FollowUp.InvalidFollowUp({ ordinal: null, reason: `the declaration threw (${excerpt(detail)})` })
  }
  return FollowUp.encodeAll(context.downstreamKey, declared)
}

/** The settling steps of an executor over `env`. @internal */
export const make = (env: Env) => {
  const { config, store } = env
  const { maxBytes, retentionMs } = config

  /** Repeats a store operation that failed with a retryable `StoreUnavailable` (fenced, so safe). */
  const retryStore = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.catchIf(effect, isRetryable, () => Effect.retry(effect, { schedule: config.storeRetry, while: isRetryable }))

  const recordFailure = (lease: IdempotencyStore.Lease, stored: StoredError.StoredError) =>
    retryStore(store.fail(lease, { error: StoredError.encode(stored), retentionMs }))

  /** Parks the lease `unknown` with `stored`; then `error`. */
  const park = <E>(lease: IdempotencyStore.Lease, stored: StoredError.StoredError, error: E) =>
    Effect.andThen(retryStore(store.park(lease, { error: StoredError.encode(stored) })), Effect.fail(error))

  /** An ambiguous end of this attempt: parked `unknown`, `OutcomeUnknown`. */
  const parkOwn = (
    run: Run,
    lease: IdempotencyStore.Lease,
    context: LiveContext,
    reason: AmbiguousReason,
    detail: string
  ): Effect.Effect<never, ExecutionError> =>
    park(
      lease,
      { _tag: "Ambiguous", reason, detail },
      new OutcomeUnknown({
        keyHash: run.key,
        toolName: run.entry.name,
        downstreamKey: context.downstreamKey,
        reason,
        attempt: lease.attempt
      })
    )

  /**
   * The completion was fenced off. If the record was parked `unknown` meanwhile, this worker
   * holds the real outcome and resolves it. Otherwise someone took over: journal the orphaned
   * result and fail with `LeaseLost`.
   */
  const completedAfterLoss = Effect.fnUntraced(function*(
    lease: IdempotencyStore.Lease,
    lost: LeaseLost,
    result: string,
    externalRef: string | null,
    followUps: ReadonlyArray<FollowUp.Message> | undefined
  ) {
    const current = yield* retryStore(store.read(lease))
    if (Option.isSome(current) && current.value.status === "unknown") {
      const resolved = yield* Effect.exit(
        retryStore(
          store.resolve(current.value, { _tag: "Succeeded", result, externalRef, followUps }, { retentionMs })
        )
      )
      if (Exit.isSuccess(resolved)) return
    }
    yield* retryStore(store.journal(lease, { attempt: lease.attempt, outcome: "lease_lost", detail: result }))
    return yield* lost
  })

  /** A result whose effect happened but which cannot be stored: recorded `ResultInvalid` (terminal), then the failure. */
  const storedInvalid = (run: Run, lease: IdempotencyStore.Lease, detail: string) =>
    Effect.andThen(
      recordFailure(lease, { _tag: "ResultInvalid", detail }),
      Effect.fail(
        new ToolExecutionFailed({
          keyHash: run.key,
          toolName: run.entry.name,
          classification: "applied",
          retryable: false,
          replayed: false,
          failure: null,
          detail
        })
      )
    )

  /**
   * Records a successful handler result: encoded, size-checked, fenced. Encodes when called (call it
   * where it runs: it is a plain function, not a generator, as it runs once per execution and its
   * usual path is one store write).
   */
  const finish = (
    run: Run,
    lease: IdempotencyStore.Lease,
    context: LiveContext,
    value: unknown,
    reconciled: boolean
  ): Effect.Effect<ToolExecutor.Outcome<unknown>, ExecutionError> => {
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
      return storedInvalid(run, lease, resultInvalid)
    }
    // each UTF-16 unit is at most 3 UTF-8 bytes: count the bytes only near the limit
    const bytes = text.length * 3 <= maxBytes ? 0 : bytesOf(text)
    if (bytes > maxBytes) {
      return Effect.andThen(
        recordFailure(lease, { _tag: "ResultTooLarge", part: "result", bytes, maxBytes }),
        Effect.fail(
          new ResultTooLarge({
            keyHash: key,
            toolName: entry.name,
            part: "result",
            bytes,
            maxBytes,
            replayed: false
          })
        )
      )
    }
    // diagnostics only: a throwing externalRef must not strand a result whose effect happened
    let externalRef: string | null = null
    try {
      externalRef = entry.handler.externalRef?.(value) ?? null
    } catch {
      externalRef = null
    }
    const followUps = declaredFollowUps(run, context, value)
    if (followUps instanceof FollowUp.InvalidFollowUp) {
      return storedInvalid(run, lease, excerpt(`the follow-ups cannot be written: ${followUps.message}`))
    }
    const result = text
    return Effect.as(
      Effect.catchTag(
        retryStore(store.complete(lease, { result, externalRef, retentionMs, followUps })),
        "LeaseLost",
        (lost) => completedAfterLoss(lease, lost, result, externalRef, followUps)
      ),
      {
        _tag: "Executed",
        value,
        encoded: encoded.value,
        json: result,
        key,
        downstreamKey: context.downstreamKey,
        attempt: lease.attempt,
        reconciled
      } as const
    )
  }

  /** The tool's classification of its own failure; a classifier that throws cannot say, so ambiguous. */
  const classifyOwn = (run: Run, error: unknown): Classification => {
    try {
      return run.entry.handler.classify?.(error) ?? "applied"
    } catch {
      return "ambiguous"
    }
  }

  /** Settles a handler failure of the tool's own type, `NotApplied` or `Ambiguous`. */
  const handlerFailed = Effect.fnUntraced(function*(
    run: Run,
    lease: IdempotencyStore.Lease,
    context: LiveContext,
    error: unknown
  ): Effect.fn.Return<never, ExecutionError> {
    const { entry, key } = run
    const marked = error instanceof NotApplied || error instanceof Ambiguous
    const classification: Classification = error instanceof NotApplied
      ? "not_applied"
      : error instanceof Ambiguous
      ? "ambiguous"
      : classifyOwn(run, error)
    const detail = marked ? excerpt(error.detail) : "the tool reported a failure"
    if (classification === "ambiguous") return yield* parkOwn(run, lease, context, "ambiguous_failure", detail)
    const own = marked ? undefined : error
    const encoded = own === undefined ? undefined : entry.encodeFailure(own)
    const failure = encoded !== undefined && Exit.isSuccess(encoded) ? encoded.value : null
    if (classification === "applied") {
      const text = failureText({ _tag: "ToolFailure", failure: failure as Schema.Json, detail })
      const bytes = bytesOf(text)
      if (bytes > maxBytes) {
        // the failure is the outcome; it cannot be stored, so it is not answered now either
        yield* recordFailure(lease, { _tag: "ResultTooLarge", part: "failure", bytes, maxBytes })
        return yield* new ResultTooLarge({
          keyHash: key,
          toolName: entry.name,
          part: "failure",
          bytes,
          maxBytes,
          replayed: false
        })
      }
      yield* retryStore(store.fail(lease, { error: text, retentionMs }))
    } else {
      let text = failureText({ _tag: "NotApplied", failure: failure as Schema.Json, detail })
      const bytes = bytesOf(text)
      // diagnostics of a released record: keep the detail, drop a failure value over the limit
      if (bytes > maxBytes) {
        text = StoredError.encode({ _tag: "NotApplied", failure: null, detail, omittedBytes: bytes })
      }
      yield* retryStore(store.release(lease, { error: text }))
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

  /** Settles a failed handler run (or reconcile probe): its cause decides how. */
  const failed = Effect.fnUntraced(function*(
    run: Run,
    lease: IdempotencyStore.Lease,
    context: LiveContext,
    cause: Cause.Cause<unknown>
  ): Effect.fn.Return<never, ExecutionError> {
    const error = lastFailure(cause)
    if (error instanceof LeaseLost) {
      yield* retryStore(
        store.journal(lease, {
          attempt: lease.attempt,
          outcome: "lease_lost",
          detail: StoredError.encode({ _tag: "Interrupted", reason: "lease_lost" })
        })
      )
      return yield* error
    }
    if (error instanceof HandlerTimedOut) {
      return yield* park(
        lease,
        { _tag: "ExecutionTimeout", timeoutMs: run.entry.timeoutMs },
        new ExecutionTimeout({
          keyHash: run.key,
          toolName: run.entry.name,
          timeoutMs: run.entry.timeoutMs,
          downstreamKey: context.downstreamKey
        })
      )
    }
    if (error === undefined) {
      if (Cause.hasInterrupts(cause) && !Cause.hasDies(cause)) {
        // The caller interrupted a running handler: it may have dispatched. Park, then let the
        // interruption go on.
        const parked = yield* Effect.exit(
          retryStore(store.park(lease, { error: StoredError.encode({ _tag: "Interrupted", reason: "caller" }) }))
        )
        run.parkedOnInterrupt = Exit.isSuccess(parked)
        return yield* Effect.failCause(cause as Cause.Cause<never>)
      }
      return yield* parkOwn(run, lease, context, "defect", defectDetail(cause))
    }
    return yield* handlerFailed(run, lease, context, error)
  })

  return { retryStore, finish, failed, parkOwn }
}
