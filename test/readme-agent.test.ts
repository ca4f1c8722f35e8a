/**
 * The README's agent example runs: `test/readme/agent.ts` (the README's block, verbatim), in a
 * scratch directory (its `.toolgate/` a copy of an initialised PGlite directory), against the
 * fake provider on 127.0.0.1 reached through the `OPENAI_BASE_URL` it reads, answering a 3-step
 * SDR turn. The first run (the import runs it) asks the model once per step and sends the tools
 * and the history; running the example's program again replays every step from the journal: no
 * request, the same transcript, no call executed again.
 */
import { expect, it } from "@effect/vitest"
import { FakeProvider } from "@toolgate/testing"
import { Effect, Schema } from "effect"
import { Prompt } from "effect/ai"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Pglite from "../packages/runtime/test/support/pglite.js"

const script: ReadonlyArray<FakeProvider.Scenario> = [
  { text: "Looking dana up.", toolCalls: [{ name: "lookup_contact", arguments: { email: "dana@acme.io" } }] },
  {
    text: "Creating the task and routing the lead.",
    toolCalls: [
      { name: "create_task", arguments: { lead_id: "L-dana", title: "Send pricing" } },
      { name: "assign_owner", arguments: { lead_id: "L-dana", owner_id: "usr_7" } }
    ]
  },
  { text: "Done: L-dana has a follow-up task and is routed to usr_7." }
]

it.live("the README's agent example runs a 3-step turn, and replays it from the journal", () =>
  Effect.gen(function*() {
    const seen: Array<FakeProvider.Request> = []
    const fake = yield* FakeProvider.make({
      plan: (request) => (seen.push(request), FakeProvider.steps(script)(request))
    })
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-readme-agent-"))
    fs.renameSync(yield* Effect.promise(Pglite.freshDir), path.join(scratch, ".toolgate"))
    const cwd = process.cwd()
    process.chdir(scratch)
    process.env.OPENAI_BASE_URL = `${fake.url}/v1`
    process.env.OPENAI_API_KEY = "sk-readme-test"
    const log: Array<Array<unknown>> = []
    const original = console.log
    console.log = (...args: Array<unknown>) => log.push(args)
    const restore = Effect.sync(() => {
      console.log = original
      process.chdir(cwd)
      delete process.env.OPENAI_BASE_URL
      delete process.env.OPENAI_API_KEY
      fs.rmSync(scratch, { recursive: true, force: true })
    })
    yield* Effect.gen(function*() {
      const example = yield* Effect.promise(() => import("./readme/agent.js"))
      // The import ran the example (its last statement): wait for its last line.
      while (!log.some((args) => args[0] === "answer")) yield* Effect.sleep("20 millis")
      expect(log).toEqual([
        ["step 1: Looking dana up.", ["lookup_contact → Executed"]],
        ["step 2: Creating the task and routing the lead.", ["create_task → Executed", "assign_owner → Executed"]],
        ["step 3: Done: L-dana has a follow-up task and is routed to usr_7.", []],
        ["answer", expect.objectContaining({ modelRequests: 3, stepsReplayed: 0 })]
      ])
      // The first request carried the toolkit's tools; step 2's the call and its stored result.
      const bodies = seen.map((r) => r.body as { tools: Array<unknown>; messages: Array<Record<string, unknown>> })
      expect(bodies[0]!.tools).toHaveLength(3)
      expect(bodies[1]!.messages.slice(2)).toEqual([
        {
          role: "assistant",
          content: "Looking dana up.",
          tool_calls: [{
            id: expect.any(String),
            type: "function",
            function: { name: "lookup_contact", arguments: "{\"email\":\"dana@acme.io\"}" }
          }]
        },
        { role: "tool", tool_call_id: expect.any(String), content: "{\"lead_id\":\"L-dana\",\"owner\":null}" }
      ])

      // Delivered again: every step replayed from .toolgate/, nothing asked, nothing executed.
      const again = yield* example.program
      expect(seen).toHaveLength(3)
      expect(again.steps.map((s) => [s.replayed, s.calls.map((c) => c.outcome._tag)])).toEqual([
        [true, ["Replayed"]],
        [true, ["Replayed", "Replayed"]],
        [true, []]
      ])
      expect(again.cost).toMatchObject({ modelRequests: 0, stepsReplayed: 3, requestsSaved: 3 })
      expect(again.text).toBe("Done: L-dana has a follow-up task and is routed to usr_7.")
      expect(again.transcript.content.map((m) => m.role)).toEqual([
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant"
      ])
      expect(Schema.encodeSync(Prompt.Prompt)(again.transcript).content).toHaveLength(7)
    }).pipe(Effect.ensuring(restore))
  }).pipe(Effect.scoped), 120_000)
