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
  type ModelStreamError,
  type StreamEvent,
  ToolCall
} from "@toolgate/core"
import type { Tool, Toolkit } from "effect/ai"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import type * as ExecutionError from "./ExecutionError.js"
import * as StepStream from "./internal/stepStream.js"
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
 * Pipeline metrics. Attributes: `provider` (the model stream's `provider`), `outcome`
 * (`completed`, the error tag, or `interrupted`) and `kind` (`input` or `output`).
 *
 * - `toolgate_streams_started_total`: stream attempts started (requests sent);
 * - `toolgate_streams_total`: stream attempts by outcome (`StreamAborted` counts aborted ones,
 *   `interrupted` those whose consumer went away);
 * - `toolgate_stream_retries_total`: attempts that were retried;
 * - `toolgate_stream_deltas_received_total`: text and argument deltas received (about one token
 *   each on OpenAI-style streams), counted for failed and aborted attempts too;
 * - `toolgate_stream_usage_output_tokens_total`: output tokens the provider reported (only
 *   completed streams report usage: the gap to the deltas received is the cost of failed ones);
 * - `toolgate_stream_failed_attempt_tokens_total`: tokens spent on attempts that did not complete,
 *   by `kind`: the usage such an attempt reported before it failed, else (input) the input tokens
 *   of the completed attempt of the same request, (output) the deltas it received;
 * - `toolgate_tool_calls_assembled_total`: calls released by assembly.
 *
 * The agent loop (`Agent`) streams each step through the same code, so these count its steps too.
 *
 * @since 0.1.0
 * @category metrics
 */
export const metrics = StepStream.metrics

/**
 * The pipeline service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Runs one turn. A request without `tools` is sent the toolkit's (`ModelStream.toolsOf`). The
   * stream emits text deltas at once, `AttemptFailed` before each retry, and ends with
   * `TurnCompleted`; it fails with the last attempt's {@link PipelineError} or a validation error. Per-call execution errors are data in the result, never a failure of the
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
 * A call's outcome as the pipeline reports it, from the executor's result.
 *
 * @since 0.1.0
 * @category models
 */
export const toOutcome = (
  r: Result.Result<ToolExecutor.Outcome<unknown>, ExecutionError.ExecutionError>
): CallOutcome =>
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
    const respond = StepStream.make(yield* ModelStream.ModelStream)
    const executor = yield* ToolExecutor.ToolExecutor

    const run = <Tools extends Record<string, Tool.Any>>(
      request: ModelStream.ModelRequest,
      options: RunOptions<Tools>
    ): Stream.Stream<Output, PipelineError> =>
      Stream.unwrap(Effect.gen(function*() {
        const deadlineMs = options.deadlineMs ?? defaultDeadlineMs
        const deadline = (yield* Clock.currentTimeMillis) + deadlineMs
        const retryable = options.retry?.isRetryable ?? isRetryable
        let assembled: { readonly turn: Assembler.AssembledTurn; readonly attempts: number } | undefined
        const finished = Effect.gen(function*() {
          const { attempts, turn } = assembled!
          const calls = yield* ToolCall.validate(options.toolkit)(turn)
          const results = yield* executor.executeAll(calls as ReadonlyArray<ToolCall.ValidatedToolCall>, {
            scope: options.scope,
            strategy: options.strategy,
            concurrency: options.concurrency
          })
          return {
            _tag: "TurnCompleted",
            result: {
              text: turn.text,
              finishReason: turn.finishReason,
              usage: turn.usage,
              attempts,
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
        const sent = request.tools === undefined ? { ...request, tools: ModelStream.toolsOf(options.toolkit) } : request
        return respond(sent, {
          deadline,
          deadlineMs,
          signal: options.signal,
          retry: options.retry,
          assembly: options.assembly,
          isRetryable: retryable
        }).pipe(
          Stream.filterMap((emitted): Result.Result<Output, void> => {
            if (emitted._tag !== "Assembled") return Result.succeed(emitted)
            assembled = emitted
            return Result.failVoid
          }),
          Stream.concat(Stream.fromEffect(Effect.suspend(() => finished)))
        )
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
