/**
 * Why the provider-id key strategy double-executes and the intent key does not: a client retries
 * a turn (its HTTP request timed out), the model answers with the same decision, and the
 * provider mints fresh tool-call ids. Both streams go through the real assembler and validation.
 */
import { assert, describe, it } from "@effect/vitest"
import { Assembler, type StreamEvent, ToolCall } from "@toolgate/core"
import { IdempotencyStore, ToolExecutor } from "@toolgate/runtime"
import { Effect, Schema, Stream } from "effect"
import { Tool, Toolkit } from "effect/ai"

const CreateTask = Tool.make("CreateTask", {
  parameters: Schema.Struct({ dealId: Schema.String, title: Schema.String }),
  success: Schema.Struct({ taskId: Schema.String })
})
const Crm = Toolkit.make(CreateTask)

/** One streamed response: two parallel calls, arguments split across deltas, OpenAI Chat style. */
const stream = (ids: readonly [string, string]): Stream.Stream<StreamEvent.StreamEvent> =>
  Stream.make<ReadonlyArray<StreamEvent.StreamEvent>>(
    { text: "Creating the follow-ups." },
    { toolCalls: [{ index: 0, id: ids[0], name: "CreateTask", argumentsDelta: `{"dealId":"D-1",` }] },
    {
      toolCalls: [{ index: 1, id: ids[1], name: "CreateTask", argumentsDelta: `{"title":"Send quote","dealId":"D-2"}` }]
    },
    { toolCalls: [{ index: 0, argumentsDelta: `"title":"Call back"}` }] },
    {
      finish: {
        reason: "tool_calls",
        class: "success",
        terminal: true
      }
    }
  )

const released = (ids: readonly [string, string]) =>
  stream(ids).pipe(Assembler.assemble(), Effect.flatMap(ToolCall.validate(Crm)))

const runTwice = (strategy: "intent" | "providerId") =>
  Effect.gen(function*() {
    let runs = 0
    const executor = yield* ToolExecutor.make(Crm, {
      CreateTask: {
        recovery: "reexecute",
        run: (params) => Effect.sync(() => ({ taskId: `${params.dealId}#${++runs}` }))
      }
    })
    const scope = { tenant: "acme", turn: "conv-7/msg-3" }
    const first = yield* executor.executeAll(yield* released(["call_A1", "call_A2"]), { scope, strategy })
    // the client's request timed out; it retries the same turn and the provider mints new ids
    const retry = yield* executor.executeAll(yield* released(["call_B1", "call_B2"]), { scope, strategy })
    return { runs, first, retry }
  }).pipe(Effect.provide(IdempotencyStore.layerMemory))

describe("key strategies on a retried stream", () => {
  it.live("the intent key executes each decision once: the retry replays", () =>
    Effect.gen(function*() {
      const { first, retry, runs } = yield* runTwice("intent")
      assert.strictEqual(runs, 2)
      assert.deepStrictEqual(first.map((r) => r._tag === "Success" && r.success._tag), ["Executed", "Executed"])
      assert.deepStrictEqual(retry.map((r) => r._tag === "Success" && r.success._tag), ["Replayed", "Replayed"])
    }))

  it.live("the provider-id key double-executes: every retried stream looks new", () =>
    Effect.gen(function*() {
      const { retry, runs } = yield* runTwice("providerId")
      assert.strictEqual(runs, 4)
      assert.deepStrictEqual(retry.map((r) => r._tag === "Success" && r.success._tag), ["Executed", "Executed"])
    }))
})
