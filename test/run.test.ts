/**
 * `toolgate run` end to end, as a child process, against the fake provider and the fake CRM on
 * 127.0.0.1: streamed text, each call's outcome, webhooks called with an Idempotency-Key, a
 * retried request, and a second run of the same scope replaying instead of re-executing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FakeProvider from "@toolgate/adapters/testing/FakeProvider"
import * as FakeCrm from "@toolgate/runtime/testing/FakeCrm"
import { Effect } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Cli from "./support/cli.js"

const toolgate = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.promise(() => Cli.toolgate(args, { env }))

const scenario: FakeProvider.Scenario = {
  text: "Creating the task and routing the lead now.",
  toolCalls: [
    { name: "create_task", arguments: { lead: "lead-0042", title: "Call back about pilot pricing" } },
    { name: "assign_owner", arguments: { lead: "lead-0042", owner_id: "usr_7731" } }
  ]
}

// One embedded store for the whole file: a new PGlite data directory costs an initdb (seconds);
// the tests use distinct scopes, so sharing it changes nothing else.
const store = join(mkdtempSync(join(tmpdir(), "toolgate-run-store-")), "store")

const toolsFile = (crmUrl: string) => {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-run-"))
  const file = join(dir, "tools.json")
  writeFileSync(
    file,
    JSON.stringify([
      {
        type: "function",
        function: {
          name: "create_task",
          parameters: {
            type: "object",
            properties: { lead: { type: "string" }, title: { type: "string" } },
            required: ["lead", "title"]
          }
        },
        webhook: `${crmUrl}/tools/create_task`
      },
      {
        name: "assign_owner",
        input_schema: {
          type: "object",
          properties: { lead: { type: "string" }, owner_id: { type: "string" } },
          required: ["lead", "owner_id"]
        },
        webhook: `${crmUrl}/tools/assign_owner`
      }
    ])
  )
  return { file }
}

describe("toolgate run", () => {
  it.live(
    "streams the text, executes each call once through its webhook, and replays on a second run",
    () =>
      Effect.gen(function*() {
        const provider = yield* FakeProvider.make({
          plan: (request) => ({
            source: FakeProvider.openAiChat(scenario),
            chunkBytes: 64,
            // the first request fails before its body: the pipeline retries it
            ...(request.seq === 1 ? { fault: { _tag: "Status", status: 500 } as const } : {})
          })
        })
        const crm = yield* FakeCrm.make()
        const { file } = toolsFile(crm.url)
        const args = [
          "run",
          "--base-url",
          `${provider.url}/v1`,
          "--model",
          "gpt-test",
          "--tools",
          file,
          "--scope",
          "acme/lead-0042-inbound",
          "--data-dir",
          store,
          "Route lead-0042 to the right rep."
        ]
        const first = yield* toolgate(args, { OPENAI_API_KEY: "sk-test-secret-value" })
        expect(first.code).toBe(0)
        expect(first.stdout).toContain("Creating the task and routing the lead now.")
        expect(first.stdout).toMatch(/create_task\(.*\) → executed: \{"id":"mut_/)
        expect(first.stdout).toMatch(/assign_owner\(.*\) → executed/)
        expect(first.stderr).toContain("[attempt 1 failed: ProviderHttpError")
        expect(first.stdout + first.stderr).not.toContain("sk-test-secret-value")
        const afterFirst = yield* crm.stats
        expect(afterFirst.mutations).toBe(2)
        expect(afterFirst.log.every((m) => m.idempotencyKey !== null)).toBe(true)

        const second = yield* toolgate(args, { OPENAI_API_KEY: "sk-test-secret-value" })
        expect(second.code).toBe(0)
        expect(second.stdout).toMatch(/create_task\(.*\) → replayed: \{"id":"mut_/)
        expect(second.stdout).toMatch(/assign_owner\(.*\) → replayed/)
        expect((yield* crm.stats).mutations).toBe(2)
        const requests = (yield* provider.stats).log
        expect(new Set(requests.flatMap((r) => r.toolCallIds)).size).toBe(4) // fresh provider ids each time
      }).pipe(Effect.scoped),
    60_000
  )

  it.live("speaks the Anthropic Messages API with --provider anthropic", () =>
    Effect.gen(function*() {
      const provider = yield* FakeProvider.make({ plan: { source: FakeProvider.anthropic(scenario) } })
      const crm = yield* FakeCrm.make()
      const { file } = toolsFile(crm.url)
      const result = yield* toolgate([
        "run",
        "--provider",
        "anthropic",
        "--base-url",
        provider.url,
        "--model",
        "claude-test",
        "--tools",
        file,
        "--scope",
        "lead-7",
        "--data-dir",
        store,
        "Route lead-0042."
      ])
      expect(result.code).toBe(0)
      expect(result.stdout).toContain("finish reason: tool_use")
      expect((yield* crm.stats).mutations).toBe(2)
    }).pipe(Effect.scoped), 60_000)

  it.live("a stream that fails its verdict releases nothing and exits 2", () =>
    Effect.gen(function*() {
      const provider = yield* FakeProvider.make({
        plan: { source: FakeProvider.openAiChat({ ...scenario, finishReason: "length" }) }
      })
      const crm = yield* FakeCrm.make()
      const { file } = toolsFile(crm.url)
      const result = yield* toolgate([
        "run",
        "--base-url",
        provider.url,
        "--model",
        "m",
        "--tools",
        file,
        "--scope",
        "t/1",
        "--data-dir",
        store,
        "x"
      ])
      expect(result.code).toBe(2)
      expect(result.stdout).toContain("error: TokenLimitExceeded")
      expect((yield* crm.stats).mutations).toBe(0)
    }).pipe(Effect.scoped), 60_000)

  it.live(
    "an endpoint that answers application/json is one line on stderr and exit 1, asked once",
    () =>
      Effect.gen(function*() {
        const completion = JSON.stringify({
          id: "chatcmpl-1",
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: "Hi" }, finish_reason: "stop" }]
        })
        const provider = yield* FakeProvider.make({
          plan: { source: FakeProvider.bytes(completion), contentType: "application/json" }
        })
        const crm = yield* FakeCrm.make()
        const { file } = toolsFile(crm.url)
        const result = yield* toolgate([
          "run",
          "--base-url",
          `${provider.url}/v1`,
          "--model",
          "m",
          "--tools",
          file,
          "--scope",
          "t/json",
          "--data-dir",
          store,
          "x"
        ], { OPENAI_API_KEY: "sk-test-secret-value" })
        expect(result.code).toBe(1)
        expect(result.stdout).toBe("")
        expect(result.stderr.trimEnd().split("\n")).toEqual([
          expect.stringMatching(
            new RegExp(
              `^toolgate: ${provider.url}/v1 did not stream: the response is application/json: a JSON body, not an event stream; did the request set stream: true\\? \\(the body starts "\\{\\\\"id`
            )
          )
        ])
        expect((yield* provider.stats).requests).toBe(1)
        expect((yield* crm.stats).requests).toBe(0)
      }).pipe(Effect.scoped),
    60_000
  )

  it.live("bad flags are usage errors, checked before anything is sent", () =>
    Effect.gen(function*() {
      const { file } = toolsFile("http://127.0.0.1:9")
      const base = ["run", "--model", "m", "--tools", file, "--scope", "s"]
      for (
        const [args, says] of [
          [["--base-url", "notaurl", "x"], "not an http(s) URL"],
          [["--base-url", "ftp://host/v1", "x"], "not an http(s) URL"],
          [["--base-url", "http://127.0.0.1:9", "--store", "mysql://x", "x"], "--store must be a postgres:// URL"],
          [["--base-url", "http://127.0.0.1:9", "--max-tokens", "0", "x"], "--max-tokens"]
        ] as const
      ) {
        const result = yield* toolgate([...base, ...args])
        expect(result.code).toBe(1)
        expect(result.stdout).toBe("")
        expect(result.stderr.trim().split("\n").at(-1)).toContain(says)
      }
    }), 60_000)

  it.live("a tool without a webhook is a usage error", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "toolgate-run-bad-"))
      const file = join(dir, "tools.json")
      writeFileSync(file, JSON.stringify([{ name: "create_task", parameters: { type: "object" } }]))
      const result = yield* toolgate([
        "run",
        "--base-url",
        "http://127.0.0.1:9",
        "--model",
        "m",
        "--tools",
        file,
        "--scope",
        "s",
        "x"
      ])
      expect(result.code).toBe(1)
      expect(result.stderr.trim().split("\n")).toHaveLength(1)
      expect(result.stderr).toContain("no \"webhook\"")
    }))
})
