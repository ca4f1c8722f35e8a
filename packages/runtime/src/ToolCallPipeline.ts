/**
 * The pipeline end to end: model request → streamed events (the `ModelStream` in context) →
 * assembly (text forwarded at once, tool calls gated) → validation against the toolkit →
 * exactly-once execution of every released call → one turn result with a per-call outcome.
 *
 * The pipeline knows no provider: it depends on core's `ModelStream` interface, which an
 * application provides as a layer (`HttpModelStream.layer` in `@toolgate/adapters` for an HTTP
 * provider, or its own implementation), and classifies the failures core defines
 * (`ModelStreamError`, `AssemblyError`).
 *
 * Retries. Only the stream request is retried, never an execution: a failed attempt released
 * nothing, so a fresh request is harmless, and a retried stream's fresh provider tool-call ids
 * cannot double-execute because calls are keyed by intent (`IdempotencyKey`), not by provider id.
 * Retried by default: transport failures (`TransportError`), HTTP 429 and 5xx
 * (`ProviderHttpError`, honouring `Retry-After`), and the failures that mean the body was cut or
 * stalled before its finish (`IncompleteStream`, `StreamTimeout` of the `first_byte` or `idle`
 * phase, and an in-band `ProviderStreamError` such as Anthropic's `overloaded_error`). Not
 * retried: what the model said (`TokenLimitExceeded`, `UnexpectedFinishReason`,
 * `MalformedToolArguments`, `ToolCallProtocolError`, validation errors), a 4xx other than 429,
 * an answer that is not an event stream (`NotAnEventStream`: a non-streaming JSON body, which
 * the same request gets again), an abort. Delays follow a bounded exponential `Schedule` with jitter; a `Retry-After` longer
 * than the computed delay wins.
 *
 * Deadline. `deadlineMs` bounds the whole streaming phase, retries and their back-off included:
 * each attempt is granted what is left of it (`ModelStream.Attempt.remainingMs`, with the
 * caller's `AbortSignal`), and a back-off that would end past it fails at once with the last
 * error. Per-read budgets (first byte, idle) are the model stream's configuration. Executions are bounded by the executor's per-call handler timeout
 * instead of the deadline, because interrupting a dispatched mutation does not undo it: it only
 * turns a known outcome into an unknown one.
 *
 * @since 0.1.0
 */
import {
  Assembler,
  type AssemblyError,
  type IdempotencyKey,
  type KeyPolicy,
  ModelStream,
  ModelStreamError,
  type StreamEvent,
  ToolCall
} from "@toolgate/core"
import { Clock, Context, Duration, Effect, Layer, Metric, Option, Result, Schedule, Stream } from "effect"
import type { Tool, Toolkit } from "effect/ai"
import type * as ExecutionError from "./ExecutionError.js"
import * as ToolExecutor from "./ToolExecutor.js"

/**
 * What a run can fail with: the last stream attempt's error (getting the stream,
 * `ModelStreamError`, or assembling it, `AssemblyError`), or validation of the turn
 * (`ToolCall.ValidationError`).
 *
 * @since 0.1.0
 * @category models
 */
export type PipelineError =
  | AssemblyError.AssemblyError
  | ToolCall.ValidationError
  | ModelStreamError.ModelStreamError

/**
 * The retry policy of the stream request.
 *
 * - `maxRetries` (default 3): retries after the first attempt.
 * - `baseDelayMs` (default 250) and `maxDelayMs` (default 8,000): the exponential back-off
 *   (factor 2, jittered ±20 %), capped.
 * - `isRetryable`: which failures to retry (default: {@link isRetryable}).
 *
 * @since 0.1.0
 * @category models
 */
export interface RetryPolicy {
  readonly maxRetries?: number | undefined
  readonly baseDelayMs?: number | undefined
  readonly maxDelayMs?: number | undefined
  readonly isRetryable?: ((error: PipelineError) => boolean) | undefined
}

/**
 * Options of one run.
 *
 * - `toolkit`: the tools calls are validated against (the executor's handlers serve them).
 * - `scope`: tenant + turn of the intent keys (see `IdempotencyKey.Scope`).
 * - `deadlineMs`: the budget of the streaming phase, retries included (default 10 min).
 * - `signal`: aborting it ends the run with `StreamAborted` (the model stream gets it with each
 *   attempt; a back-off ends there too).
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions<Tools extends Record<string, Tool.Any>> {
  readonly toolkit: Toolkit.Toolkit<Tools>
  readonly scope: IdempotencyKey.Scope
  readonly deadlineMs?: number | undefined
  readonly retry?: RetryPolicy | undefined
  readonly signal?: AbortSignal | undefined
  readonly assembly?: Assembler.Options | undefined
  readonly concurrency?: number | undefined
  readonly strategy?: IdempotencyKey.Strategy | undefined
}

/**
 * The outcome of one released call.
 *
 * - `executed`: the handler ran now; `replayed`: the recorded result of an earlier run (the
 *   handler did not run); `failed`: the typed `ExecutionError`.
 * - `json`: the result's JSON text as stored; a replay's is byte for byte the execution's (send
 *   this to the model, not a re-encoding, and a retried turn sends the same bytes).
 * - `argumentChanges` (replays): how the call's arguments differ from the recorded call's, e.g.
 *   a rephrased free-text title (see `ToolExecutor.Replayed`).
 *
 * @since 0.1.0
 * @category models
 */
export type CallOutcome =
  | { readonly _tag: "Executed"; readonly value: unknown; readonly json: string; readonly key: string }
  | {
    readonly _tag: "Replayed"
    readonly value: unknown
    readonly json: string
    readonly key: string
    readonly argumentChanges?: KeyPolicy.Changes | undefined
  }
  | { readonly _tag: "Failed"; readonly error: ExecutionError.ExecutionError }

/**
 * One released call and its outcome.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallResult {
  readonly index: number
  /** The provider's tool-call id of the attempt that completed (`null` when none was sent). */
  readonly id: string | null
  readonly name: string
  readonly arguments: Readonly<Record<string, unknown>>
  readonly outcome: CallOutcome
}

/**
 * The result of a completed run.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnResult {
  readonly text: string
  readonly finishReason: string | null
  readonly usage: StreamEvent.Usage | undefined
  /** Stream requests made (1 + retries). */
  readonly attempts: number
  readonly calls: ReadonlyArray<CallResult>
}

/**
 * What a run emits: text as it arrives (tagged with its attempt), a notice when an attempt
 * failed and is retried (a UI drops that attempt's text), and finally the turn result.
 *
 * @since 0.1.0
 * @category models
 */
export type Output =
  | { readonly _tag: "TextDelta"; readonly text: string; readonly attempt: number }
  | {
    readonly _tag: "AttemptFailed"
    readonly attempt: number
    readonly error: PipelineError
    /** The back-off before the next attempt, in ms. */
    readonly retryInMs: number
  }
  | { readonly _tag: "TurnCompleted"; readonly result: TurnResult }

/**
 * Default of {@link RetryPolicy.isRetryable}: transport failures, 429 and 5xx, and a body that
 * was cut, stalled or reported a provider error before its finish. Everything else (the model's
 * verdicts, other 4xx, `NotAnEventStream`, `UnsupportedRequest`, an abort, the total deadline) is
 * final.
 *
 * @since 0.1.0
 * @category retries
 */
export const isRetryable = (error: PipelineError): boolean => {
  switch (error._tag) {
    case "TransportError":
    case "IncompleteStream":
    case "ProviderStreamError":
      return true
    case "ProviderHttpError":
      return error.status === 429 || error.status >= 500
    case "StreamTimeout":
      return error.phase !== "total"
    default:
      return false
  }
}

/**
 * Pipeline metrics. Attributes: `provider` (the model stream's `provider`), and `outcome`
 * (`completed` or the error tag).
 *
 * - `toolgate_streams_started_total`: stream attempts started (requests sent);
 * - `toolgate_streams_total`: stream attempts by outcome (`StreamAborted` counts aborted ones);
 * - `toolgate_stream_retries_total`: attempts that were retried;
 * - `toolgate_stream_deltas_received_total`: text and argument deltas received (about one token
 *   each on OpenAI-style streams), counted for failed and aborted attempts too;
 * - `toolgate_stream_usage_output_tokens_total`: output tokens the provider reported (only
 *   completed streams report usage: the gap to the deltas received is the cost of failed ones);
 * - `toolgate_tool_calls_assembled_total`: calls released by assembly.
 *
 * @since 0.1.0
 * @category metrics
 */
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
  toolCallsAssembled: Metric.counter("toolgate_tool_calls_assembled_total", {
    description: "tool calls released by assembly"
  })
} as const

/**
 * The pipeline service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Runs one turn. The stream emits text deltas at once, `AttemptFailed` before each retry, and
   * ends with `TurnCompleted`; it fails with the last attempt's {@link PipelineError} or a
   * validation error. Per-call execution errors are data in the result, never a failure of the
   * run (a failed call never hides another call's executed outcome).
   */
  readonly run: <Tools extends Record<string, Tool.Any>>(
    request: ModelStream.ModelRequest,
    options: RunOptions<Tools>
  ) => Stream.Stream<Output, PipelineError>
}

/**
 * The pipeline service tag.
 *
 * @since 0.1.0
 * @category services
 */
export class ToolCallPipeline extends Context.Service<ToolCallPipeline, Service>()(
  "@toolgate/runtime/ToolCallPipeline"
) {}

const defaultDeadlineMs = 600_000

/**
 * Completes when the caller's signal fires (at once when it already has): a back-off ends there, and
 * the next attempt's model stream fails with `StreamAborted` before sending anything.
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

const toOutcome = (r: Result.Result<ToolExecutor.Outcome<unknown>, ExecutionError.ExecutionError>): CallOutcome =>
  Result.isFailure(r)
    ? { _tag: "Failed", error: r.failure }
    : r.success._tag === "Executed"
    ? { _tag: "Executed", value: r.success.value, json: r.success.json, key: r.success.key }
    : {
      _tag: "Replayed",
      value: r.success.value,
      json: r.success.json,
      key: r.success.key,
      argumentChanges: r.success.argumentChanges
    }

/**
 * Builds the pipeline over the `ModelStream` and `ToolExecutor` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, ModelStream.ModelStream | ToolExecutor.ToolExecutor> = Effect.gen(
  function*() {
    const model = yield* ModelStream.ModelStream
    const executor = yield* ToolExecutor.ToolExecutor
    const provider = { provider: model.provider }

    const run = <Tools extends Record<string, Tool.Any>>(
      request: ModelStream.ModelRequest,
      options: RunOptions<Tools>
    ): Stream.Stream<Output, PipelineError> =>
      Stream.unwrap(Effect.gen(function*() {
        const retryable = options.retry?.isRetryable ?? isRetryable
        const maxDelayMs = options.retry?.maxDelayMs ?? 8_000
        const step = yield* Schedule.toStep(
          Schedule.exponential(Duration.millis(options.retry?.baseDelayMs ?? 250), 2).pipe(
            Schedule.jittered,
            Schedule.upTo({ times: options.retry?.maxRetries ?? 3 })
          )
        )
        const deadlineMs = options.deadlineMs ?? defaultDeadlineMs
        const deadline = (yield* Clock.currentTimeMillis) + deadlineMs
        // An attempt's `total` budget is what is left of the run's: report the run's deadline.
        const overDeadline = new ModelStreamError.StreamTimeout({
          finishReason: null,
          phase: "total",
          budgetMs: deadlineMs
        })
        const backoff = (ms: number) =>
          options.signal === undefined
            ? Effect.sleep(Duration.millis(ms))
            : Effect.raceFirst(Effect.sleep(Duration.millis(ms)), untilAborted(options.signal))

        const count = (metric: Metric.Metric<number, unknown>, by: number, attributes: Record<string, string>) =>
          by > 0 ? Metric.update(Metric.withAttributes(metric, attributes), by) : Effect.void

        const attempt = (n: number): Stream.Stream<Output, PipelineError> =>
          Stream.unwrap(Effect.gen(function*() {
            const remaining = deadline - (yield* Clock.currentTimeMillis)
            if (remaining <= 0) {
              return Stream.fail(overDeadline)
            }
            yield* count(metrics.streamsStarted, 1, provider)
            let deltas = 0
            let turn: Assembler.AssembledTurn | undefined
            const events = model.stream(request, { number: n, remainingMs: remaining, signal: options.signal }).pipe(
              Stream.mapError((error) =>
                error._tag === "StreamTimeout" && error.phase === "total" && error.budgetMs === remaining
                  ? overDeadline
                  : error
              ),
              Stream.tap((event) =>
                Effect.sync(() => {
                  if (event.text) deltas++
                  if (event.toolCalls) deltas += event.toolCalls.length
                })
              ),
              Assembler.stream(options.assembly)
            )
            const outputs: Stream.Stream<Output, PipelineError> = events.pipe(
              Stream.tap((output) =>
                Effect.sync(() => {
                  if (output._tag === "TurnCompleted") turn = output.turn
                })
              ),
              Stream.filter((output): output is Assembler.TextDelta => output._tag === "TextDelta"),
              Stream.map((output): Output => ({ _tag: "TextDelta", text: output.text, attempt: n }))
            )
            const finished = Effect.gen(function*() {
              yield* count(metrics.streams, 1, { ...provider, outcome: "completed" })
              yield* count(metrics.deltasReceived, deltas, provider)
              yield* count(metrics.usageOutputTokens, turn!.usage?.outputTokens ?? 0, provider)
              yield* count(metrics.toolCallsAssembled, turn!.toolCalls.length, provider)
              const calls = yield* ToolCall.validate(options.toolkit)(turn!)
              const results = yield* executor.executeAll(calls as ReadonlyArray<ToolCall.ValidatedToolCall>, {
                scope: options.scope,
                strategy: options.strategy,
                concurrency: options.concurrency
              })
              return {
                _tag: "TurnCompleted",
                result: {
                  text: turn!.text,
                  finishReason: turn!.finishReason,
                  usage: turn!.usage,
                  attempts: n,
                  calls: calls.map((call, i) => ({
                    index: call.index,
                    id: call.id,
                    name: call.name,
                    arguments: call.arguments,
                    outcome: toOutcome(results[i]!)
                  }))
                }
              } satisfies Output
            })
            return outputs.pipe(
              Stream.concat(Stream.fromEffect(finished)),
              Stream.catch((error: PipelineError) =>
                Stream.unwrap(Effect.gen(function*() {
                  if (ToolCall.isValidationError(error)) return Stream.fail(error)
                  yield* count(metrics.streams, 1, { ...provider, outcome: error._tag })
                  yield* count(metrics.deltasReceived, deltas, provider)
                  if (!retryable(error)) return Stream.fail(error)
                  const now = yield* Clock.currentTimeMillis
                  const next = yield* Effect.option(step(now, error))
                  if (Option.isNone(next)) return Stream.fail(error)
                  const retryAfter = error._tag === "ProviderHttpError" ? error.retryAfterMs ?? 0 : 0
                  const delay = Math.max(Math.min(Duration.toMillis(next.value[1]), maxDelayMs), retryAfter)
                  if (now + delay >= deadline) return Stream.fail(error)
                  yield* count(metrics.retries, 1, provider)
                  return Stream.make<Array<Output>>({ _tag: "AttemptFailed", attempt: n, error, retryInMs: delay })
                    .pipe(
                      Stream.concat(Stream.fromEffectDrain(backoff(delay))),
                      Stream.concat(attempt(n + 1))
                    )
                }))
              ),
              Stream.withSpan("ToolCallPipeline.attempt", { attributes: { attempt: n, ...provider } })
            )
          }))

        return attempt(1)
      }))

    return ToolCallPipeline.of({ run })
  }
)

/**
 * The pipeline layer: needs a `ModelStream` (e.g. `HttpModelStream.layer` of
 * `@toolgate/adapters`) and a `ToolExecutor` (over an `IdempotencyStore`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ToolCallPipeline, never, ModelStream.ModelStream | ToolExecutor.ToolExecutor> = Layer
  .effect(ToolCallPipeline, make)

/**
 * Runs one turn through the pipeline in context and returns its result, dropping the text
 * deltas (`run` streams them).
 *
 * @since 0.1.0
 * @category running
 */
export const runTurn = <Tools extends Record<string, Tool.Any>>(
  request: ModelStream.ModelRequest,
  options: RunOptions<Tools>
): Effect.Effect<TurnResult, PipelineError, ToolCallPipeline> =>
  ToolCallPipeline.use((pipeline) =>
    pipeline.run(request, options).pipe(
      Stream.runFold(
        () => undefined as TurnResult | undefined,
        (acc, o) => o._tag === "TurnCompleted" ? o.result : acc
      ),
      Effect.map((result) => result!)
    )
  )
