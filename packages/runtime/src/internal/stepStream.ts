/**
 * One model response under the pipeline's retry policy: the request streamed through the
 * `ModelStream`, assembled, and retried (a fresh request) while the failure is retryable, the
 * back-off schedule has room and the deadline is not reached. Text is emitted as it arrives,
 * tagged with its attempt; a retried attempt is announced; the last element is the assembled
 * response with what its attempts cost. `ToolCallPipeline` (one response) and `Agent` (one per
 * step) share it, so a step of the loop is retried exactly as a turn of the pipeline is.
 *
 * Cost of an attempt that does not complete: the usage it reported before failing (Anthropic
 * reports the input tokens at `message_start`), else, for the input, the completed attempt's
 * input tokens (the same request, so the same prompt: an estimate); for the output, the larger of
 * the reported output tokens and the deltas received (about one token each on OpenAI-style
 * streams).
 *
 * @internal
 */
import { Assembler, type AssemblyError, type ModelStream, ModelStreamError, type StreamEvent } from "@toolgate/core"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type * as ToolCallPipeline from "../ToolCallPipeline.js"
import * as MetricSeries from "./metricSeries.js"

/** The failures of one response (the pipeline's `PipelineError` without validation). @internal */
export type StepStreamError = AssemblyError.AssemblyError | ModelStreamError.ModelStreamError

/** What one response is granted. @internal */
export interface Budget {
  /** The absolute deadline, ms on effect's `Clock`. */
  readonly deadline: number
  /** The whole budget it came from (the `budgetMs` of a deadline `StreamTimeout`). */
  readonly deadlineMs: number
  readonly signal?: AbortSignal | undefined
  /** Its schedule (`isRetryable` is read from `isRetryable` below). */
  readonly retry?: ToolCallPipeline.RetryPolicy | undefined
  readonly assembly?: Assembler.Options | undefined
  readonly isRetryable: (error: StepStreamError) => boolean
}

/** What the attempts that did not complete cost, in tokens. @internal */
export interface FailedCost {
  readonly attempts: number
  readonly inputTokens: number
  readonly outputTokens: number
}

/** @internal */
export type Emitted =
  | { readonly _tag: "TextDelta"; readonly text: string; readonly attempt: number }
  | {
    readonly _tag: "AttemptFailed"
    readonly attempt: number
    readonly error: StepStreamError
    readonly retryInMs: number
  }
  | {
    readonly _tag: "Assembled"
    readonly turn: Assembler.AssembledTurn
    readonly attempts: number
    readonly failed: FailedCost
  }

/** The pipeline's metrics (documented on `ToolCallPipeline.metrics`). @internal */
export const metrics = {
  streamsStarted: Metric.counter("toolgate_streams_started_total", { description: "stream attempts started" }),
  streams: Metric.counter("toolgate_streams_total", { description: "stream attempts by outcome" }),
  retries: Metric.counter("toolgate_stream_retries_total", { description: "stream attempts that were retried" }),
  deltasReceived: Metric.counter("toolgate_stream_deltas_received_total", {
    description: "text and tool-argument deltas received, failed and aborted attempts included"
  }),
  usageOutputTokens: Metric.counter("toolgate_stream_usage_output_tokens_total", {
    description: "output tokens reported by the provider's usage"
  }),
  failedAttemptTokens: Metric.counter("toolgate_stream_failed_attempt_tokens_total", {
    description: "tokens spent on stream attempts that did not complete (failed, aborted, interrupted), by kind"
  }),
  toolCallsAssembled: Metric.counter("toolgate_tool_calls_assembled_total", {
    description: "tool calls released by assembly"
  })
} as const

const count = MetricSeries.count

/**
 * Completes when the signal fires (at once when it already has): a back-off ends there, and the
 * next attempt's model stream fails with `StreamAborted` before sending anything.
 */
const untilAborted = (signal: AbortSignal) =>
  Effect.callback<void>((resume) => {
    if (signal.aborted) {
      resume(Effect.void)
      return
    }
    const onAbort = () => resume(Effect.void)
    signal.addEventListener("abort", onAbort, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", onAbort))
  })

/** One response of `model` to `request` within `budget`. @internal */
export const make = (model: ModelStream.ModelStream["Service"]) => {
  const provider = { provider: model.provider }
  return (request: ModelStream.ModelRequest, budget: Budget): Stream.Stream<Emitted, StepStreamError> =>
    Stream.unwrap(Effect.gen(function*() {
      const maxDelayMs = budget.retry?.maxDelayMs ?? 8_000
      const step = yield* Schedule.toStep(
        Schedule.exponential(Duration.millis(budget.retry?.baseDelayMs ?? 250), 2).pipe(
          Schedule.jittered,
          Schedule.upTo({ times: budget.retry?.maxRetries ?? 3 })
        )
      )
      const { deadline, signal } = budget
      // An attempt's `total` budget is what is left of the whole: report the whole budget. Built
      // when it happens: an error (its stack captured) costs tens of µs inside a step's fiber.
      const overDeadline = () =>
        new ModelStreamError.StreamTimeout({
          finishReason: null,
          phase: "total",
          budgetMs: budget.deadlineMs
        })
      const backoff = (ms: number) =>
        signal === undefined
          ? Effect.sleep(Duration.millis(ms))
          : Effect.raceFirst(Effect.sleep(Duration.millis(ms)), untilAborted(signal))
      // the attempts that did not complete, and how many of them reported no input tokens
      let failedAttempts = 0
      let failedInput = 0
      let failedOutput = 0
      let unreportedInput = 0

      const attempt = (n: number): Stream.Stream<Emitted, StepStreamError> =>
        Stream.unwrap(Effect.gen(function*() {
          const remaining = deadline - (yield* Clock.currentTimeMillis)
          if (remaining <= 0) {
            return Stream.fail(overDeadline())
          }
          yield* count(metrics.streamsStarted, 1, provider)
          let deltas = 0
          let usage: StreamEvent.Usage | undefined
          let turn: Assembler.AssembledTurn | undefined
          let settled = false
          /** Books an attempt that did not complete: counted, its tokens added to the failed cost. */
          const fail = (outcome: string) =>
            Effect.suspend(() => {
              settled = true
              failedAttempts++
              const input = usage?.inputTokens
              const output = Math.max(usage?.outputTokens ?? 0, deltas)
              if (input === undefined) unreportedInput++
              else failedInput += input
              failedOutput += output
              return Effect.all([
                count(metrics.streams, 1, { ...provider, outcome }),
                count(metrics.deltasReceived, deltas, provider),
                count(metrics.failedAttemptTokens, input ?? 0, { ...provider, kind: "input" }),
                count(metrics.failedAttemptTokens, output, { ...provider, kind: "output" })
              ], { discard: true })
            })
          const events = model.stream(request, { number: n, remainingMs: remaining, signal }).pipe(
            Stream.mapError((error) =>
              error._tag === "StreamTimeout" && error.phase === "total" && error.budgetMs === remaining
                ? overDeadline()
                : error
            ),
            Stream.tap((event) =>
              Effect.sync(() => {
                if (event.text) deltas++
                if (event.toolCalls) deltas += event.toolCalls.length
                if (event.usage !== undefined) usage = usage === undefined ? event.usage : { ...usage, ...event.usage }
              })
            ),
            Assembler.stream(budget.assembly)
          )
          const outputs: Stream.Stream<Emitted, StepStreamError> = events.pipe(
            Stream.tap((output) =>
              Effect.sync(() => {
                if (output._tag === "TurnCompleted") turn = output.turn
              })
            ),
            Stream.filter((output): output is Assembler.TextDelta => output._tag === "TextDelta"),
            Stream.map((output): Emitted => ({ _tag: "TextDelta", text: output.text, attempt: n }))
          )
          const assembled = Effect.gen(function*() {
            settled = true
            const completed = turn!
            yield* count(metrics.streams, 1, { ...provider, outcome: "completed" })
            yield* count(metrics.deltasReceived, deltas, provider)
            yield* count(metrics.usageOutputTokens, completed.usage?.outputTokens ?? 0, provider)
            yield* count(metrics.toolCallsAssembled, completed.toolCalls.length, provider)
            // attempts that reported no input: they sent the same prompt as the completed one
            const estimated = unreportedInput * (completed.usage?.inputTokens ?? 0)
            yield* count(metrics.failedAttemptTokens, estimated, { ...provider, kind: "input" })
            return {
              _tag: "Assembled",
              turn: completed,
              attempts: n,
              failed: { attempts: failedAttempts, inputTokens: failedInput + estimated, outputTokens: failedOutput }
            } satisfies Emitted
          })
          return outputs.pipe(
            Stream.concat(Stream.fromEffect(assembled)),
            Stream.catch((error: StepStreamError) =>
              Stream.unwrap(Effect.gen(function*() {
                yield* fail(error._tag)
                if (!budget.isRetryable(error)) return Stream.fail(error)
                const now = yield* Clock.currentTimeMillis
                const next = yield* Effect.option(step(now, error))
                if (Option.isNone(next)) return Stream.fail(error)
                const retryAfter = error._tag === "ProviderHttpError" ? error.retryAfterMs ?? 0 : 0
                const delay = Math.max(Math.min(Duration.toMillis(next.value[1]), maxDelayMs), retryAfter)
                if (now + delay >= deadline) return Stream.fail(error)
                yield* count(metrics.retries, 1, provider)
                return Stream.make<Array<Emitted>>({ _tag: "AttemptFailed", attempt: n, error, retryInMs: delay })
                  .pipe(
                    Stream.concat(Stream.fromEffectDrain(backoff(delay))),
                    Stream.concat(attempt(n + 1))
                  )
              }))
            ),
            // an attempt interrupted before it settled (its consumer went away) still cost tokens
            Stream.onExit((exit) => !settled && Exit.isFailure(exit) ? fail("interrupted") : Effect.void),
            Stream.withSpan("ToolCallPipeline.attempt", { attributes: { attempt: n, ...provider } })
          )
        }))

      return attempt(1)
    }))
}
