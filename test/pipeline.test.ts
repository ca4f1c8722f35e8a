/**
 * The pipeline end to end over real HTTP on 127.0.0.1: the fake provider streams (and injects
 * faults), the tool handlers POST to the fake CRM with `Idempotency-Key: ctx.downstreamKey`, the
 * store is the memory one, the clock is real. The CRM is the witness of exactly-once execution:
 * it counts mutations per (lead, action) and their duplicates. Every abort and deadline path
 * checks that no socket was left open on the fake provider.
 *
 * The model stream is `HttpModelStream` (OpenAI Chat) over the Undici transport; the last block
 * runs the retry schedule on the TestClock over `HttpTransport.layerReplay`.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { HttpModelStream, HttpTransport } from "@toolgate/adapters"
import { AssemblyError, type ModelStream, ModelStreamError } from "@toolgate/core"
import { IdempotencyStore, ToolCallPipeline, ToolExecutor } from "@toolgate/runtime"
import { FakeCrm, FakeProvider } from "@toolgate/testing"
import { Clock, Context, Effect, Fiber, Layer, Metric, Result, Schema, Stream } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"

const CreateTask = Tool.make("create_task", {
  description: "Create a follow-up task for a lead",
  parameters: Schema.Struct({ lead_id: Schema.String, title: Schema.String, due_date: Schema.String }),
  success: Schema.Struct({ id: Schema.String }),
  failure: Schema.Struct({ status: Schema.Number, message: Schema.String })
})
const AssignOwner = Tool.make("assign_owner", {
  description: "Assign a lead to a sales rep",
  parameters: Schema.Struct({ lead_id: Schema.String, owner_id: Schema.String }),
  success: Schema.Struct({ id: Schema.String }),
  failure: Schema.Struct({ status: Schema.Number, message: Schema.String })
})
const Crm = Toolkit.make(CreateTask, AssignOwner)

const task = {
  lead_id: "L-1042",
  title: "Call back about pilot pricing for the Acme rollout in Q3 (café ☕)",
  due_date: "2026-12-04"
}
const assign = { lead_id: "L-1042", owner_id: "usr_7731" }

// About 11 KB as the fake writes it: the text ends near byte 3,200, the first call's arguments
// run from about 3,600 to 8,800 (whatever the seed's splits), so byte 5,500 is mid-arguments.
const scenario: FakeProvider.Scenario = {
  text: "New lead from Acme. Creating a follow-up task and routing it to an owner.",
  toolCalls: [{ name: "create_task", arguments: task }, { name: "assign_owner", arguments: assign }]
}
const midArguments = 5_500

/** A handler that POSTs the call to the fake CRM with the downstream key as `Idempotency-Key`. */
const crmHandler = (crmUrl: string, action: "create_task" | "assign_owner") => ({
  recovery: "manual" as const,
  timeoutMs: 5_000,
  run: (params: { readonly lead_id: string }, ctx: ToolExecutor.HandlerContext) =>
    Effect.tryPromise({
      try: (signal) =>
        fetch(`${crmUrl}/tools/${action}`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": ctx.downstreamKey },
          body: JSON.stringify({ lead: params.lead_id, action, ...params }),
          signal
        }).then(async (response) => ({ status: response.status, body: await response.text() })),
      catch: (cause) => new ToolExecutor.Ambiguous({ detail: `the CRM request failed: ${String(cause)}` })
    }).pipe(
      Effect.flatMap(({ body, status }) =>
        status === 200
          ? Effect.succeed({ id: String(JSON.parse(body).id) })
          : Effect.fail({ status, message: body.slice(0, 200) })
      )
    )
})

/**
 * A fake provider and a fake CRM in the test's scope, and a pipeline over them (memory store, the
 * model stream's per-read `budgets`). The pipeline lives as long as the test, which reads the
 * fakes' books after each run: so its layer is built in the test's scope.
 */
const harness = (
  plan: FakeProvider.Options["plan"],
  options: { readonly crm?: FakeCrm.Options; readonly budgets?: Partial<HttpTransport.Budgets> } = {}
) =>
  Effect.gen(function*() {
    const provider = yield* FakeProvider.make({ plan, seed: 7 })
    const crm = yield* FakeCrm.make(options.crm)
    const layer = ToolCallPipeline.layer.pipe(
      Layer.provide(
        ToolExecutor.layer(Crm, {
          create_task: crmHandler(crm.url, "create_task"),
          assign_owner: crmHandler(crm.url, "assign_owner")
        })
      ),
      Layer.provide(
        HttpModelStream.layer({
          provider: "openai-chat",
          baseUrl: `${provider.url}/v1`,
          model: "gpt-test",
          budgets: options.budgets
        }).pipe(Layer.provide(HttpTransport.layerNode))
      ),
      Layer.provide(IdempotencyStore.layerMemory)
    )
    const pipeline = Context.get(yield* Layer.build(layer), ToolCallPipeline.ToolCallPipeline)
    /** The lead's request; `body`'s members go into the provider body, where the plans read them. */
    const request = (body: Record<string, unknown> = {}): ModelStream.ModelRequest => ({
      prompt: Prompt.make("New inbound lead L-1042 from Acme."),
      providerOptions: body
    })
    return { pipeline, provider, crm, request }
  })

let turnCount = 0
/** Run options: a fresh turn each call, short back-offs. */
const runOptions = (
  overrides: Partial<ToolCallPipeline.RunOptions<typeof Crm.tools>> = {}
): ToolCallPipeline.RunOptions<typeof Crm.tools> => ({
  toolkit: Crm,
  scope: { tenant: "acme", turn: `conv-${process.pid}/msg-${++turnCount}` },
  retry: { baseDelayMs: 20 },
  ...overrides
})

interface Run {
  readonly outputs: ReadonlyArray<ToolCallPipeline.Output>
  readonly result: Result.Result<ToolCallPipeline.TurnResult, ToolCallPipeline.PipelineError>
  readonly elapsedMs: number
}

/** Runs a pipeline stream to its end, keeping every output and its final result or error. */
const collect = (stream: Stream.Stream<ToolCallPipeline.Output, ToolCallPipeline.PipelineError>) =>
  Effect.gen(function*() {
    const outputs: Array<ToolCallPipeline.Output> = []
    const started = Date.now()
    const done = yield* Stream.runForEach(stream, (o) => Effect.sync(() => outputs.push(o))).pipe(Effect.result)
    const elapsedMs = Date.now() - started
    const last = outputs[outputs.length - 1]
    const result: Run["result"] = Result.isFailure(done)
      ? Result.fail(done.failure)
      : last?._tag === "TurnCompleted"
      ? Result.succeed(last.result)
      : assert.fail("the run ended without a TurnCompleted")
    return { outputs, result, elapsedMs } satisfies Run
  })

const turnOf = (run: Run): ToolCallPipeline.TurnResult => {
  if (Result.isFailure(run.result)) assert.fail(`the run failed: ${run.result.failure.message}`)
  return run.result.success
}

const errorOf = (run: Run): ToolCallPipeline.PipelineError => {
  if (Result.isSuccess(run.result)) assert.fail("the run completed; expected a failure")
  return run.result.failure
}

const attemptsFailed = (run: Run) =>
  run.outputs.filter((o): o is Extract<ToolCallPipeline.Output, { _tag: "AttemptFailed" }> =>
    o._tag === "AttemptFailed"
  )

const textOf = (run: Run, attempt: number) =>
  run.outputs.map((o) => o._tag === "TextDelta" && o.attempt === attempt ? o.text : "").join("")

/** The CRM books hold exactly one mutation per call of the scenario, no duplicate. */
const expectOneMutationPerCall = (crm: FakeCrm.Server) =>
  Effect.gen(function*() {
    const stats = yield* crm.stats
    expect(stats.byKey).toEqual({ "L-1042/create_task": 1, "L-1042/assign_owner": 1 })
    expect(stats.mutations).toBe(2)
    expect(stats.duplicates).toBe(0)
    for (const mutation of stats.log) expect(mutation.idempotencyKey).toMatch(/\S/)
  })

const source = FakeProvider.openAiChat(scenario)

describe("ToolCallPipeline over HTTP: retries", () => {
  it.live("a response dropped mid-arguments is retried with fresh tool-call ids, and each call executes once", () =>
    Effect.gen(function*() {
      const { crm, pipeline, provider, request } = yield* harness((req) =>
        req.attempt === 1 ? { source, fault: { _tag: "Drop", afterBytes: midArguments } } : { source }
      )
      const run = yield* collect(pipeline.run(request(), runOptions()))
      const turn = turnOf(run)

      expect(turn.attempts).toBe(2)
      const failed = attemptsFailed(run)
      expect(failed).toHaveLength(1)
      expect(failed[0]!.attempt).toBe(1)
      expect(failed[0]!.error).toMatchObject({ _tag: "TransportError", phase: "body" })
      // The notice comes before any text of the retry.
      const noticeAt = run.outputs.indexOf(failed[0]!)
      const firstRetryText = run.outputs.findIndex((o) => o._tag === "TextDelta" && o.attempt === 2)
      expect(noticeAt).toBeGreaterThan(0)
      expect(firstRetryText).toBeGreaterThan(noticeAt)
      // The first attempt got all of its text out before the cut: the cut was in the tool calls.
      expect(textOf(run, 1)).toBe(scenario.text)
      expect(textOf(run, 2)).toBe(scenario.text)
      expect(turn.text).toBe(scenario.text)

      const stats = yield* provider.stats
      expect(stats.log.map((r) => [r.attempt, r.outcome, r.bytesWritten])).toEqual([
        [1, "dropped", midArguments],
        [2, "completed", expect.any(Number)]
      ])
      const [dropped, retried] = stats.log
      expect(retried!.bytesWritten).toBeGreaterThan(midArguments + 2_000)
      // Fresh ids on the retry, and the turn reports the ids of the attempt that completed.
      expect(retried!.toolCallIds.some((id) => dropped!.toolCallIds.includes(id))).toBe(false)
      expect(turn.calls.map((c) => c.id)).toEqual(retried!.toolCallIds)

      expect(turn.calls.map((c) => [c.index, c.name, c.arguments, c.outcome._tag])).toEqual([
        [0, "create_task", task, "Executed"],
        [1, "assign_owner", assign, "Executed"]
      ])
      yield* expectOneMutationPerCall(crm)
    }))

  it.live("429 with Retry-After: 1: the next attempt waits at least 1,000 ms", () =>
    Effect.gen(function*() {
      const arrivals: Array<number> = []
      const { crm, pipeline, request } = yield* harness((req) => {
        arrivals.push(Date.now())
        return req.attempt === 1 ? { source, fault: { _tag: "Status", status: 429, retryAfter: 1 } } : { source }
      })
      // The default policy: its first back-off (250 ms ± 20 %) is shorter than the provider's ask.
      const run = yield* collect(pipeline.run(request(), runOptions({ retry: undefined })))
      const turn = turnOf(run)
      const [failed] = attemptsFailed(run)
      expect(failed!.error).toBeInstanceOf(ModelStreamError.ProviderHttpError)
      expect(failed!.error).toMatchObject({ status: 429, retryAfterMs: 1_000, code: "rate_limit_exceeded" })
      expect(failed!.retryInMs).toBe(1_000)
      expect(arrivals).toHaveLength(2)
      expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(1_000)
      expect(turn.attempts).toBe(2)
      expect(turn.calls.map((c) => c.outcome._tag)).toEqual(["Executed", "Executed"])
      yield* expectOneMutationPerCall(crm)
    }))

  it.live("500 is retried; 400 is not: it fails with ProviderHttpError 400 after one request", () =>
    Effect.gen(function*() {
      const { crm, pipeline, provider, request } = yield* harness((req) => {
        const status = (req.body as { status: number }).status
        return req.attempt === 1 ? { source, fault: { _tag: "Status", status } } : { source }
      })
      const five = yield* collect(pipeline.run(request({ status: 500 }), runOptions()))
      expect(turnOf(five).attempts).toBe(2)
      expect(attemptsFailed(five).map((f) => f.error)).toMatchObject([{ _tag: "ProviderHttpError", status: 500 }])
      yield* expectOneMutationPerCall(crm)

      const four = yield* collect(pipeline.run(request({ status: 400 }), runOptions()))
      const error = errorOf(four)
      expect(error).toBeInstanceOf(ModelStreamError.ProviderHttpError)
      expect(error).toMatchObject({ status: 400, code: "invalid_request_error" })
      expect(attemptsFailed(four)).toEqual([])
      expect(four.outputs).toEqual([])
      const stats = yield* provider.stats
      expect(stats.log.filter((r) => JSON.parse(r.key).status === 400).map((r) => r.status)).toEqual([400])
      expect((yield* crm.stats).requests).toBe(2)
    }))

  it.live("a truncated body is IncompleteStream and is retried", () =>
    Effect.gen(function*() {
      const { crm, pipeline, provider, request } = yield* harness((req) =>
        req.attempt === 1 ? { source, fault: { _tag: "Truncate", afterBytes: midArguments } } : { source }
      )
      const run = yield* collect(pipeline.run(request(), runOptions()))
      expect(attemptsFailed(run).map((f) => f.error._tag)).toEqual(["IncompleteStream"])
      expect(attemptsFailed(run)[0]!.error).toBeInstanceOf(AssemblyError.IncompleteStream)
      expect(turnOf(run).attempts).toBe(2)
      expect((yield* provider.stats).log.map((r) => r.outcome)).toEqual(["truncated", "completed"])
      yield* expectOneMutationPerCall(crm)
    }))

  it.live("a token limit, and malformed arguments, fail the turn at once: no retry, no CRM mutation", () =>
    Effect.gen(function*() {
      const truncatedArguments = JSON.stringify(assign).slice(0, 20)
      const { crm, pipeline, provider, request } = yield* harness((req) =>
        (req.body as { case: string }).case === "length"
          ? {
            source: FakeProvider.openAiChat({
              ...scenario,
              toolCalls: [scenario.toolCalls![0]!, { name: "assign_owner", arguments: truncatedArguments }],
              finishReason: "length"
            })
          }
          : {
            source: FakeProvider.openAiChat({
              ...scenario,
              toolCalls: [scenario.toolCalls![0]!, {
                name: "assign_owner",
                arguments: `{"lead_id":"L-1042","owner_id":}`
              }]
            })
          }
      )
      const length = yield* collect(pipeline.run(request({ case: "length" }), runOptions()))
      expect(errorOf(length)).toBeInstanceOf(AssemblyError.TokenLimitExceeded)
      const malformed = yield* collect(pipeline.run(request({ case: "malformed" }), runOptions()))
      expect(errorOf(malformed)).toBeInstanceOf(AssemblyError.MalformedToolArguments)
      for (const run of [length, malformed]) {
        expect(attemptsFailed(run)).toEqual([])
        // The text was streamed; the complete first call was gated with the rest of the turn.
        expect(textOf(run, 1)).toBe(scenario.text)
      }
      expect((yield* provider.stats).log.map((r) => r.attempt)).toEqual([1, 1])
      const books = yield* crm.stats
      expect(books.requests).toBe(0)
      expect(books.mutations).toBe(0)
    }))
})

describe("ToolCallPipeline over HTTP: an endpoint that does not stream", () => {
  const completion = JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content: "Hi" }, finish_reason: "stop" }]
  })

  it.live("a JSON answer (by its content type, or by its bytes) fails the turn at once with NotAnEventStream: one request, no retry", () =>
    Effect.gen(function*() {
      const { crm, pipeline, provider, request } = yield* harness((req) => ({
        source: FakeProvider.bytes(completion),
        contentType: (req.body as { type: string | null }).type
      }))
      for (const type of ["application/json", null]) {
        const run = yield* collect(pipeline.run(request({ type }), runOptions()))
        const error = errorOf(run)
        expect(error).toBeInstanceOf(ModelStreamError.NotAnEventStream)
        expect(error).toMatchObject({ found: "json", contentType: type })
        expect(attemptsFailed(run)).toEqual([])
        expect(run.outputs).toEqual([])
      }
      expect((yield* provider.stats).log.map((r) => r.attempt)).toEqual([1, 1])
      expect((yield* crm.stats).requests).toBe(0)
    }))

  it("isRetryable: NotAnEventStream is not retried (asking again gets the same answer)", () => {
    const error = new ModelStreamError.NotAnEventStream({
      found: "json",
      excerpt: "{}",
      contentType: "application/json"
    })
    expect(ToolCallPipeline.isRetryable(error)).toBe(false)
  })
})

describe("ToolCallPipeline over HTTP: exactly once", () => {
  it.live("the same turn run twice at once (a queue redelivery): one CRM mutation per call, the other run replays", () =>
    Effect.gen(function*() {
      // The CRM takes 150 ms per mutation, so the second run meets the first one's live lease.
      const { crm, pipeline, provider, request } = yield* harness({ source }, { crm: { latencyMs: 150 } })
      const options = runOptions()
      const [a, b] = yield* Effect.all([
        collect(pipeline.run(request(), options)),
        collect(pipeline.run(request(), options))
      ], { concurrency: "unbounded" })
      const turns = [turnOf(a), turnOf(b)]
      for (const index of [0, 1]) {
        const outcomes = turns.map((t) => t.calls[index]!.outcome)
        expect(outcomes.map((o) => o._tag).toSorted()).toEqual(["Executed", "Replayed"])
        const [x, y] = outcomes
        assert(x!._tag !== "Failed" && y!._tag !== "Failed")
        // Same intent key, same CRM mutation, whatever the provider ids of each delivery.
        expect(x!.key).toBe(y!.key)
        expect(x!.value).toEqual(y!.value)
      }
      expect(turns[0]!.calls.map((c) => c.id)).not.toEqual(turns[1]!.calls.map((c) => c.id))
      expect((yield* provider.stats).log.map((r) => r.outcome)).toEqual(["completed", "completed"])
      yield* expectOneMutationPerCall(crm)
      expect((yield* crm.stats).requests).toBe(2)

      // A later redelivery replays from the store without calling the CRM.
      const again = turnOf(yield* collect(pipeline.run(request(), options)))
      expect(again.calls.map((c) => c.outcome._tag)).toEqual(["Replayed", "Replayed"])
      expect((yield* crm.stats).requests).toBe(2)
    }))
})

describe("ToolCallPipeline over HTTP: time budgets and abort", () => {
  it.live("a stalled body: StreamTimeout idle, then a retry that completes", () =>
    Effect.gen(function*() {
      const { crm, pipeline, provider, request } = yield* harness(
        (req) => req.attempt === 1 ? { source, fault: { _tag: "Stall", afterBytes: midArguments } } : { source },
        { budgets: { idleMs: 200 } }
      )
      const run = yield* collect(pipeline.run(request(), runOptions()))
      const [failed] = attemptsFailed(run)
      expect(failed!.error).toEqual(
        new ModelStreamError.StreamTimeout({ finishReason: null, phase: "idle", budgetMs: 200 })
      )
      expect(turnOf(run).attempts).toBe(2)
      expect((yield* provider.stats).log.map((r) => r.outcome)).toEqual(["stalled", "completed"])
      // The stalled connection was closed; the completed one may stay in the keep-alive pool.
      expect(yield* provider.awaitOpenSockets(1)).toBeLessThanOrEqual(1)
      yield* expectOneMutationPerCall(crm)
    }))

  it.live("a deadline shorter than the stall: StreamTimeout total with the run's budget, no socket left open", () =>
    Effect.gen(function*() {
      const { crm, pipeline, provider, request } = yield* harness({
        source,
        fault: { _tag: "Stall", afterBytes: midArguments }
      }, { budgets: { idleMs: 10_000 } })
      const run = yield* collect(pipeline.run(request(), runOptions({ deadlineMs: 400 })))
      // The attempt's total budget is what is left of the deadline; `total` is not retried.
      expect(errorOf(run)).toEqual(
        new ModelStreamError.StreamTimeout({ finishReason: null, phase: "total", budgetMs: 400 })
      )
      expect(attemptsFailed(run)).toEqual([])
      expect(run.elapsedMs).toBeGreaterThanOrEqual(390)
      expect(run.elapsedMs).toBeLessThan(5_000)
      expect(yield* provider.awaitOpenSockets(0)).toBe(0)
      expect((yield* provider.stats).log.map((r) => r.outcome)).toEqual(["stalled"])
      expect((yield* crm.stats).requests).toBe(0)
    }))

  it.live("a back-off that would end past the deadline fails at once with the last error, no socket left open", () =>
    Effect.gen(function*() {
      const { crm, pipeline, provider, request } = yield* harness({
        source,
        fault: { _tag: "Stall", afterBytes: midArguments }
      }, { budgets: { idleMs: 200 } })
      // Idle fires at ~200 ms; the back-off (3 s ± 20 %) would end past the 2 s deadline.
      const run = yield* collect(
        pipeline.run(request(), runOptions({ deadlineMs: 2_000, retry: { baseDelayMs: 3_000 } }))
      )
      expect(errorOf(run)).toEqual(
        new ModelStreamError.StreamTimeout({ finishReason: null, phase: "idle", budgetMs: 200 })
      )
      expect(attemptsFailed(run)).toEqual([])
      expect(run.elapsedMs).toBeLessThan(1_500)
      expect((yield* provider.stats).requests).toBe(1)
      expect(yield* provider.awaitOpenSockets(0)).toBe(0)
      expect((yield* crm.stats).requests).toBe(0)
    }))

  it.live("an AbortSignal fired mid-stream: StreamAborted, no retry, no CRM mutation, no socket left open", () =>
    Effect.gen(function*() {
      const { crm, pipeline, provider, request } = yield* harness({ source, paceMs: 20 })
      const controller = new AbortController()
      const run = yield* collect(
        pipeline.run(request(), runOptions({ signal: controller.signal })).pipe(
          Stream.tap((o) => Effect.sync(() => o._tag === "TextDelta" && controller.abort("the user closed the tab")))
        )
      )
      expect(errorOf(run)).toEqual(
        new ModelStreamError.StreamAborted({ finishReason: null, reason: "the user closed the tab" })
      )
      expect(attemptsFailed(run)).toEqual([])
      expect(yield* provider.awaitOpenSockets(0)).toBe(0)
      expect((yield* provider.stats).log.map((r) => r.outcome)).toEqual(["client-closed"])
      expect((yield* crm.stats).requests).toBe(0)
    }))

  it.live("an AbortSignal fired during a back-off ends the run at once, without another request", () =>
    Effect.gen(function*() {
      const { crm, pipeline, provider, request } = yield* harness({
        source,
        fault: { _tag: "Status", status: 429, retryAfter: 5 }
      })
      const controller = new AbortController()
      const run = yield* collect(
        pipeline.run(request(), runOptions({ signal: controller.signal })).pipe(
          Stream.tap((o) =>
            Effect.sync(() => {
              if (o._tag === "AttemptFailed") setTimeout(() => controller.abort("cancelled while waiting"), 100)
            })
          )
        )
      )
      expect(attemptsFailed(run).map((f) => f.retryInMs)).toEqual([5_000])
      expect(errorOf(run)).toEqual(
        new ModelStreamError.StreamAborted({ finishReason: null, reason: "cancelled while waiting" })
      )
      expect(run.elapsedMs).toBeLessThan(2_000)
      expect((yield* provider.stats).requests).toBe(1)
      expect((yield* crm.stats).requests).toBe(0)
    }))
})

describe("ToolCallPipeline over HTTP: streaming and metrics", () => {
  it.live("text deltas reach the caller while the provider is still writing", () =>
    Effect.gen(function*() {
      const { pipeline, provider, request } = yield* harness({ source, paceMs: 25 })
      let firstDelta: { readonly at: number; readonly record: FakeProvider.RequestRecord } | undefined
      let completedAt = 0
      const run = yield* collect(
        pipeline.run(request(), runOptions()).pipe(
          Stream.tap((o) =>
            Effect.gen(function*() {
              if (o._tag === "TextDelta" && firstDelta === undefined) {
                firstDelta = { at: Date.now(), record: (yield* provider.stats).log[0]! }
              }
              if (o._tag === "TurnCompleted") completedAt = Date.now()
            })
          )
        )
      )
      const turn = turnOf(run)
      const finished = (yield* provider.stats).log[0]!
      expect(firstDelta!.record.outcome).toBe("pending")
      expect(firstDelta!.record.bytesWritten).toBeLessThan(finished.bytesWritten / 4)
      expect(finished.outcome).toBe("completed")
      // About 40 writes 25 ms apart: the first text came long before the turn completed.
      expect(completedAt - firstDelta!.at).toBeGreaterThan(400)
      expect(run.outputs[run.outputs.length - 1]!._tag).toBe("TurnCompleted")
      expect(turn.calls.map((c) => c.outcome._tag)).toEqual(["Executed", "Executed"])
    }))

  it.live("metrics: two attempts started, one failed and one completed, one retry, the calls assembled", () =>
    Effect.gen(function*() {
      const { pipeline, request } = yield* harness((req) =>
        req.attempt === 1 ? { source, fault: { _tag: "Status", status: 500 } } : { source }
      )
      const turn = turnOf(yield* collect(pipeline.run(request(), runOptions())))
      expect(turn.attempts).toBe(2)

      const series = (yield* Metric.snapshot).filter((m) => m.id === "toolgate_streams_total")
      expect(
        series.map((m) => ({
          provider: m.attributes?.provider,
          outcome: m.attributes?.outcome,
          count: m.type === "Counter" ? m.state.count : null
        })).toSorted((a, b) => String(a.outcome).localeCompare(String(b.outcome)))
      ).toEqual([
        { provider: "openai-chat", outcome: "completed", count: 1 },
        { provider: "openai-chat", outcome: "ProviderHttpError", count: 1 }
      ])
      const count = (metric: typeof ToolCallPipeline.metrics.streams, attributes: Record<string, string>) =>
        Effect.map(Metric.value(Metric.withAttributes(metric, attributes)), (s) => s.count)
      const { metrics } = ToolCallPipeline
      const provider = { provider: "openai-chat" }
      expect(yield* count(metrics.streams, { ...provider, outcome: "completed" })).toBe(1)
      expect(yield* count(metrics.streams, { ...provider, outcome: "ProviderHttpError" })).toBe(1)
      expect(yield* count(metrics.streamsStarted, provider)).toBe(2)
      expect(yield* count(metrics.retries, provider)).toBe(1)
      expect(yield* count(metrics.toolCallsAssembled, provider)).toBe(2)
      expect(yield* count(metrics.usageOutputTokens, provider)).toBe(turn.usage!.outputTokens)
      expect(yield* count(metrics.deltasReceived, provider)).toBeGreaterThan(10)
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())))
})

describe("ToolCallPipeline on the TestClock (HttpTransport.layerReplay)", () => {
  const chunk = (delta: object, finish: string | null) =>
    `data: ${
      JSON.stringify({
        id: "chatcmpl-1",
        object: "chat.completion.chunk",
        created: 1,
        model: "gpt-test",
        choices: [{ index: 0, delta, finish_reason: finish }]
      })
    }\n\n`
  const okBody = `${chunk({ role: "assistant", content: "All good." }, null)}${chunk({}, "stop")}data: [DONE]\n\n`
  const arrivals = new Map<string, Array<number>>()
  const replay = HttpTransport.layerReplay((request, attempt) =>
    Effect.map(Clock.currentTimeMillis, (now): HttpTransport.Replay => {
      const run = (request.body as { run: string }).run
      arrivals.set(run, [...(arrivals.get(run) ?? []), now])
      return attempt <= (request.body as { failures: number }).failures
        ? { status: 500, body: `{"error":{"message":"boom","type":"server_error"}}` }
        : { body: okBody }
    })
  )
  const pipelineLayer = ToolCallPipeline.layer.pipe(
    Layer.provide(
      ToolExecutor.layer(Crm, {
        create_task: { run: () => Effect.succeed({ id: "t" }) },
        assign_owner: { run: () => Effect.succeed({ id: "a" }) }
      })
    ),
    Layer.provide(
      HttpModelStream.layer({ provider: "openai-chat", baseUrl: "http://unused.invalid", model: "gpt-test" }).pipe(
        Layer.provide(replay)
      )
    ),
    Layer.provide(IdempotencyStore.layerMemory)
  )

  /** Runs to the end, stepping the TestClock 1 ms at a time with a yield between steps. */
  const runOnClock = (run: string, failures: number, retry: ToolCallPipeline.RetryPolicy) =>
    Effect.gen(function*() {
      const pipeline = yield* ToolCallPipeline.ToolCallPipeline
      const fiber = yield* collect(
        pipeline.run({ prompt: Prompt.make("Hi."), providerOptions: { run, failures } }, {
          toolkit: Crm,
          scope: { tenant: "clock", turn: run },
          retry
        })
      ).pipe(Effect.forkChild({ startImmediately: true }))
      for (let i = 0; i < 60_000 && fiber.pollUnsafe() === undefined; i++) {
        yield* TestClock.adjust("1 millis")
        yield* Effect.yieldNow
      }
      const result = yield* Fiber.join(fiber)
      return { ...result, arrivals: arrivals.get(run) ?? [] }
    })

  it.effect("back-offs are exponential, jittered, capped at maxDelayMs, and maxRetries is honoured", () =>
    Effect.gen(function*() {
      const retry = { maxRetries: 6, baseDelayMs: 100, maxDelayMs: 1_000 }
      const nominal = [100, 200, 400, 800, 1_600, 3_200]
      const first = yield* runOnClock("a", Infinity, retry)
      const second = yield* runOnClock("b", Infinity, retry)
      for (const run of [first, second]) {
        expect(errorOf(run)).toMatchObject({ _tag: "ProviderHttpError", status: 500 })
        expect(run.arrivals).toHaveLength(7)
        const delays = attemptsFailed(run).map((f) => f.retryInMs)
        expect(attemptsFailed(run).map((f) => f.attempt)).toEqual([1, 2, 3, 4, 5, 6])
        nominal.forEach((n, i) => {
          // factor 2, jitter within ±20 %, then the cap
          expect(delays[i]).toBeGreaterThanOrEqual(Math.min(n * 0.8, 1_000))
          expect(delays[i]).toBeLessThanOrEqual(Math.min(n * 1.2, 1_000))
          // and the next request came after that back-off, on the Clock
          const gap = run.arrivals[i + 1]! - run.arrivals[i]!
          expect(gap).toBeGreaterThanOrEqual(delays[i]! - 1e-6)
          expect(gap).toBeLessThanOrEqual(delays[i]! + 20)
        })
        expect(delays.slice(4)).toEqual([1_000, 1_000])
      }
      // Jittered: the uncapped delays are not the nominal ones, and differ between runs.
      const a = attemptsFailed(first).map((f) => f.retryInMs).slice(0, 4)
      const b = attemptsFailed(second).map((f) => f.retryInMs).slice(0, 4)
      expect(a).not.toEqual(nominal.slice(0, 4))
      expect(a).not.toEqual(b)

      const two = yield* runOnClock("c", Infinity, { maxRetries: 2, baseDelayMs: 100 })
      expect(two.arrivals).toHaveLength(3)
      expect(attemptsFailed(two)).toHaveLength(2)
      expect(errorOf(two)).toMatchObject({ _tag: "ProviderHttpError", status: 500 })

      const none = yield* runOnClock("d", Infinity, { maxRetries: 0 })
      expect(none.arrivals).toHaveLength(1)
      expect(attemptsFailed(none)).toEqual([])

      const recovered = yield* runOnClock("e", 2, { maxRetries: 2, baseDelayMs: 100 })
      expect(recovered.arrivals).toHaveLength(3)
      expect(recovered.outputs.map((o) => o._tag).filter((t) => t !== "TextDelta")).toEqual([
        "AttemptFailed",
        "AttemptFailed",
        "TurnCompleted"
      ])
      expect(turnOf(recovered)).toMatchObject({ text: "All good.", attempts: 3, calls: [] })
    }).pipe(Effect.provide(pipelineLayer)))

  it.effect("a spent deadline fails with StreamTimeout total before any request is sent", () =>
    Effect.gen(function*() {
      const pipeline = yield* ToolCallPipeline.ToolCallPipeline
      const run = yield* collect(
        pipeline.run({ prompt: Prompt.make("Hi."), providerOptions: { run: "spent", failures: 0 } }, {
          toolkit: Crm,
          scope: { tenant: "clock", turn: "spent" },
          deadlineMs: 0
        })
      )
      expect(errorOf(run)).toEqual(
        new ModelStreamError.StreamTimeout({ finishReason: null, phase: "total", budgetMs: 0 })
      )
      expect(arrivals.get("spent")).toBeUndefined()
    }).pipe(Effect.provide(pipelineLayer)))
})
