/**
 * The agent loop over a `ModelStream` that answers by script (the step is read from the request:
 * one more than the tool messages it carries), with the memory store and journal: the 3-step SDR
 * turn and its outputs, replays from the journal (no request, the same transcript), a turn cut at
 * any output and redelivered (a property), two workers on one turn, failures that release the
 * step, retries inside a step, failures shown to the model, `maxSteps` and `stopWhen`, ordinals
 * across steps, a request that does not match the journal, the deadline across steps (TestClock),
 * and a lease lost while the model streams.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { ModelStream, ModelStreamError, type StreamEvent } from "@toolgate/core"
import { Agent, IdempotencyStore, StepJournal, ToolExecutor } from "@toolgate/runtime"
import { Deferred, Effect, Exit, Fiber, Layer, Metric, Option, Schema, Stream } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"

const LookupContact = Tool.make("lookup_contact", {
  description: "Find the CRM contact of an email address",
  parameters: Schema.Struct({ email: Schema.String }),
  success: Schema.Struct({ contact_id: Schema.String, segment: Schema.String })
})
const CreateTask = Tool.make("create_task", {
  parameters: Schema.Struct({ lead_id: Schema.String, title: Schema.String }),
  success: Schema.Struct({ id: Schema.String }),
  failure: Schema.Struct({ status: Schema.Number, message: Schema.String })
})
const AssignOwner = Tool.make("assign_owner", {
  parameters: Schema.Struct({ lead_id: Schema.String, owner_id: Schema.String }),
  success: Schema.Struct({ id: Schema.String })
})
const toolkit = Toolkit.make(LookupContact, CreateTask, AssignOwner)

interface ScriptedCall {
  readonly name: string
  readonly arguments: Readonly<Record<string, unknown>>
}
interface ScriptedStep {
  readonly text: string
  readonly calls: ReadonlyArray<ScriptedCall>
}

/** The SDR turn: look the contact up, create the follow-up task, assign the owner, answer. */
const sdr = (lead: string): ReadonlyArray<ScriptedStep> => [
  { text: `Looking up ${lead}. `, calls: [{ name: "lookup_contact", arguments: { email: `${lead}@acme.test` } }] },
  {
    text: "Creating the follow-up task. ",
    calls: [{ name: "create_task", arguments: { lead_id: lead, title: "Call back" } }]
  },
  {
    text: "Routing to the owner. ",
    calls: [{ name: "assign_owner", arguments: { lead_id: lead, owner_id: "usr_7" } }]
  },
  { text: `Done: ${lead} is routed.`, calls: [] }
]

/** Which step a request is: one more than the tool messages it carries. */
const stepOf = (request: ModelStream.ModelRequest) => request.prompt.content.filter((m) => m.role === "tool").length + 1

/** The events of one scripted step: text in two deltas, each call in two argument deltas, the finish with usage. */
const eventsOf = (step: number, scripted: ScriptedStep): ReadonlyArray<StreamEvent.StreamEvent> => {
  const half = Math.ceil(scripted.text.length / 2)
  const events: Array<StreamEvent.StreamEvent> = [
    { text: scripted.text.slice(0, half) },
    { text: scripted.text.slice(half) }
  ]
  scripted.calls.forEach((call, index) => {
    const text = JSON.stringify(call.arguments)
    events.push({
      toolCalls: [{ index, id: `call_${step}_${index}`, name: call.name, argumentsDelta: text.slice(0, 5) }]
    })
    events.push({ toolCalls: [{ index, argumentsDelta: text.slice(5) }] })
  })
  events.push({
    finish: { reason: scripted.calls.length > 0 ? "tool_calls" : "stop", class: "success", terminal: true },
    usage: { inputTokens: 100 * step, outputTokens: 10 + step },
    end: true
  })
  return events
}

interface Asked {
  readonly step: number
  readonly attempt: ModelStream.Attempt
  readonly request: ModelStream.ModelRequest
}

/**
 * A model stream that answers each step of `script` (or `answer`'s override), recording what it
 * was asked.
 */
const scriptedModel = (
  script: (request: ModelStream.ModelRequest) => ReadonlyArray<ScriptedStep>,
  answer?: (
    asked: Asked,
    events: ReadonlyArray<StreamEvent.StreamEvent>
  ) => Stream.Stream<StreamEvent.StreamEvent, ModelStreamError.ModelStreamError> | undefined
) => {
  const asked: Array<Asked> = []
  const layer = Layer.succeed(
    ModelStream.ModelStream,
    ModelStream.ModelStream.of({
      provider: "scripted",
      stream: (request, attempt) =>
        Stream.suspend(() => {
          const step = stepOf(request)
          const entry = { step, attempt, request }
          asked.push(entry)
          const steps = script(request)
          const events = eventsOf(step, steps[Math.min(step, steps.length) - 1]!)
          return answer?.(entry, events) ?? Stream.fromIterable(events)
        })
    })
  )
  return { asked, layer }
}

/** A CRM in memory: every mutation counted by its downstream key (a duplicate is a second count). */
const crm = () => {
  const mutations = new Map<string, number>()
  const runs: Array<string> = []
  const mutate = (action: string, key: string, id: string) =>
    Effect.sync(() => {
      runs.push(action)
      mutations.set(`${action}:${key}`, (mutations.get(`${action}:${key}`) ?? 0) + 1)
      return { id }
    })
  const executor = ToolExecutor.layer(toolkit, {
    lookup_contact: {
      run: (params) =>
        Effect.sync(() => (runs.push("lookup_contact"), { contact_id: `c-${params.email}`, segment: "smb" }))
    },
    create_task: {
      recovery: "reexecute",
      run: (params, ctx) => mutate("create_task", ctx.downstreamKey, `task-${params.lead_id}-${params.title}`)
    },
    assign_owner: {
      recovery: "reexecute",
      run: (params, ctx) => mutate("assign_owner", ctx.downstreamKey, `assign-${params.lead_id}-${params.owner_id}`)
    }
  })
  return { mutations, runs, executor }
}

/** The agent over a model, a CRM, and the given store and journal (shared between runs to replay). */
const agentLayer = (
  model: Layer.Layer<ModelStream.ModelStream>,
  executor: ReturnType<typeof crm>["executor"],
  services: Layer.Layer<IdempotencyStore.IdempotencyStore | StepJournal.StepJournal>
) => Agent.layer.pipe(Layer.provide(Layer.mergeAll(model, executor.pipe(Layer.provide(services)), services)))

const memory = () => Layer.mergeAll(IdempotencyStore.layerMemory, StepJournal.layerMemory)

const request = (lead: string): ModelStream.ModelRequest => ({
  prompt: Prompt.make([
    { role: "system", content: "You qualify inbound leads." },
    { role: "user", content: `New inbound lead ${lead}.` }
  ])
})

let turns = 0
const scopeOf = (lead: string) => ({ tenant: "acme", turn: `${lead}-${++turns}` })

const encode = Schema.encodeSync(Prompt.Prompt)

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) return assert.fail("expected a failure")
  const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (reason?._tag !== "Fail") return assert.fail("expected a typed failure")
  return reason.error
}

describe("Agent", () => {
  it.effect("runs the 3-step SDR turn: each step streamed, executed, fed back; the transcript and the cost", () =>
    Effect.gen(function*() {
      const model = scriptedModel(() => sdr("lead-1"))
      const { mutations, runs, executor } = crm()
      const services = yield* Layer.build(memory())
      const scope = scopeOf("lead-1")
      const outputs = yield* Agent.run(request("lead-1"), { toolkit, scope }).pipe(
        Stream.runCollect,
        Effect.provide(agentLayer(model.layer, executor, Layer.succeedContext(services)))
      )
      const withCall = ["StepStarted", "TextDelta", "TextDelta", "CallCompleted", "StepCompleted"]
      expect(outputs.map((o) => o._tag)).toEqual([
        ...withCall,
        ...withCall,
        ...withCall,
        "StepStarted",
        "TextDelta",
        "TextDelta",
        "StepCompleted",
        "TurnCompleted"
      ])
      const last = outputs[outputs.length - 1]!
      assert(last._tag === "TurnCompleted")
      const result = last.result
      expect(result.stoppedBy).toBe("answer")
      expect(result.text).toBe("Done: lead-1 is routed.")
      expect(result.finishReason).toBe("stop")
      expect(result.steps.map((s) => [s.step, s.replayed, s.attempts, s.calls.map((c) => c.outcome._tag)])).toEqual([
        [1, false, 1, ["Executed"]],
        [2, false, 1, ["Executed"]],
        [3, false, 1, ["Executed"]],
        [4, false, 1, []]
      ])
      expect(result.usage).toEqual({ inputTokens: 100 + 200 + 300 + 400, outputTokens: 11 + 12 + 13 + 14 })
      expect(result.cost).toEqual({
        modelRequests: 4,
        inputTokens: 1_000,
        outputTokens: 50,
        failedAttempts: 0,
        failedInputTokens: 0,
        failedOutputTokens: 0,
        stepsReplayed: 0,
        requestsSaved: 0,
        savedInputTokens: 0,
        savedOutputTokens: 0
      })
      expect(runs).toEqual(["lookup_contact", "create_task", "assign_owner"])
      expect([...mutations.values()]).toEqual([1, 1])

      // what the model was sent: the toolkit's tools, and each step the results of the last
      expect(model.asked.map((a) => a.step)).toEqual([1, 2, 3, 4])
      expect(model.asked[0]!.request.tools).toEqual(ModelStream.toolsOf(toolkit))
      const second = model.asked[1]!.request.prompt.content
      expect(second.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"])
      const [assistant, tool] = [second[2]!, second[3]!]
      assert(assistant.role === "assistant" && tool.role === "tool")
      expect(assistant.content.map((p) => p.type)).toEqual(["text", "tool-call"])
      expect(assistant.content[1]).toMatchObject({
        id: "call_1_0",
        name: "lookup_contact",
        params: { email: "lead-1@acme.test" }
      })
      expect(tool.content[0]).toMatchObject({
        id: "call_1_0",
        name: "lookup_contact",
        isFailure: false,
        result: { contact_id: "c-lead-1@acme.test", segment: "smb" }
      })
      // the transcript: the prompt, three steps of calls and results, the answer
      expect(result.transcript.content.map((m) => m.role)).toEqual([
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant"
      ])
      // the journal holds every step, recorded with the arguments' exact text
      const steps = yield* StepJournal.StepJournal.use((j) => j.steps(scope)).pipe(Effect.provideContext(services))
      expect(steps.map((s) => [s.step, s.status, s.output?.calls.map((c) => c.argumentsText)])).toEqual([
        [1, "recorded", [`{"email":"lead-1@acme.test"}`]],
        [2, "recorded", [`{"lead_id":"lead-1","title":"Call back"}`]],
        [3, "recorded", [`{"lead_id":"lead-1","owner_id":"usr_7"}`]],
        [4, "recorded", []]
      ])
    }))

  it.effect("the same turn again: every step replayed from the journal, no request, the same transcript", () =>
    Effect.gen(function*() {
      const model = scriptedModel(() => sdr("lead-2"))
      const { mutations, runs, executor } = crm()
      const services = Layer.succeedContext(yield* Layer.build(memory()))
      const layer = agentLayer(model.layer, executor, services)
      const scope = scopeOf("lead-2")
      const first = yield* Agent.runTurn(request("lead-2"), { toolkit, scope }).pipe(Effect.provide(layer))
      const outputs = yield* Agent.run(request("lead-2"), { toolkit, scope }).pipe(
        Stream.runCollect,
        Effect.provide(layer)
      )
      const last = outputs[outputs.length - 1]!
      assert(last._tag === "TurnCompleted")
      const again = last.result
      expect(model.asked).toHaveLength(4)
      expect(runs).toEqual(["lookup_contact", "create_task", "assign_owner"])
      expect([...mutations.values()]).toEqual([1, 1])
      expect(again.steps.map((s) => [s.replayed, s.attempts, s.calls.map((c) => c.outcome._tag)])).toEqual([
        [true, 1, ["Replayed"]],
        [true, 1, ["Replayed"]],
        [true, 1, ["Replayed"]],
        [true, 1, []]
      ])
      expect(encode(again.transcript)).toEqual(encode(first.transcript))
      expect(again.text).toBe(first.text)
      expect(again.usage).toEqual(first.usage)
      expect(again.cost).toMatchObject({
        modelRequests: 0,
        inputTokens: 0,
        outputTokens: 0,
        stepsReplayed: 4,
        requestsSaved: 4,
        savedInputTokens: 1_000,
        savedOutputTokens: 50
      })
      // a replayed step says so, and its text comes whole
      expect(outputs.filter((o) => o._tag === "StepStarted").every((o) => o._tag === "StepStarted" && o.replayed))
        .toBe(true)
      expect(outputs.filter((o) => o._tag === "TextDelta").map((o) => o._tag === "TextDelta" && o.text)).toEqual(
        sdr("lead-2").map((s) => s.text)
      )
      // the replayed calls' results are the executions' bytes
      for (const [i, step] of again.steps.entries()) {
        expect(step.calls.map((c) => c.outcome._tag !== "Failed" && c.outcome.json)).toEqual(
          first.steps[i]!.calls.map((c) => c.outcome._tag !== "Failed" && c.outcome.json)
        )
      }
    }))

  it.effect("metrics: steps by source, each asked step's tokens, what replays saved, turns by outcome", () =>
    Effect.gen(function*() {
      const model = scriptedModel(() => sdr("lead-m"))
      const layer = agentLayer(model.layer, crm().executor, Layer.succeedContext(yield* Layer.build(memory())))
      const scope = scopeOf("lead-m")
      yield* Agent.runTurn(request("lead-m"), { toolkit, scope }).pipe(Effect.provide(layer))
      yield* Agent.runTurn(request("lead-m"), { toolkit, scope }).pipe(Effect.provide(layer))
      const counter = (metric: typeof Agent.metrics.steps, attributes: Record<string, string>) =>
        Effect.map(Metric.value(Metric.withAttributes(metric, { provider: "scripted", ...attributes })), (s) => s.count)
      const { metrics } = Agent
      expect(yield* counter(metrics.steps, { source: "model" })).toBe(4)
      expect(yield* counter(metrics.steps, { source: "journal" })).toBe(4)
      expect(yield* counter(metrics.requestsSaved, {})).toBe(4)
      expect(yield* counter(metrics.tokensSaved, { kind: "input" })).toBe(1_000)
      expect(yield* counter(metrics.tokensSaved, { kind: "output" })).toBe(50)
      expect(yield* counter(metrics.turns, { outcome: "answer" })).toBe(2)
      const input = yield* Metric.value(
        Metric.withAttributes(metrics.stepTokens, { provider: "scripted", kind: "input" })
      )
      expect([input.count, input.sum, input.min, input.max]).toEqual([4, 1_000, 100, 400])
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())))

  it.effect.prop(
    "a turn cut after any output and delivered again: each mutation once, journaled steps never asked again, the same transcript",
    { cut: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 19 })) },
    ({ cut }) =>
      Effect.gen(function*() {
        const lead = `lead-cut-${cut}`
        const reference = scriptedModel(() => sdr(lead))
        const clean = yield* Agent.runTurn(request(lead), { toolkit, scope: scopeOf(lead) }).pipe(
          Effect.provide(agentLayer(reference.layer, crm().executor, memory()))
        )
        const model = scriptedModel(() => sdr(lead))
        const { mutations, runs, executor } = crm()
        const layer = agentLayer(model.layer, executor, Layer.succeedContext(yield* Layer.build(memory())))
        const scope = scopeOf(lead)
        const seen = yield* Agent.run(request(lead), { toolkit, scope }).pipe(
          Stream.take(cut),
          Stream.runCollect,
          Effect.provide(layer)
        )
        const completedBefore = seen.filter((o) => o._tag === "StepCompleted").length
        const resumed = yield* Agent.runTurn(request(lead), { toolkit, scope }).pipe(Effect.provide(layer))
        expect(encode(resumed.transcript)).toEqual(encode(clean.transcript))
        expect([...mutations.values()]).toEqual([1, 1])
        expect(runs.filter((r) => r !== "lookup_contact")).toEqual(["create_task", "assign_owner"])
        // a step completed before the cut was asked once; at most the step cut while streaming twice
        const perStep = [1, 2, 3, 4].map((step) => model.asked.filter((a) => a.step === step).length)
        perStep.forEach((n, i) => expect(n).toBe(i < completedBefore ? 1 : n))
        expect(perStep.filter((n) => n === 2).length).toBeLessThanOrEqual(1)
        expect(perStep.every((n) => n >= 1 && n <= 2)).toBe(true)
        expect(resumed.cost.stepsReplayed).toBeGreaterThanOrEqual(completedBefore)
      }),
    { arbitrary: { runs: 25 } }
  )

  it.live("two workers on one turn: the model is asked once per step, every mutation once, the same transcript", () =>
    Effect.gen(function*() {
      const model = scriptedModel(
        () => sdr("lead-3"),
        (_asked, events) => Stream.fromIterable(events).pipe(Stream.tap(() => Effect.sleep("5 millis")))
      )
      const { mutations, executor } = crm()
      const layer = agentLayer(model.layer, executor, Layer.succeedContext(yield* Layer.build(memory())))
      const scope = scopeOf("lead-3")
      const [a, b] = yield* Effect.all([
        Agent.runTurn(request("lead-3"), { toolkit, scope }).pipe(Effect.provide(layer)),
        Agent.runTurn(request("lead-3"), { toolkit, scope }).pipe(Effect.provide(layer))
      ], { concurrency: "unbounded" })
      expect(model.asked.map((x) => x.step)).toEqual([1, 2, 3, 4])
      expect([...mutations.values()]).toEqual([1, 1])
      expect(encode(a.transcript)).toEqual(encode(b.transcript))
      // every step was asked by one of them and replayed by the other
      for (const i of [0, 1, 2, 3]) {
        expect([a.steps[i]!.replayed, b.steps[i]!.replayed].toSorted()).toEqual([false, true])
      }
      expect(a.cost.modelRequests + b.cost.modelRequests).toBe(4)
    }))

  it.effect("a step whose request fails is released: StepFailed names it; the next delivery replays the steps before and asks again", () =>
    Effect.gen(function*() {
      let failing = true
      const model = scriptedModel(() => sdr("lead-4"), (asked, events) =>
        asked.step === 2 && failing
          ? Stream.fromIterable([
            ...events.slice(0, 3),
            {
              finish: { reason: "length", class: "token_limit", terminal: true },
              end: true
            } satisfies StreamEvent.StreamEvent
          ])
          : undefined)
      const { mutations, runs, executor } = crm()
      const services = yield* Layer.build(memory())
      const layer = agentLayer(model.layer, executor, Layer.succeedContext(services))
      const scope = scopeOf("lead-4")
      const error = failureOf(
        yield* Effect.exit(Agent.runTurn(request("lead-4"), { toolkit, scope }).pipe(Effect.provide(layer)))
      )
      assert(error._tag === "StepFailed")
      expect(error.step).toBe(2)
      expect(error.error._tag).toBe("TokenLimitExceeded")
      expect(error.message).toMatch(/^step 2: TokenLimitExceeded: /)
      const journal = yield* Effect.provideContext(StepJournal.StepJournal.use(Effect.succeed), services)
      expect((yield* journal.steps(scope)).map((s) => [s.step, s.status])).toEqual([[1, "recorded"], [2, "released"]])
      expect(runs).toEqual(["lookup_contact"])

      failing = false
      const result = yield* Agent.runTurn(request("lead-4"), { toolkit, scope }).pipe(Effect.provide(layer))
      expect(result.steps.map((s) => s.replayed)).toEqual([true, false, false, false])
      expect(model.asked.map((a) => a.step)).toEqual([1, 2, 2, 3, 4])
      expect(runs).toEqual(["lookup_contact", "create_task", "assign_owner"])
      expect([...mutations.values()]).toEqual([1, 1])
    }))

  it.live("a step's stream is retried inside the step: the retry is announced, its cost counted", () =>
    Effect.gen(function*() {
      const model = scriptedModel(() => sdr("lead-5"), (asked, events) =>
        asked.step === 2 && asked.attempt.number === 1
          ? Stream.fromIterable(events.slice(0, 3)).pipe(
            Stream.concat(Stream.fail(new ModelStreamError.TransportError({ phase: "body", reason: "reset" })))
          )
          : undefined)
      const { executor } = crm()
      const outputs = yield* Agent.run(request("lead-5"), {
        toolkit,
        scope: scopeOf("lead-5"),
        retry: { baseDelayMs: 1 }
      })
        .pipe(Stream.runCollect, Effect.provide(agentLayer(model.layer, executor, memory())))
      const failed = outputs.filter((o) => o._tag === "AttemptFailed")
      expect(failed).toMatchObject([{ step: 2, attempt: 1, error: { _tag: "TransportError" } }])
      expect(
        outputs.filter((o) => o._tag === "TextDelta" && o.step === 2).map((o) => o._tag === "TextDelta" && o.attempt)
      )
        .toEqual([1, 1, 2, 2])
      const last = outputs[outputs.length - 1]!
      assert(last._tag === "TurnCompleted")
      const step2 = last.result.steps[1]!
      expect(step2.attempts).toBe(2)
      // the cut attempt: 3 deltas received, no usage reported, so the completed attempt's input
      expect(step2.failed).toEqual({ attempts: 1, inputTokens: 200, outputTokens: 3 })
      expect(last.result.cost).toMatchObject({
        modelRequests: 5,
        failedAttempts: 1,
        failedInputTokens: 200,
        failedOutputTokens: 3
      })
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())))

  it.effect("a failed call and an unknown outcome are shown to the model as such; the turn goes on", () =>
    Effect.gen(function*() {
      const model = scriptedModel(() => [
        {
          text: "Trying both.",
          calls: [
            { name: "create_task", arguments: { lead_id: "lead-6", title: "Call back" } },
            { name: "assign_owner", arguments: { lead_id: "lead-6", owner_id: "usr_9" } }
          ]
        },
        { text: "One failed; I will verify the other.", calls: [] }
      ])
      const executor = ToolExecutor.layer(toolkit, {
        lookup_contact: { run: () => Effect.die("not called") },
        create_task: { run: () => Effect.fail({ status: 404, message: "lead not found" }) },
        assign_owner: {
          recovery: "manual",
          run: () => Effect.fail(new ToolExecutor.Ambiguous({ detail: "read timeout" }))
        }
      })
      const result = yield* Agent.runTurn(request("lead-6"), { toolkit, scope: scopeOf("lead-6") }).pipe(
        Effect.provide(agentLayer(model.layer, executor, memory()))
      )
      expect(result.steps[0]!.calls.map((c) => c.outcome._tag === "Failed" && c.outcome.error._tag)).toEqual([
        "ToolExecutionFailed",
        "OutcomeUnknown"
      ])
      const tool = model.asked[1]!.request.prompt.content.find((m) => m.role === "tool")
      assert(tool?.role === "tool")
      expect(tool.content).toMatchObject([
        {
          name: "create_task",
          isFailure: true,
          result: { error: "ToolExecutionFailed", failure: { status: 404, message: "lead not found" } }
        },
        {
          name: "assign_owner",
          isFailure: true,
          result: { error: "OutcomeUnknown", message: "outcome unknown — verify, do not retry" }
        }
      ])
      expect(result.stoppedBy).toBe("answer")
    }))

  it.effect("maxSteps ends a turn that keeps calling (its last calls executed); stopWhen ends it when told", () =>
    Effect.gen(function*() {
      const looping = (n: number): ReadonlyArray<ScriptedStep> =>
        Array.from({ length: n }, (_, i) => ({
          text: `Lookup ${i + 1}.`,
          calls: [{ name: "lookup_contact", arguments: { email: `x${i + 1}@acme.test` } }]
        }))
      const model = scriptedModel(() => looping(10))
      const { runs, executor } = crm()
      const capped = yield* Agent.runTurn(request("lead-7"), { toolkit, scope: scopeOf("lead-7"), maxSteps: 3 }).pipe(
        Effect.provide(agentLayer(model.layer, executor, memory()))
      )
      expect(capped.stoppedBy).toBe("max_steps")
      expect(capped.steps).toHaveLength(3)
      expect(runs).toHaveLength(3)

      const told = scriptedModel(() => looping(10))
      const seen: Array<number> = []
      const stopped = yield* Agent.runTurn(request("lead-8"), {
        toolkit,
        scope: scopeOf("lead-8"),
        stopWhen: (step, steps) => {
          seen.push(steps.length)
          return step.step === 2
        }
      }).pipe(Effect.provide(agentLayer(told.layer, crm().executor, memory())))
      expect(stopped.stoppedBy).toBe("stop_predicate")
      expect(stopped.steps).toHaveLength(2)
      expect(seen).toEqual([1, 2])
      expect(told.asked).toHaveLength(2)

      const invalid = failureOf(
        yield* Effect.exit(
          Agent.runTurn(request("lead-9"), { toolkit, scope: scopeOf("lead-9"), maxSteps: 0 }).pipe(
            Effect.provide(agentLayer(told.layer, crm().executor, memory()))
          )
        )
      )
      expect(invalid).toMatchObject({ _tag: "InvalidAgentOptions", option: "maxSteps", value: "0" })
      expect(told.asked).toHaveLength(2)
    }))

  it.effect("an identical call in a later step is a second call (ordinals count across steps), and replays as such", () =>
    Effect.gen(function*() {
      const task = { name: "create_task", arguments: { lead_id: "lead-10", title: "Call back" } }
      const model = scriptedModel(() => [
        { text: "First.", calls: [task] },
        { text: "Again, as asked.", calls: [task] },
        { text: "Two tasks.", calls: [] }
      ])
      const { mutations, executor } = crm()
      const layer = agentLayer(model.layer, executor, Layer.succeedContext(yield* Layer.build(memory())))
      const scope = scopeOf("lead-10")
      const first = yield* Agent.runTurn(request("lead-10"), { toolkit, scope }).pipe(Effect.provide(layer))
      expect(first.steps.map((s) => s.calls.map((c) => c.outcome._tag))).toEqual([["Executed"], ["Executed"], []])
      const keys = first.steps.flatMap((s) => s.calls.map((c) => c.outcome._tag !== "Failed" && c.outcome.key))
      expect(new Set(keys).size).toBe(2)
      expect([...mutations.values()]).toEqual([1, 1])
      const again = yield* Agent.runTurn(request("lead-10"), { toolkit, scope }).pipe(Effect.provide(layer))
      expect(again.steps.flatMap((s) => s.calls.map((c) => c.outcome._tag !== "Failed" && c.outcome.key))).toEqual(keys)
      expect([...mutations.values()]).toEqual([1, 1])
    }))

  it.effect("the same scope with another prompt: JournalMismatch at step 1, the model is not asked", () =>
    Effect.gen(function*() {
      const model = scriptedModel(() => sdr("lead-11"))
      const layer = agentLayer(model.layer, crm().executor, Layer.succeedContext(yield* Layer.build(memory())))
      const scope = scopeOf("lead-11")
      yield* Agent.runTurn(request("lead-11"), { toolkit, scope }).pipe(Effect.provide(layer))
      const error = failureOf(
        yield* Effect.exit(Agent.runTurn(request("lead-other"), { toolkit, scope }).pipe(Effect.provide(layer)))
      )
      assert(error._tag === "StepFailed")
      expect(error.step).toBe(1)
      expect(error.error._tag).toBe("JournalMismatch")
      expect(model.asked).toHaveLength(4)
    }))

  it.effect("one deadline spans the turn: each step's stream gets what is left, and the step that runs out is named", () =>
    Effect.gen(function*() {
      // each response takes 100 ms of the TestClock (what is left of the deadline when less)
      const model = scriptedModel(
        () => sdr("lead-12"),
        (asked, events) =>
          Stream.fromEffect(TestClock.adjust(Math.min(100, asked.attempt.remainingMs))).pipe(
            Stream.flatMap(() =>
              asked.attempt.remainingMs < 100
                ? Stream.fail(
                  new ModelStreamError.StreamTimeout({
                    finishReason: null,
                    phase: "total",
                    budgetMs: asked.attempt.remainingMs
                  })
                )
                : Stream.fromIterable(events)
            )
          )
      )
      const error = failureOf(
        yield* Effect.exit(
          Agent.runTurn(request("lead-12"), { toolkit, scope: scopeOf("lead-12"), deadlineMs: 250 })
            .pipe(Effect.provide(agentLayer(model.layer, crm().executor, memory())))
        )
      )
      expect(model.asked.map((a) => [a.step, a.attempt.remainingMs])).toEqual([[1, 250], [2, 150], [3, 50]])
      assert(error._tag === "StepFailed")
      expect(error.step).toBe(3)
      expect(error.error).toEqual(
        new ModelStreamError.StreamTimeout({ finishReason: null, phase: "total", budgetMs: 250 })
      )
    }))

  it.effect("a step another worker is asking: StepInProgress after the bounded wait, StreamAborted at once when the caller aborts", () =>
    Effect.gen(function*() {
      const streaming = yield* Deferred.make<void>()
      const model = scriptedModel(
        () => sdr("lead-14"),
        () => Stream.fromEffect(Deferred.succeed(streaming, undefined)).pipe(Stream.flatMap(() => Stream.never))
      )
      const layer = agentLayer(model.layer, crm().executor, Layer.succeedContext(yield* Layer.build(memory())))
      const scope = scopeOf("lead-14")
      const holder = yield* Agent.runTurn(request("lead-14"), { toolkit, scope }).pipe(
        Effect.provide(layer),
        Effect.forkChild
      )
      yield* Deferred.await(streaming)
      const waiting = yield* Agent.runTurn(request("lead-14"), { toolkit, scope, journal: { waitMs: 500 } }).pipe(
        Effect.provide(layer),
        Effect.exit,
        Effect.forkChild
      )
      yield* TestClock.adjust("1 second")
      const busy = failureOf(yield* Fiber.join(waiting))
      assert(busy._tag === "StepFailed" && busy.error._tag === "StepInProgress")
      expect(busy.step).toBe(1)
      expect(busy.error.waitedMs).toBeGreaterThanOrEqual(500)
      expect(busy.error.retryAfterMs).toBeGreaterThan(0)

      const controller = new AbortController()
      controller.abort()
      const aborted = failureOf(
        yield* Effect.exit(
          Agent.runTurn(request("lead-14"), { toolkit, scope, signal: controller.signal }).pipe(Effect.provide(layer))
        )
      )
      assert(aborted._tag === "StepFailed")
      expect(aborted.error._tag).toBe("StreamAborted")
      expect(model.asked).toHaveLength(1)
      yield* Fiber.interrupt(holder)
    }))

  it.effect("a lease lost while the model streams: nothing of this worker is recorded; it replays the step the taker recorded", () =>
    Effect.gen(function*() {
      const streaming = yield* Deferred.make<void>()
      const model = scriptedModel(() => sdr("lead-13"), (asked, events) =>
        asked.step === 1
          ? Stream.fromEffect(Deferred.succeed(streaming, undefined)).pipe(
            Stream.flatMap(() => Stream.fromIterable(events.slice(0, 1))),
            Stream.concat(Stream.never)
          )
          : undefined)
      const services = yield* Layer.build(memory())
      const journal = yield* Effect.provideContext(StepJournal.StepJournal.use(Effect.succeed), services)
      const scope = scopeOf("lead-13")
      const fiber = yield* Agent.run(request("lead-13"), {
        toolkit,
        scope,
        journal: { leaseMs: 1_000, heartbeatMs: 100 }
      }).pipe(
        Stream.runCollect,
        Effect.provide(agentLayer(model.layer, crm().executor, Layer.succeedContext(services))),
        Effect.forkChild
      )
      yield* Deferred.await(streaming)
      const mine = Option.getOrThrow(yield* journal.read({ ...scope, step: 1 }))
      // another worker takes the step over (as if this worker's lease had lapsed) and records it
      const taken = yield* journal.claim({
        ...scope,
        step: 1,
        fingerprint: mine.fingerprint,
        owner: "the-other-worker",
        leaseMs: 1_000,
        retentionMs: 60_000,
        now: new Date(mine.leaseExpiresAt!.getTime())
      })
      assert(taken._tag === "Claimed")
      yield* journal.record(taken.lease, {
        output: {
          text: "Recorded by the other worker.",
          calls: [{
            index: 0,
            id: "call_other",
            name: "lookup_contact",
            argumentsText: `{"email":"lead-13@acme.test"}`
          }],
          finishReason: "tool_calls",
          usage: null,
          attempts: 1
        },
        retentionMs: 60_000
      })
      yield* TestClock.adjust("100 millis")
      const outputs = yield* Fiber.join(fiber)
      expect(outputs.find((o) => o._tag === "AttemptFailed")).toMatchObject({
        step: 1,
        error: { _tag: "StepLeaseLost" }
      })
      const last = outputs[outputs.length - 1]!
      assert(last._tag === "TurnCompleted")
      expect(last.result.steps[0]).toMatchObject({ replayed: true, text: "Recorded by the other worker." })
      expect(last.result.steps[0]!.calls[0]!.id).toBe("call_other")
      const recorded = Option.getOrThrow(yield* journal.read({ ...scope, step: 1 }))
      expect(recorded.output?.text).toBe("Recorded by the other worker.")
    }))
})
