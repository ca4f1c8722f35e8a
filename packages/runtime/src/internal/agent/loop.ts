/**
 * The agent loop, step by step. A step is acquired from the journal (a won claim: ask the model;
 * a recorded step: replay it; a lease elsewhere: wait and claim again), then decided (its calls
 * validated — and, for a step asked now, its output recorded under the lease) and executed; the
 * next step's prompt is the transcript so far. The outputs are one pull-based stream: nothing of
 * step n + 1 happens before the consumer pulls past step n's `StepCompleted`, so a consumer that
 * stops there (a worker shutting down) leaves no step claimed.
 *
 * (Why one long module: acquiring, deciding and executing a step share the turn's state, the
 * transcript, the occurrences and the cost, and read in the order a step runs.)
 *
 * @internal
 */
import { Assembler, IdempotencyKey, ModelStream, ModelStreamError, type StreamEvent, ToolCall } from "@toolgate/core"
import type { Prompt, Tool } from "effect/ai"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import * as Agent from "../../Agent.js"
import type { StoreUnavailable } from "../../ExecutionError.js"
import * as StepJournal from "../../StepJournal.js"
import * as ToolCallPipeline from "../../ToolCallPipeline.js"
import * as ToolExecutor from "../../ToolExecutor.js"
import * as MetricSeries from "../metricSeries.js"
import * as StepStream from "../stepStream.js"
import { type Config, configure } from "./config.js"
import * as Transcript from "./transcript.js"

/** What the agent needs in context. @internal */
export type Requirements = ModelStream.ModelStream | ToolExecutor.ToolExecutor | StepJournal.StepJournal

/** A live lease elsewhere, or a step to claim again (an internal signal for the wait schedule). */
class Busy extends Data.TaggedError("Busy")<{ readonly retryAfterMs: number }> {}

/** How a step was acquired. */
type Acquired =
  | { readonly _tag: "Live"; readonly lease: StepJournal.StepLease }
  | { readonly _tag: "Replay"; readonly output: StepJournal.StepOutput }

/** A step's decision: its output and validated calls, and what asking for it cost now. */
interface Decision {
  readonly output: StepJournal.StepOutput
  readonly calls: ReadonlyArray<ToolCall.ValidatedToolCall>
  readonly replayed: boolean
  readonly attempts: number
  readonly failed: Agent.FailedAttempts
}

const noFailures: Agent.FailedAttempts = { attempts: 0, inputTokens: 0, outputTokens: 0 }

/** Fails with `StreamAborted` when the caller's signal fires (at once when it has): a wait ends there. */
const aborted = (signal: AbortSignal): Effect.Effect<never, ModelStreamError.StreamAborted> =>
  Effect.callback<void>((resume) => {
    if (signal.aborted) {
      resume(Effect.void)
      return
    }
    const onAbort = () => resume(Effect.void)
    signal.addEventListener("abort", onAbort, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", onAbort))
  }).pipe(
    Effect.andThen(
      Effect.fail(
        new ModelStreamError.StreamAborted({
          finishReason: null,
          reason: "the caller's signal fired while another worker held the step"
        })
      )
    )
  )

/** A step whose lease is lost more often than this fails with `StepLeaseLost`. */
const maxLeaseLosses = 3

const storeRetry = Schedule.exponential(Duration.millis(50), 2).pipe(Schedule.upTo({ times: 3 }))

/** A journal operation, retried while the store is unavailable for a retryable reason (each is safe to repeat). */
const retryStore = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.retry(effect, {
    schedule: storeRetry,
    while: (e) => e._tag === "StoreUnavailable" && (e as unknown as StoreUnavailable).retryable
  })

/** The assembled turn of a recorded output, so its calls are validated as a live turn's are. */
const assembledOf = (output: StepJournal.StepOutput): Assembler.AssembledTurn | ToolCall.ToolArgumentsInvalid => {
  const toolCalls: Array<Assembler.AssembledToolCall> = []
  for (const call of output.calls) {
    let parsed: unknown
    try {
      parsed = call.argumentsText === "" ? {} : JSON.parse(call.argumentsText)
    } catch {
      parsed = undefined
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      return ToolCall.argumentsInvalid(call, [{ path: [], message: "the journaled arguments are not a JSON object" }])
    }
    toolCalls.push(new Assembler.AssembledToolCall({ ...call, arguments: parsed as Record<string, unknown> }))
  }
  return new Assembler.AssembledTurn({
    text: output.text,
    toolCalls,
    finishReason: output.finishReason,
    ...(output.usage === null ? {} : { usage: output.usage })
  }, { disableChecks: true })
}

const sum = (values: ReadonlyArray<number | undefined>): number | undefined =>
  values.some((v) => v !== undefined) ? values.reduce<number>((n, v) => n + (v ?? 0), 0) : undefined

/** The turn's usage: each field summed over the steps that reported it. */
const usageOf = (steps: ReadonlyArray<Agent.StepResult>): StreamEvent.Usage => {
  const out: { -readonly [K in keyof StreamEvent.Usage]: StreamEvent.Usage[K] } = {}
  for (const field of ["inputTokens", "outputTokens", "totalTokens", "cachedInputTokens"] as const) {
    const total = sum(steps.map((s) => s.usage?.[field]))
    if (total !== undefined) out[field] = total
  }
  return out
}

/** The agent's `run`, over the services in context. @internal */
export const make: Effect.Effect<Agent.Service["run"], never, Requirements> = Effect.gen(function*() {
  const model = yield* ModelStream.ModelStream
  const executor = yield* ToolExecutor.ToolExecutor
  const journal = yield* StepJournal.StepJournal
  const provider = { provider: model.provider }
  const instance = randomUUID().slice(0, 8)
  let runs = 0

  const count = (metric: Metric.Metric<number, unknown>, by: number, attributes: Record<string, string>) =>
    MetricSeries.count(metric, by, { ...provider, ...attributes })

  const turnOf = <Tools extends Record<string, Tool.Any>>(
    request: ModelStream.ModelRequest,
    options: Agent.RunOptions<Tools>,
    config: Config
  ): Stream.Stream<Agent.Output, Agent.AgentError> =>
    Stream.unwrap(Effect.gen(function*() {
      const deadline = (yield* Clock.currentTimeMillis) + config.deadlineMs
      const owner = `${instance}:${++runs}`
      const ref: StepJournal.TurnRef = { tenant: options.scope.tenant, turn: options.scope.turn }
      const fingerprint = Transcript.fingerprint(request.prompt)
      const tools = request.tools ?? ModelStream.toolsOf(options.toolkit)
      const occurrences = new IdempotencyKey.Occurrences()
      const steps: Array<Agent.StepResult> = []
      let prompt: Prompt.Prompt = request.prompt
      let requests = 0
      let requestsSaved = 0
      // this run's requests, counted where they are made
      const respond = StepStream.make({
        provider: model.provider,
        stream: (req, attempt) =>
          Stream.suspend(() => {
            requests++
            return model.stream(req, attempt)
          })
      })
      const budget: StepStream.Budget = {
        deadline,
        deadlineMs: config.deadlineMs,
        signal: options.signal,
        retry: options.retry,
        assembly: options.assembly,
        isRetryable: options.retry?.isRetryable ?? ToolCallPipeline.isRetryable
      }
      const failStep = (step: number) => (error: Agent.StepError) => new Agent.StepFailed({ step, error })

      /** One claim round: the lease, the recorded output, or `Busy`. */
      const round = (step: number): Effect.Effect<Acquired, Agent.StepError | Busy> =>
        retryStore(journal.claim({
          ...ref,
          step,
          fingerprint,
          owner,
          leaseMs: config.leaseMs,
          retentionMs: config.retentionMs
        })).pipe(
          Effect.flatMap((claim): Effect.Effect<Acquired, Agent.StepError | Busy> => {
            if (claim._tag === "Claimed") return Effect.succeed({ _tag: "Live", lease: claim.lease })
            const found = claim.step
            if (found.fingerprint !== fingerprint) {
              return Effect.fail(
                new StepJournal.JournalMismatch({
                  turn: ref.turn,
                  step,
                  storedFingerprint: found.fingerprint,
                  fingerprint
                })
              )
            }
            if (found.status === "recorded" && found.output !== null) {
              return Effect.succeed({ _tag: "Replay", output: found.output })
            }
            // a live lease elsewhere: wait; a step released or expired meanwhile: claim again
            return Effect.fail(
              new Busy({ retryAfterMs: found.status === "in_progress" && !found.leaseExpired ? found.retryAfterMs : 0 })
            )
          })
        )

      /** Claims the step, waiting (bounded by `waitMs` and the deadline) while another worker holds it. */
      const acquire = (step: number): Effect.Effect<Acquired, Agent.StepError> =>
        Effect.gen(function*() {
          const started = yield* Clock.currentTimeMillis
          return yield* round(step).pipe(
            Effect.catchTag("Busy", (first) => {
              let pending: Busy | undefined = first
              const again = Effect.suspend(() => {
                if (pending === undefined) return round(step)
                const busy = pending
                pending = undefined
                return Effect.fail(busy)
              })
              const waitMs = Math.max(0, Math.min(config.waitMs, deadline - started))
              const waited = Effect.retry(again, {
                schedule: config.wait.pipe(Schedule.upTo({ duration: Duration.millis(waitMs) })),
                while: (e) => e._tag === "Busy"
              })
              const signal = options.signal
              return (signal === undefined ? waited : Effect.raceFirst(waited, aborted(signal))).pipe(
                Effect.catchTag("Busy", (busy) =>
                  Effect.flatMap(Clock.currentTimeMillis, (now) =>
                    Effect.fail(
                      new StepJournal.StepInProgress({
                        turn: ref.turn,
                        step,
                        retryAfterMs: busy.retryAfterMs,
                        waitedMs: now - started
                      })
                    )))
              )
            })
          )
        })

      /** Extends the lease while the model streams; fails with `StepLeaseLost` once it is taken over. */
      const heartbeat = (lease: StepJournal.StepLease): Effect.Effect<never, StepJournal.StepLeaseLost> =>
        Effect.gen(function*() {
          for (;;) {
            yield* Effect.sleep(Duration.millis(config.heartbeatMs))
            yield* journal.heartbeat(lease, { leaseMs: config.leaseMs }).pipe(
              // an unreachable store is tried again at the next beat (the lease may lapse meanwhile)
              Effect.catchTag("StoreUnavailable", () => Effect.void),
              // the lease was checked with the options; the journal cannot refuse it
              Effect.catchTag("InvalidStepRequest", Effect.die)
            )
          }
        })

      const stepAt = (step: number, leaseLosses = 0): Stream.Stream<Agent.Output, Agent.AgentError> =>
        Stream.unwrap(
          acquire(step).pipe(
            Effect.mapError(failStep(step)),
            Effect.map((acquired) =>
              acquired._tag === "Replay" ? replayed(step, acquired.output) : live(step, acquired.lease, leaseLosses)
            )
          )
        )

      /** A journaled step: its text, then its calls as recorded, validated again. */
      const replayed = (
        step: number,
        output: StepJournal.StepOutput
      ): Stream.Stream<Agent.Output, Agent.AgentError> => {
        const started: Array<Agent.Output> = [{ _tag: "StepStarted", step, replayed: true }]
        if (output.text !== "") started.push({ _tag: "TextDelta", step, text: output.text, attempt: output.attempts })
        const decide = Effect.gen(function*() {
          const turn = assembledOf(output)
          if (turn instanceof ToolCall.ToolArgumentsInvalid) return yield* turn
          const calls = yield* ToolCall.validate(options.toolkit)(turn)
          return {
            output,
            calls: calls as ReadonlyArray<ToolCall.ValidatedToolCall>,
            replayed: true,
            attempts: output.attempts,
            failed: noFailures
          } satisfies Decision
        }).pipe(Effect.mapError(failStep(step)))
        return Stream.fromIterable(started).pipe(
          Stream.concat(Stream.unwrap(Effect.map(decide, (decision) => execute(step, decision))))
        )
      }

      /**
       * A step asked of the model under its lease: the stream (with a heartbeat beside it), then
       * validation and the fenced record. Until it is recorded, any exit releases the lease; a lease
       * lost on the way claims the step again.
       */
      const live = (
        step: number,
        lease: StepJournal.StepLease,
        leaseLosses: number
      ): Stream.Stream<Agent.Output, Agent.AgentError> => {
        const stepRequest: ModelStream.ModelRequest = { ...request, prompt, tools }
        let assembled: Extract<StepStream.Emitted, { _tag: "Assembled" }> | undefined
        let decision: Decision | undefined
        let lost: StepJournal.StepLeaseLost | undefined
        const record = Effect.gen(function*() {
          const { attempts, failed, turn } = assembled!
          const calls = yield* ToolCall.validate(options.toolkit)(turn)
          const output: StepJournal.StepOutput = {
            text: turn.text,
            calls: turn.toolCalls.map((c) => ({
              index: c.index,
              id: c.id,
              name: c.name,
              argumentsText: c.argumentsText
            })),
            finishReason: turn.finishReason,
            usage: turn.usage ?? null,
            attempts
          }
          yield* retryStore(journal.record(lease, { output, retentionMs: config.retentionMs }))
          decision = {
            output,
            calls: calls as ReadonlyArray<ToolCall.ValidatedToolCall>,
            replayed: false,
            attempts,
            failed
          }
        })
        const phase = Stream.make<Array<Agent.Output>>({ _tag: "StepStarted", step, replayed: false }).pipe(
          Stream.concat(
            respond(stepRequest, budget).pipe(
              Stream.merge(Stream.fromEffectDrain(heartbeat(lease)), { haltStrategy: "left" }),
              Stream.filterMap((emitted): Result.Result<Agent.Output, void> => {
                switch (emitted._tag) {
                  case "Assembled":
                    assembled = emitted
                    return Result.failVoid
                  case "TextDelta":
                    return Result.succeed({ _tag: "TextDelta", step, text: emitted.text, attempt: emitted.attempt })
                  case "AttemptFailed":
                    return Result.succeed({
                      _tag: "AttemptFailed",
                      step,
                      attempt: emitted.attempt,
                      error: emitted.error,
                      retryInMs: emitted.retryInMs
                    })
                }
              })
            )
          ),
          Stream.concat(Stream.fromEffectDrain(record)),
          // nothing was decided: let the next claimant ask (a lost lease changes nothing: ignored)
          Stream.onExit(() => decision === undefined ? Effect.ignore(journal.release(lease)) : Effect.void),
          Stream.catch((error: Agent.StepError): Stream.Stream<Agent.Output, Agent.AgentError> => {
            if (error._tag === "StepLeaseLost" && leaseLosses + 1 < maxLeaseLosses) {
              lost = error
              return Stream.make({
                _tag: "AttemptFailed",
                step,
                attempt: assembled?.attempts ?? 0,
                error,
                retryInMs: 0
              })
            }
            return Stream.fail(failStep(step)(error))
          })
        )
        return phase.pipe(
          Stream.concat(
            Stream.unwrap(
              Effect.sync(() => lost !== undefined ? stepAt(step, leaseLosses + 1) : execute(step, decision!))
            )
          )
        )
      }

      /** Runs a decided step's calls, appends it to the transcript, and goes on or ends the turn. */
      const execute = (step: number, decision: Decision): Stream.Stream<Agent.Output, Agent.AgentError> =>
        Stream.unwrap(Effect.gen(function*() {
          const { calls, output } = decision
          const results = calls.length === 0 ? [] : yield* executor.executeAll(calls, {
            scope: options.scope,
            strategy: options.strategy,
            occurrences,
            concurrency: options.concurrency
          })
          const callResults = calls.map((call, i): ToolCallPipeline.CallResult => ({
            index: call.index,
            id: call.id,
            name: call.name,
            arguments: call.arguments,
            outcome: ToolCallPipeline.toOutcome(results[i]!)
          }))
          const result: Agent.StepResult = {
            step,
            replayed: decision.replayed,
            text: output.text,
            finishReason: output.finishReason,
            usage: output.usage ?? undefined,
            attempts: decision.attempts,
            failed: decision.failed,
            calls: callResults
          }
          steps.push(result)
          prompt = Transcript.append(prompt, output, callResults)
          yield* count(Agent.metrics.steps, 1, { source: decision.replayed ? "journal" : "model" })
          if (decision.replayed) {
            requestsSaved += output.attempts
            yield* count(Agent.metrics.requestsSaved, output.attempts, {})
            yield* count(Agent.metrics.tokensSaved, output.usage?.inputTokens ?? 0, { kind: "input" })
            yield* count(Agent.metrics.tokensSaved, output.usage?.outputTokens ?? 0, { kind: "output" })
          } else {
            for (const kind of ["input", "output"] as const) {
              const tokens = output.usage?.[kind === "input" ? "inputTokens" : "outputTokens"]
              if (tokens !== undefined) {
                yield* Metric.update(
                  MetricSeries.withAttributes(Agent.metrics.stepTokens, { ...provider, kind }),
                  tokens
                )
              }
            }
          }
          const outputs: Array<Agent.Output> = callResults.map((call) => ({ _tag: "CallCompleted", step, call }))
          outputs.push({ _tag: "StepCompleted", result })
          const stoppedBy: Agent.StoppedBy | undefined = calls.length === 0
            ? "answer"
            : options.stopWhen?.(result, steps) === true
            ? "stop_predicate"
            : step >= config.maxSteps
            ? "max_steps"
            : undefined
          if (stoppedBy === undefined) return Stream.fromIterable(outputs).pipe(Stream.concat(stepAt(step + 1)))
          yield* count(Agent.metrics.turns, 1, { outcome: stoppedBy })
          outputs.push({ _tag: "TurnCompleted", result: turnResult(stoppedBy) })
          return Stream.fromIterable(outputs)
        }))

      const turnResult = (stoppedBy: Agent.StoppedBy): Agent.TurnResult => {
        const last = steps[steps.length - 1]!
        const asked = steps.filter((s) => !s.replayed)
        const replays = steps.filter((s) => s.replayed)
        const total = (list: ReadonlyArray<Agent.StepResult>, f: (s: Agent.StepResult) => number) =>
          list.reduce((n, s) => n + f(s), 0)
        return {
          text: last.text,
          finishReason: last.finishReason,
          stoppedBy,
          steps,
          transcript: prompt,
          usage: usageOf(steps),
          cost: {
            modelRequests: requests,
            inputTokens: total(asked, (s) => s.usage?.inputTokens ?? 0),
            outputTokens: total(asked, (s) => s.usage?.outputTokens ?? 0),
            failedAttempts: total(steps, (s) => s.failed.attempts),
            failedInputTokens: total(steps, (s) => s.failed.inputTokens),
            failedOutputTokens: total(steps, (s) => s.failed.outputTokens),
            stepsReplayed: replays.length,
            requestsSaved,
            savedInputTokens: total(replays, (s) => s.usage?.inputTokens ?? 0),
            savedOutputTokens: total(replays, (s) => s.usage?.outputTokens ?? 0)
          }
        }
      }

      return stepAt(1).pipe(
        Stream.tapError((error) =>
          count(Agent.metrics.turns, 1, { outcome: error._tag === "StepFailed" ? error.error._tag : error._tag })
        )
      )
    }))

  return <Tools extends Record<string, Tool.Any>>(
    request: ModelStream.ModelRequest,
    options: Agent.RunOptions<Tools>
  ): Stream.Stream<Agent.Output, Agent.AgentError> => {
    const config = configure(options)
    return Result.isFailure(config) ? Stream.fail(config.failure) : turnOf(request, options, config.success)
  }
})
