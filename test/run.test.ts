/**
 * `toolgate run` end to end, as a child process, against the fake provider and the fake CRM on
 * 127.0.0.1: the agent loop (each step's streamed text and calls' outcomes, the results sent back
 * until the model answers, `--max-steps`), webhooks called with an Idempotency-Key, a retried
 * request, and a second run of the same scope replaying every step and call instead of asking and
 * executing again.
 */
import { describe, expect, it } from "@effect/vitest"
import { FakeCrm, FakeProvider, LoopbackServer } from "@toolgate/testing"
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

/** The model's answer once it has the results. */
const answer: FakeProvider.Scenario = { text: "Done: lead-0042 has a task and an owner." }

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
        const bodies: Array<unknown> = []
        const provider = yield* FakeProvider.make({
          plan: FakeProvider.steps([scenario, answer], {
            // the first request fails before its body: the step's stream is retried
            answer: (request) => {
              bodies.push(request.body)
              return {
                chunkBytes: 64,
                ...(request.seq === 1 ? { fault: { _tag: "Status", status: 500 } as const } : {})
              }
            }
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
        expect(first.stdout).toContain("Done: lead-0042 has a task and an owner.")
        expect(first.stdout).toContain("finish reason: stop")
        expect(first.stdout).toContain("steps: 2; model requests: 3; replayed from the journal: 0")
        expect(first.stderr).toContain("[step 1, attempt 1 failed: ProviderHttpError")
        // step 2 was sent the results of step 1's calls, as the CRM answered them
        const sent = bodies.at(-1) as { messages: ReadonlyArray<{ role: string; content: unknown }> }
        expect(sent.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool"])
        expect(JSON.parse(String(sent.messages[2]!.content))).toMatchObject({ id: expect.stringMatching(/^mut_/) })
        expect(first.stdout + first.stderr).not.toContain("sk-test-secret-value")
        const afterFirst = yield* crm.stats
        expect(afterFirst.mutations).toBe(2)
        expect(afterFirst.log.every((m) => m.idempotencyKey !== null)).toBe(true)

        const second = yield* toolgate(args, { OPENAI_API_KEY: "sk-test-secret-value" })
        expect(second.code).toBe(0)
        expect(second.stdout).toMatch(/create_task\(.*\) → replayed: \{"id":"mut_/)
        expect(second.stdout).toMatch(/assign_owner\(.*\) → replayed/)
        expect(second.stdout).toContain("Done: lead-0042 has a task and an owner.")
        expect(second.stdout).toContain("steps: 2; model requests: 0; replayed from the journal: 2 (3 requests saved)")
        expect(second.stderr).toContain("[step 1: replayed from the journal]")
        expect((yield* crm.stats).mutations).toBe(2)
        // the second run asked the model nothing: every step came from the journal
        expect((yield* provider.stats).requests).toBe(3)
      }).pipe(Effect.scoped),
    180_000
  )

  it.live("speaks the Anthropic Messages API with --provider anthropic", () =>
    Effect.gen(function*() {
      const provider = yield* FakeProvider.make({
        plan: FakeProvider.steps([scenario, answer], { format: "anthropic" })
      })
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
      expect(result.stdout).toContain("finish reason: end_turn")
      expect(result.stdout).toContain("Done: lead-0042 has a task and an owner.")
      expect((yield* crm.stats).mutations).toBe(2)
      // the results went back as one user message of tool_result blocks
      expect((yield* provider.stats).requests).toBe(2)
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
      expect(result.stdout).toContain("error: step 1: TokenLimitExceeded")
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
          [["--base-url", "http://127.0.0.1:9", "--max-tokens", "0", "x"], "--max-tokens"],
          [["--base-url", "http://127.0.0.1:9", "--max-steps", "0", "x"], "--max-steps must be between 1 and 1000"]
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

  it.live(
    "prints exactly the JSON it sends: the webhook gets the model's arguments, undeclared members included",
    () =>
      Effect.gen(function*() {
        const webhook = yield* recorder
        const args = {
          lead: "lead-0042",
          title: "Call back (pilot pricing)",
          priority: "high",
          amount: 19.99,
          meta: { source: "web form", tags: ["a", "b"], "x-key": null }
        }
        const provider = yield* FakeProvider.make({
          plan: FakeProvider.steps([{ toolCalls: [{ name: "create_task", arguments: JSON.stringify(args) }] }, {
            text: "Created."
          }])
        })
        const tools = writeTools([{
          type: "function",
          function: {
            name: "create_task",
            parameters: {
              type: "object",
              properties: { lead: { type: "string" }, title: { type: "string" } },
              required: ["lead", "title"]
            }
          },
          webhook: `${webhook.url}/tools/create_task`
        }])
        const result = yield* toolgate(runArgs(provider.url, tools, "acme/printed-is-sent"))
        expect(result.stderr).not.toContain("error")
        expect(result.code).toBe(0)
        const printed = /^ {2}create_task\((.*)\) → executed: /m.exec(result.stdout)?.[1]
        expect(webhook.bodies).toHaveLength(1)
        expect(printed).toBe(webhook.bodies[0])
        expect(JSON.parse(webhook.bodies[0]!)).toEqual(args)
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "enforces additionalProperties: false: an undeclared member is ToolArgumentsInvalid and nothing is sent",
    () =>
      Effect.gen(function*() {
        const webhook = yield* recorder
        const provider = yield* FakeProvider.make({
          plan: {
            source: FakeProvider.openAiChat({
              toolCalls: [{ name: "create_task", arguments: { lead: "lead-0042", title: "t", owner: "usr_1" } }]
            })
          }
        })
        const tools = writeTools([{
          name: "create_task",
          input_schema: {
            type: "object",
            properties: { lead: { type: "string" }, title: { type: "string" } },
            additionalProperties: false
          },
          webhook: `${webhook.url}/tools/create_task`
        }])
        const result = yield* toolgate(runArgs(provider.url, tools, "acme/closed-schema"))
        expect(result.code).toBe(2)
        expect(result.stdout).toContain(
          "error: step 1: ToolArgumentsInvalid: tool call 0 (create_task) has invalid arguments: owner: is not declared (additionalProperties is false)"
        )
        expect(webhook.bodies).toEqual([])
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "reads a Gemini tools file: sends its schema as JSON Schema and validates Gemini's types",
    () =>
      Effect.gen(function*() {
        const webhook = yield* recorder
        const sent: Array<unknown> = []
        const provider = yield* FakeProvider.make({
          plan: (request) => {
            sent.push((request.body as { tools?: unknown }).tools)
            return {
              source: FakeProvider.openAiChat({
                toolCalls: [{ name: "set_seats", arguments: { deal: "D-1", seats: "40" } }]
              })
            }
          }
        })
        const tools = writeTools([{
          functionDeclarations: [{
            name: "set_seats",
            parameters: {
              type: "OBJECT",
              properties: { deal: { type: "STRING" }, seats: { type: "INTEGER", format: "int32" } },
              required: ["deal", "seats"]
            },
            webhook: `${webhook.url}/tools/set_seats`
          }]
        }])
        const result = yield* toolgate(runArgs(provider.url, tools, "acme/gemini-tools"))
        expect(sent[0]).toEqual([{
          type: "function",
          function: {
            name: "set_seats",
            parameters: {
              type: "object",
              properties: { deal: { type: "string" }, seats: { type: "integer", format: "int32" } },
              required: ["deal", "seats"]
            }
          }
        }])
        expect(result.code).toBe(2)
        expect(result.stdout).toContain(
          "error: step 1: ToolArgumentsInvalid: tool call 0 (set_seats) has invalid arguments: seats: must be integer, got string"
        )
        expect(webhook.bodies).toEqual([])
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "--max-steps bounds a model that keeps calling: its last calls run, no answer, exit 2",
    () =>
      Effect.gen(function*() {
        const webhook = yield* recorder
        const provider = yield* FakeProvider.make({
          plan: (request) => ({
            source: FakeProvider.openAiChat({
              text: `Step ${FakeProvider.stepOf(request.body)}.`,
              toolCalls: [{
                name: "create_task",
                arguments: { lead: "lead-1", title: `t${FakeProvider.stepOf(request.body)}` }
              }]
            })
          })
        })
        const tools = writeTools([{
          name: "create_task",
          parameters: { type: "object", properties: { lead: { type: "string" }, title: { type: "string" } } },
          webhook: `${webhook.url}/tools/create_task`
        }])
        const result = yield* toolgate([...runArgs(provider.url, tools, "acme/max-steps"), "--max-steps", "3"])
        expect(result.code).toBe(2)
        expect(result.stdout).toContain("steps: 3 (stopped at --max-steps 3: no final answer)")
        expect(webhook.bodies.map((b) => JSON.parse(b).title)).toEqual(["t1", "t2", "t3"])
        expect((yield* provider.stats).requests).toBe(3)
      }).pipe(Effect.scoped),
    60_000
  )

  it.live("a tools file with a $ref cycle is a one-line usage error", () =>
    Effect.gen(function*() {
      const tools = writeTools([{
        name: "create_task",
        parameters: { $defs: { A: { $ref: "#/$defs/B" }, B: { $ref: "#/$defs/A" } }, $ref: "#/$defs/A" },
        webhook: "http://127.0.0.1:9/tools/create_task"
      }])
      const result = yield* toolgate(runArgs("http://127.0.0.1:9", tools, "s"))
      expect(result.code).toBe(1)
      expect(result.stdout).toBe("")
      const lines = result.stderr.trim().split("\n")
      expect(lines).toHaveLength(1)
      expect(lines[0]).toContain("--tools: tool create_task: its JSON Schema loops without consuming the value")
    }))
})

/** A webhook on 127.0.0.1 that answers 200 and keeps every request body as the bytes it received. */
const recorder = Effect.gen(function*() {
  const bodies: Array<string> = []
  const server = yield* LoopbackServer.make(() => (req, res) =>
    LoopbackServer.readBody(req, (text) => {
      bodies.push(text)
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ id: `mut_${bodies.length}` }))
    })
  )
  return { url: server.url, bodies }
})

const writeTools = (tools: unknown) => {
  const file = join(mkdtempSync(join(tmpdir(), "toolgate-run-tools-")), "tools.json")
  writeFileSync(file, JSON.stringify(tools))
  return file
}

const runArgs = (baseUrl: string, tools: string, scope: string) => [
  "run",
  "--base-url",
  baseUrl,
  "--model",
  "m",
  "--tools",
  tools,
  "--scope",
  scope,
  "--data-dir",
  store,
  "go"
]
