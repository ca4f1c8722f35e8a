/**
 * The claim loop: one execution from its call to its outcome. Derive the intent key and
 * fingerprint; claim the key; a won claim runs the handler under lease supervision (after a
 * reconcile probe on a takeover) and settles; a lost claim answers by the decision over the
 * record it returned (replay, mismatch, exhausted, unknown, park), and a live lease elsewhere
 * (or a record that changed under the claim) polls the claim on the wait schedule until it
 * settles or the wait ends (`ExecutionInProgress`). Each execution is counted once, by its exit.
 *
 * Why one long module: the steps of one execution (prepare, claim, answer, run, wait, and the
 * batch claim of `executeAll`) share the run and the executor's closures; split, each part would
 * take the same dozen parameters back.
 *
 * @internal
 */
import { IdempotencyKey, KeyPolicy, type ToolCall } from "@toolgate/core"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { hash, randomUUID } from "node:crypto"
import {
  AttemptsExhausted,
  type ExecutionError,
  ExecutionInProgress,
  IdempotencyKeyReused,
  LeaseLost,
  OutcomeUnknown,
  ResultTooLarge,
  StoreUnavailable,
  ToolExecutionFailed
} from "../../ExecutionError.js"
import * as ExecutionMetrics from "../../ExecutionMetrics.js"
import type * as IdempotencyStore from "../../IdempotencyStore.js"
import * as StoredError from "../../StoredError.js"
import type * as ToolExecutor from "../../ToolExecutor.js"
import { traced } from "../spans.js"
import { maxStoredBytes } from "../storeRules.js"
import { type Env, LiveContext, type Run } from "./config.js"
import { decide } from "./decision.js"
import { HandlerTimedOut, makeWatch } from "./lease.js"
import * as Settle from "./settle.js"

/** A live lease elsewhere, or a record to claim again (an internal signal for the wait schedule). */
class Busy extends Data.TaggedError("Busy")<{ readonly retryAfterMs: number }> {}

const isBusy = (e: { readonly _tag: string }): e is Busy => e._tag === "Busy"

const claimAgain = () => new Busy({ retryAfterMs: 0 })

/**
 * SHA-256 through `node:crypto`'s one-shot `hash` (Node ≥ 20.12): synchronous, about 8× cheaper
 * per key than Web Crypto, and cheaper than a `createHash` object per digest.
 */
const nodeDigest: IdempotencyKey.SyncDigest = (text) => hash("sha256", text, "hex")

/** Parses stored or canonical JSON text; `undefined` when there is none or it does not parse. */
const parsed = (text: string | null): unknown => {
  if (text === null) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * How a call's arguments differ from the record's: every differing path (`undefined` when they
 * are identical, or the record keeps no arguments).
 */
const changesFrom = (run: Run, record: IdempotencyStore.StoredRecord): KeyPolicy.Changes | undefined => {
  if (record.argumentsText === null || run.arguments === null || record.argumentsText === run.arguments) {
    return undefined
  }
  const recorded = parsed(record.argumentsText)
  const given = parsed(run.arguments)
  if (recorded === undefined || given === undefined) return undefined
  const { freeText, other } = KeyPolicy.compare(run.entry.policy, recorded, given)
  if (other.total === 0) return freeText.total === 0 ? undefined : freeText
  return KeyPolicy.compare(undefined, recorded, given).other
}

/** The differing paths outside the free text, for `IdempotencyKeyReused` (`null`: nothing to compare). */
const mismatchAt = (run: Run, record: IdempotencyStore.StoredRecord) => {
  const recorded = parsed(record.argumentsText)
  const given = parsed(run.arguments)
  if (recorded === undefined || given === undefined) return { paths: [], pathCount: null }
  const { freeText, other } = KeyPolicy.compare(run.entry.policy, recorded, given)
  // No difference outside the free text: the policy changed since the record was written.
  const found = other.total > 0 ? other : freeText
  return { paths: found.changes.map((c) => c.path), pathCount: found.total }
}

/** The executions of an executor over `env`. @internal */
export const make = (env: Env) => {
  const { config, services, store } = env
  const settle = Settle.make(env)
  const { retryStore } = settle
  const { supervised } = makeWatch(store, services)
  const instance = randomUUID().slice(0, 8)
  let executions = 0

  const unknown = (run: Run, generation: number, reason: OutcomeUnknown["reason"], attempt: number) =>
    new OutcomeUnknown({
      keyHash: run.key,
      toolName: run.entry.name,
      downstreamKey: IdempotencyKey.downstreamKey(run.key, generation),
      reason,
      attempt
    })

  /** A stored result, decoded with the tool's success Schema; its JSON text is returned as stored. */
  const replayResult = (run: Run, record: IdempotencyStore.StoredRecord) => {
    const decoded = run.entry.decodeSuccess(record.result)
    if (Exit.isFailure(decoded) || record.resultText === null) {
      return Effect.fail(
        new ToolExecutionFailed({
          keyHash: run.key,
          toolName: run.entry.name,
          classification: "applied",
          retryable: false,
          replayed: true,
          failure: null,
          detail: "the recorded result no longer matches the tool's success schema"
        })
      )
    }
    return Effect.succeed<ToolExecutor.Outcome<unknown>>({
      _tag: "Replayed",
      value: decoded.value,
      encoded: record.result,
      json: record.resultText,
      key: run.key,
      waited: run.waited,
      argumentChanges: changesFrom(run, record)
    })
  }

  /** A stored terminal failure, answered as the execution answered it. */
  const replayFailure = (run: Run, record: IdempotencyStore.StoredRecord): Effect.Effect<never, ExecutionError> => {
    const stored = StoredError.decode(record.error)
    if (stored?._tag === "ResultTooLarge") {
      return Effect.fail(
        new ResultTooLarge({ keyHash: run.key, toolName: run.entry.name, ...stored, replayed: true })
      )
    }
    const decoded = stored?._tag === "ToolFailure" && stored.failure !== null
      ? run.entry.decodeFailure(stored.failure)
      : undefined
    return Effect.fail(
      new ToolExecutionFailed({
        keyHash: run.key,
        toolName: run.entry.name,
        classification: "applied",
        retryable: false,
        replayed: true,
        failure: decoded === undefined
          ? null
          : Exit.isSuccess(decoded)
          ? decoded.value
          : stored?._tag === "ToolFailure"
          ? stored.failure
          : null,
        detail: stored !== null && "detail" in stored ? stored.detail : "recorded failure"
      })
    )
  }

  /** The answer to a claim that the record returned with it prevented. */
  const answer = (run: Run, record: IdempotencyStore.StoredRecord): Effect.Effect<
    ToolExecutor.Outcome<unknown>,
    ExecutionError | Busy
  > => {
    const decision = decide(record, run, record.readAt)
    switch (decision._tag) {
      case "ClaimAgain":
        return Effect.fail(claimAgain())
      case "Wait":
        return Effect.fail(new Busy({ retryAfterMs: decision.retryAfterMs }))
      case "Mismatch":
        return Effect.fail(
          new IdempotencyKeyReused({
            keyHash: run.key,
            toolName: run.entry.name,
            storedFingerprint: record.fingerprint,
            fingerprint: run.fingerprint,
            ...mismatchAt(run, record)
          })
        )
      case "Replay":
        return replayResult(run, record)
      case "ReplayFailure":
        return replayFailure(run, record)
      case "Exhausted":
        return Effect.fail(
          new AttemptsExhausted({
            keyHash: run.key,
            toolName: run.entry.name,
            attempts: record.attempt,
            maxAttempts: record.maxAttempts,
            lastError: StoredError.decode(record.error)
          })
        )
      case "Unknown":
        return Effect.fail(unknown(run, record.generation, decision.reason, record.attempt))
      case "ParkExpired":
        return retryStore(store.parkExpired(record)).pipe(
          Effect.flatMap((parked): Effect.Effect<never, Busy | OutcomeUnknown> =>
            Option.isNone(parked)
              ? Effect.fail(claimAgain())
              : Effect.fail(unknown(run, record.generation, decision.reason, record.attempt))
          )
        )
    }
  }

  /**
   * Runs the handler of a won claim (after a reconcile probe on takeovers) and settles it. The
   * handler's duration (executor clock, ms) is kept on the run; the final tap records it.
   */
  const runClaimed = (run: Run, lease: IdempotencyStore.Lease): Effect.Effect<
    ToolExecutor.Outcome<unknown>,
    ExecutionError
  > =>
    Effect.uninterruptibleMask((restore) =>
      Effect.clockWith((clock) => {
        const { call, entry } = run
        const context = new LiveContext(run, lease)
        const t0 = clock.currentTimeMillisUnsafe()
        const deadline = t0 + entry.timeoutMs
        const guarded = <A>(effect: Effect.Effect<A, unknown, unknown>) =>
          restore(supervised(entry, lease, context, effect, t0, deadline))
        const handler = Effect.flatMap(
          Effect.exit(guarded(Effect.suspend(() => entry.handler.run(call.params, context)))),
          (exit) => {
            run.handlerMs = clock.currentTimeMillisUnsafe() - t0
            return Exit.isSuccess(exit)
              ? settle.finish(run, lease, context, exit.value, false)
              : settle.failed(run, lease, context, exit.cause)
          }
        )
        if (!context.takeover) return handler
        const probe = entry.handler.probe
        return Effect.andThen(
          ExecutionMetrics.count("takeover"),
          entry.recovery !== "reconcile" || probe === undefined ? handler : Effect.gen(function*() {
            const probed = yield* Effect.exit(guarded(Effect.suspend(() => probe(call.params, context))))
            if (Exit.isFailure(probed)) {
              const error = Settle.lastFailure(probed.cause)
              if (
                error instanceof LeaseLost || error instanceof HandlerTimedOut || Cause.hasInterrupts(probed.cause)
              ) {
                return yield* settle.failed(run, lease, context, probed.cause)
              }
              return yield* settle.parkOwn(run, lease, context, "probe_failed", "the reconcile probe failed")
            }
            if (Option.isSome(probed.value)) {
              yield* ExecutionMetrics.count("reconciled")
              return yield* settle.finish(run, lease, context, probed.value.value, true)
            }
            return yield* handler
          })
        )
      })
    )

  /** The claim request of a run. */
  const claimOf = (run: Run): IdempotencyStore.ClaimRequest => ({
    scope: run.tenant,
    key: run.key,
    tool: run.entry.name,
    fingerprint: run.fingerprint,
    arguments: run.arguments,
    owner: run.owner,
    leaseMs: run.entry.leaseMs,
    retentionMs: config.retentionMs,
    maxAttempts: run.entry.maxAttempts,
    recovery: run.entry.recovery
  })

  /** What a claim leads to: the handler's run when won, else the answer of the record. */
  const claimed = (
    run: Run,
    claim: IdempotencyStore.Claim
  ): Effect.Effect<ToolExecutor.Outcome<unknown>, ExecutionError | Busy> =>
    claim._tag === "Claimed" ? runClaimed(run, claim.lease) : answer(run, claim.record)

  /** One claim round: the outcome, a typed failure, or `Busy` while another lease is live. */
  const round = (run: Run): Effect.Effect<ToolExecutor.Outcome<unknown>, ExecutionError | Busy> =>
    retryStore(store.claim(claimOf(run))).pipe(
      // the lease, retention and attempts were validated at construction; the store cannot refuse them
      Effect.catchTag("InvalidStoreRequest", Effect.die),
      Effect.flatMap((claim) => claimed(run, claim))
    )

  /**
   * Polls the claim on the wait schedule after a first `Busy`, then gives up with
   * `ExecutionInProgress`. (Set up only when needed: the usual execution never waits.)
   */
  const wait = (run: Run, first: Busy): Effect.Effect<ToolExecutor.Outcome<unknown>, ExecutionError> => {
    run.waited = true
    let pending: Busy | undefined = first
    const again = Effect.suspend(() => {
      if (pending === undefined) return round(run)
      const busy = pending
      pending = undefined
      return Effect.fail(busy)
    })
    return ExecutionMetrics.count("waited").pipe(
      Effect.andThen(Effect.retry(again, { schedule: config.waitSchedule, while: isBusy })),
      Effect.catchTag("Busy", (busy) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.fail(
            new ExecutionInProgress({
              keyHash: run.key,
              toolName: run.entry.name,
              retryAfterMs: busy.retryAfterMs,
              waitedMs: now - run.started
            })
          )))
    )
  }

  /** The run of a call: its entry, key, fingerprint and owner token, or why it cannot be keyed. */
  const prepare = (
    call: ToolCall.ValidatedToolCall,
    execution: ToolExecutor.ExecuteOptions,
    material: IdempotencyKey.Material | undefined,
    started: number
  ): Result.Result<Run, IdempotencyKey.KeyError> => {
    const entry = config.entries.get(call.name)
    if (entry === undefined) throw new Error(`ToolExecutor: tool ${call.name} is not in the executor's toolkit`)
    const keys = IdempotencyKey.forCallSync(call, {
      scope: execution.scope,
      ordinal: execution.ordinal,
      strategy: execution.strategy,
      digest: nodeDigest,
      material,
      policy: entry.policy
    })
    if (Result.isFailure(keys)) return Result.fail(keys.failure)
    const args = keys.success.material.arguments
    return Result.succeed({
      call,
      entry,
      key: keys.success.key,
      fingerprint: keys.success.fingerprint,
      // the length bounds the UTF-8 bytes from below; count them only near the limit
      arguments: args.length * 3 <= maxStoredBytes || Buffer.byteLength(args, "utf8") <= maxStoredBytes ? args : null,
      tenant: execution.scope.tenant,
      owner: `${instance}:${++executions}`,
      started,
      handlerMs: undefined,
      waited: false,
      parkedOnInterrupt: false
    })
  }

  /** A claim made ahead by a batch: the claim, or the batch's store failure. */
  type Ahead = IdempotencyStore.Claim | StoreUnavailable | undefined

  /**
   * One execution from its prepared run (`ahead`: its claim, when a batch made it already): the
   * span `ToolExecutor.execute` (with the key hash and tool name), then the claim's outcome,
   * waiting while another lease is live. The span is opened only when a tracing backend is
   * installed, and captures no call-site stack trace (`spans.traced`).
   */
  const executeRun = (
    prepared: Result.Result<Run, IdempotencyKey.KeyError>,
    ahead: Ahead
  ): Effect.Effect<ToolExecutor.Outcome<unknown>, ExecutionError> => {
    if (Result.isFailure(prepared)) {
      return traced("ToolExecutor.execute")(Effect.fail(prepared.failure))
    }
    const run = prepared.success
    const outcome = ahead instanceof StoreUnavailable ? Effect.fail(ahead) : Effect.catchIf(
      ahead === undefined ? round(run) : claimed(run, ahead),
      isBusy,
      (busy) => wait(run, busy)
    )
    return traced("ToolExecutor.execute", { "toolgate.key": run.key, "toolgate.tool": run.entry.name })(outcome)
  }

  /** Executes a prepared run; the one place its outcome is counted. */
  const counted = (
    prepared: Result.Result<Run, IdempotencyKey.KeyError>,
    ahead: Ahead
  ): Effect.Effect<ToolExecutor.Outcome<unknown>, ExecutionError> =>
    executeRun(prepared, ahead).pipe(
      Effect.onExit((exit) => Settle.tap(Result.isSuccess(prepared) ? prepared.success : undefined, exit))
    )

  /** Executes one call. */
  const execute = (
    call: ToolCall.ValidatedToolCall,
    execution: ToolExecutor.ExecuteOptions
  ): Effect.Effect<ToolExecutor.Outcome<unknown>, ExecutionError> =>
    Effect.clockWith((clock) =>
      counted(prepare(call, execution, undefined, clock.currentTimeMillisUnsafe()), undefined)
    )

  /**
   * Claims the runs that start at once (the first `concurrency` keyed ones) in one batch, one
   * entry per run (`undefined`: claims when it starts); the later ones claim when they start, so
   * no lease runs down while its call waits for a slot.
   */
  const claimAhead = (
    runs: ReadonlyArray<Result.Result<Run, IdempotencyKey.KeyError>>,
    concurrency: number
  ): Effect.Effect<ReadonlyArray<Ahead>> => {
    const first: Array<Run> = []
    const at: Array<number> = []
    for (let i = 0; i < runs.length && first.length < concurrency; i++) {
      const run = runs[i]
      if (Result.isSuccess(run)) {
        first.push(run.success)
        at.push(i)
      }
    }
    if (first.length < 2) return Effect.succeed([])
    return retryStore(store.claimMany(first.map(claimOf))).pipe(
      // the lease, retention and attempts were validated at construction; the store cannot refuse them
      Effect.catchTag("InvalidStoreRequest", Effect.die),
      Effect.map((claims): ReadonlyArray<Ahead> => claims),
      Effect.catchTag("StoreUnavailable", (e) => Effect.succeed(first.map(() => e))),
      Effect.map((claims) => {
        const ahead: Array<Ahead> = Array.from({ length: runs.length }, () => undefined)
        at.forEach((i, n) => (ahead[i] = claims[n]))
        return ahead
      })
    )
  }

  /** A turn's calls, in the span `ToolExecutor.executeAll` (no call-site stack capture, as `execute`). */
  const executeAll = Effect.fnUntraced(function*(
    calls: ReadonlyArray<ToolCall.ValidatedToolCall>,
    turn: ToolExecutor.ExecuteAllOptions
  ) {
    const occurrences = turn.occurrences ?? new IdempotencyKey.Occurrences()
    const now = yield* Clock.currentTimeMillis
    const runs = calls.map((call) => {
      const material = IdempotencyKey.materialOf(call, config.entries.get(call.name)?.policy)
      const ordinal = material._tag === "Success" ? occurrences.next(material.success) : 0
      const execution = { scope: turn.scope, strategy: turn.strategy, ordinal }
      return prepare(call, execution, material._tag === "Success" ? material.success : undefined, now)
    })
    const concurrency = turn.concurrency ?? config.concurrency
    const ahead = yield* claimAhead(runs, concurrency)
    return yield* Effect.forEach(
      runs,
      (run, i) =>
        Effect.result(
          ahead[i] !== undefined || Result.isFailure(run)
            ? counted(run, ahead[i])
            // it claims only now (after waiting for a slot): its wait is counted from here
            : Effect.flatMap(Clock.currentTimeMillis, (at) => ((run.success.started = at), counted(run, undefined)))
        ),
      { concurrency }
    )
  }, Effect.withSpan("ToolExecutor.executeAll", undefined, { captureStackTrace: false }))

  return { execute, executeAll }
}
