/**
 * The pipeline over a `ModelStream` that is not HTTP (events from memory, as a queue or an
 * `effect/ai` model would give them): what each attempt is granted (its number, the time left of
 * the deadline, the caller's signal), which of core's errors are retried, and the deadline's
 * `StreamTimeout` told from a per-attempt one.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { ModelStream, ModelStreamError, type StreamEvent } from "@toolgate/core"
import { IdempotencyStore, ToolCallPipeline, ToolExecutor } from "@toolgate/runtime"
import { Effect, Layer, Metric, Schema, Stream } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"

const Echo = Tool.make("echo", { parameters: Schema.Struct({ n: Schema.Number }), success: Schema.Number })
const toolkit = Toolkit.make(Echo)

const turn: ReadonlyArray<StreamEvent.StreamEvent> = [
  { text: "Echoing." },
  { toolCalls: [{ index: 0, id: "call_1", name: "echo", argumentsDelta: "{\"n\":7}" }] },
  { finish: { reason: "tool_calls", class: "success", terminal: true }, end: true }
]

/** A model stream that answers attempt `n` with `answer(n)` and records what each attempt got. */
const scripted = (
  answer: (attempt: ModelStream.Attempt) => Stream.Stream<StreamEvent.StreamEvent, ModelStreamError.ModelStreamError>
) => {
  const attempts: Array<ModelStream.Attempt> = []
  const layer = Layer.succeed(
    ModelStream.ModelStream,
    ModelStream.ModelStream.of({
      provider: "scripted",
      stream: (_request, attempt) =>
        Stream.suspend(() => {
          attempts.push(attempt)
          return answer(attempt)
        })
    })
  )
  const pipeline = ToolCallPipeline.layer.pipe(
    Layer.provide(ToolExecutor.layer(toolkit, { echo: { run: (params) => Effect.succeed(params.n) } })),
    Layer.provide(layer),
    Layer.provide(IdempotencyStore.layerMemory)
  )
  return { attempts, pipeline }
}

const request: ModelStream.ModelRequest = { prompt: Prompt.make("Echo 7."), tools: ModelStream.toolsOf(toolkit) }
let turns = 0
const options = (overrides: Partial<ToolCallPipeline.RunOptions<typeof toolkit.tools>> = {}) => ({
  toolkit,
  scope: { tenant: "t", turn: `turn-${++turns}` },
  retry: { baseDelayMs: 1 },
  ...overrides
})

describe("ToolCallPipeline over any ModelStream", () => {
  it.live("runs the turn: text, the validated call executed, attempt 1 granted the deadline and the signal", () =>
    Effect.gen(function*() {
      const { attempts, pipeline } = scripted(() => Stream.fromIterable(turn))
      const signal = new AbortController().signal
      const result = yield* ToolCallPipeline.runTurn(request, options({ deadlineMs: 5_000, signal })).pipe(
        Effect.provide(pipeline)
      )
      expect(result).toMatchObject({ text: "Echoing.", attempts: 1, finishReason: "tool_calls" })
      expect(result.calls.map((c) => c.outcome)).toMatchObject([{ _tag: "Executed", value: 7 }])
      expect(attempts).toHaveLength(1)
      expect(attempts[0]!.number).toBe(1)
      expect(attempts[0]!.signal).toBe(signal)
      expect(attempts[0]!.remainingMs).toBeGreaterThan(4_000)
      expect(attempts[0]!.remainingMs).toBeLessThanOrEqual(5_000)
    }))

  it.live("retries core's retryable errors, each attempt numbered and granted less time; UnsupportedRequest is final", () =>
    Effect.gen(function*() {
      const failures: ReadonlyArray<ModelStreamError.ModelStreamError> = [
        new ModelStreamError.TransportError({ phase: "body", reason: "reset" }),
        new ModelStreamError.ProviderHttpError({ status: 503, retryAfterMs: null, code: null, providerMessage: "" }),
        new ModelStreamError.StreamTimeout({ finishReason: null, phase: "idle", budgetMs: 10 })
      ]
      const { attempts, pipeline } = scripted((attempt) =>
        attempt.number <= failures.length ? Stream.fail(failures[attempt.number - 1]!) : Stream.fromIterable(turn)
      )
      const result = yield* ToolCallPipeline.runTurn(request, options({ retry: { baseDelayMs: 1, maxRetries: 3 } }))
        .pipe(Effect.provide(pipeline))
      expect(result.attempts).toBe(4)
      expect(attempts.map((a) => a.number)).toEqual([1, 2, 3, 4])
      for (let i = 1; i < attempts.length; i++) {
        expect(attempts[i]!.remainingMs).toBeLessThanOrEqual(attempts[i - 1]!.remainingMs)
      }

      const unsupported = new ModelStreamError.UnsupportedRequest({ provider: "scripted", reason: "a file part" })
      expect(ToolCallPipeline.isRetryable(unsupported)).toBe(false)
      const final = scripted(() => Stream.fail(unsupported))
      const error = yield* Effect.flip(
        ToolCallPipeline.runTurn(request, options()).pipe(Effect.provide(final.pipeline))
      )
      expect(error).toBe(unsupported)
      expect(final.attempts).toHaveLength(1)
    }))

  it.live("a total timeout of the attempt's whole remaining time is the run's deadline; a smaller one is not", () =>
    Effect.gen(function*() {
      const deadline = scripted((attempt) =>
        Stream.fail(
          new ModelStreamError.StreamTimeout({ finishReason: null, phase: "total", budgetMs: attempt.remainingMs })
        )
      )
      const error = yield* Effect.flip(
        ToolCallPipeline.runTurn(request, options({ deadlineMs: 3_000 })).pipe(Effect.provide(deadline.pipeline))
      )
      expect(error).toEqual(new ModelStreamError.StreamTimeout({ finishReason: null, phase: "total", budgetMs: 3_000 }))

      const capped = scripted(() =>
        Stream.fail(new ModelStreamError.StreamTimeout({ finishReason: null, phase: "total", budgetMs: 50 }))
      )
      const own = yield* Effect.flip(
        ToolCallPipeline.runTurn(request, options({ deadlineMs: 3_000 })).pipe(Effect.provide(capped.pipeline))
      )
      assert(own._tag === "StreamTimeout")
      expect(own.budgetMs).toBe(50)
    }))

  it.live("a request without tools is sent the toolkit's; one with tools is sent as it is", () =>
    Effect.gen(function*() {
      const sent: Array<ModelStream.ModelRequest> = []
      const model = Layer.succeed(
        ModelStream.ModelStream,
        ModelStream.ModelStream.of({
          provider: "scripted",
          stream: (asked) => Stream.suspend(() => (sent.push(asked), Stream.fromIterable(turn)))
        })
      )
      const pipeline = ToolCallPipeline.layer.pipe(
        Layer.provide(ToolExecutor.layer(toolkit, { echo: { run: (params) => Effect.succeed(params.n) } })),
        Layer.provide(model),
        Layer.provide(IdempotencyStore.layerMemory)
      )
      yield* ToolCallPipeline.runTurn({ prompt: Prompt.make("Echo 7.") }, options()).pipe(Effect.provide(pipeline))
      yield* ToolCallPipeline.runTurn({ prompt: Prompt.make("Echo 7."), tools: [] }, options()).pipe(
        Effect.provide(pipeline)
      )
      expect(sent.map((r) => r.tools)).toEqual([ModelStream.toolsOf(toolkit), []])
    }))

  it.live("metrics carry the model stream's provider", () =>
    Effect.gen(function*() {
      const { pipeline } = scripted(() => Stream.fromIterable(turn))
      yield* ToolCallPipeline.runTurn(request, options()).pipe(Effect.provide(pipeline))
      const count = (metric: typeof ToolCallPipeline.metrics.streams, attributes: Record<string, string>) =>
        Effect.map(Metric.value(Metric.withAttributes(metric, attributes)), (s) => s.count)
      const { metrics } = ToolCallPipeline
      expect(yield* count(metrics.streamsStarted, { provider: "scripted" })).toBe(1)
      expect(yield* count(metrics.streams, { provider: "scripted", outcome: "completed" })).toBe(1)
      expect(yield* count(metrics.toolCallsAssembled, { provider: "scripted" })).toBe(1)
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())))
})
