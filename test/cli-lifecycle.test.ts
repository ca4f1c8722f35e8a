/**
 * The CLI side of issue 9: every fixture through `inspect`'s own code path (`Inspect.inspect`) in
 * random 1–7 byte reads equals its expected.json, and `--finish-profile strict|compatible` on
 * `inspect` (child process) and `run` (child process against the fake provider and the fake CRM on
 * 127.0.0.1), with `run` defaulting to `strict` for the first-party API hosts only.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpModelStream } from "@toolgate/adapters"
import { Inspect, Run } from "@toolgate/cli"
import { FakeCrm, FakeProvider, Fixture } from "@toolgate/testing"
import { Effect, Result, Stream } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Cli from "./support/cli.js"
import { root } from "./support/cli.js"

describe("inspect's code path on the fixture corpus in random 1–7 byte reads", () => {
  const fixtures = Fixture.loadAll()
  it("finds the 70 cases", () => {
    expect(fixtures.length).toBe(70)
  })
  fixtures.forEach((fixture, n) => {
    it.effect(fixture.name, () =>
      Effect.gen(function*() {
        const sizes = Fixture.readSizes(0x9e3779b9 + n, 64)
        const result = yield* Inspect.inspect(Stream.fromIterable(Fixture.chunk(fixture.bytes, sizes)), {
          provider: fixture.provider
        })
        expect({
          outcome: result.outcome,
          finishReason: result.finishReason,
          text: result.text,
          toolCalls: result.toolCalls,
          error: result.error?._tag ?? null
        }).toEqual(fixture.expected)
      }))
  })
})

const fixtures = join(root, "test/fixtures")
const toolgate = (...args: Array<string>) => Cli.toolgate(args)

describe("toolgate inspect --finish-profile", () => {
  const stopWithCalls = join(fixtures, "openai-chat/openai-chat__gemini-compat-no-index.sse")
  it("compatible (the default) releases calls that end with stop; strict rejects them and exits 2", async () => {
    const byDefault = await toolgate("inspect", stopWithCalls, "--provider", "openai-chat", "--json")
    const compatible = await toolgate(
      "inspect",
      stopWithCalls,
      "--provider",
      "openai-chat",
      "--json",
      "--finish-profile",
      "compatible"
    )
    const strict = await toolgate(
      "inspect",
      stopWithCalls,
      "--provider",
      "openai-chat",
      "--json",
      "--finish-profile",
      "strict"
    )
    expect([byDefault.code, compatible.code, strict.code]).toEqual([0, 0, 2])
    expect(JSON.parse(byDefault.stdout)).toEqual(JSON.parse(compatible.stdout))
    const got = JSON.parse(strict.stdout)
    expect([got.outcome, got.finishReason, got.toolCalls, got.error._tag]).toEqual([
      "error",
      "stop",
      [],
      "UnexpectedFinishReason"
    ])
    expect(got.error.message).toContain("ends a turn without tool calls")
  })

  it("strict still releases tool_calls and tool_use, and completes text turns that end with stop", async () => {
    for (
      const [file, provider] of [
        ["openai-chat/openai-chat__single-tool.sse", "openai-chat"],
        ["openai-chat/openai-chat__text-only.sse", "openai-chat"],
        ["anthropic/anthropic__single-tool.sse", "anthropic"],
        ["anthropic/anthropic__text-only.sse", "anthropic"]
      ] as const
    ) {
      const result = await toolgate(
        "inspect",
        join(fixtures, file),
        "--provider",
        provider,
        "--json",
        "--finish-profile",
        "strict"
      )
      expect([file, result.code]).toEqual([file, 0])
    }
  })

  it("an unknown profile is a usage error (exit 1)", async () => {
    const result = await toolgate("inspect", stopWithCalls, "--finish-profile", "lenient")
    expect(result.code).toBe(1)
    expect(result.stdout + result.stderr).toContain("lenient")
  })
})

describe("toolgate run --finish-profile", () => {
  const base: Omit<Run.Options, "baseUrl" | "provider"> = {
    model: "m",
    prompt: "x",
    tools: [],
    toolkit: undefined as never,
    scope: { tenant: "t", turn: "1" },
    apiKey: undefined,
    dataDir: ".toolgate",
    store: undefined,
    maxTokens: 16,
    maxSteps: 8,
    write: () => {},
    warn: () => {}
  }
  it("defaults to strict for api.openai.com and api.anthropic.com, compatible for any other base URL", () => {
    const profile = (provider: Run.Options["provider"], baseUrl: string, finishProfile?: "strict" | "compatible") => {
      const options = { ...base, provider, baseUrl, finishProfile }
      return Result.getOrThrow(HttpModelStream.providerRequest(Run.modelStream(options), Run.modelRequest(options)))
        .finishProfile
    }
    expect(profile("openai-chat", "https://api.openai.com/v1")).toBe("strict")
    expect(profile("anthropic", "https://api.anthropic.com/v1")).toBe("strict")
    expect(profile("openai-chat", "http://localhost:4000/v1")).toBe("compatible")
    expect(profile("openai-chat", "http://127.0.0.1:11434/v1")).toBe("compatible")
    expect(profile("openai-chat", "https://api.openai.com/v1", "compatible")).toBe("compatible")
    expect(profile("openai-chat", "http://localhost:4000/v1", "strict")).toBe("strict")
  })

  const store = join(mkdtempSync(join(tmpdir(), "toolgate-finish-store-")), "store")
  const toolsFile = (crmUrl: string) => {
    const file = join(mkdtempSync(join(tmpdir(), "toolgate-finish-")), "tools.json")
    writeFileSync(
      file,
      JSON.stringify([{
        name: "create_task",
        input_schema: {
          type: "object",
          properties: { lead: { type: "string" }, title: { type: "string" } },
          required: ["lead", "title"]
        },
        webhook: `${crmUrl}/tools/create_task`
      }])
    )
    return file
  }
  // What a gateway sends when the upstream was cut after the first call: a made-up `stop`.
  const fabricated: FakeProvider.Scenario = {
    text: "On it.",
    toolCalls: [{ name: "create_task", arguments: { lead: "lead-0042", title: "Call back" } }],
    finishReason: "stop"
  }

  it.live(
    "strict rejects a stop that carries calls and executes nothing; compatible executes it",
    () =>
      Effect.gen(function*() {
        const provider = yield* FakeProvider.make({ plan: FakeProvider.steps([fabricated, { text: "Done." }]) })
        const crm = yield* FakeCrm.make()
        const file = toolsFile(crm.url)
        const args = (scope: string, ...extra: Array<string>) => [
          "run",
          "--base-url",
          `${provider.url}/v1`,
          "--model",
          "m",
          "--tools",
          file,
          "--scope",
          scope,
          "--data-dir",
          store,
          ...extra,
          "Follow up."
        ]
        const strict = yield* Effect.promise(() => Cli.toolgate(args("t/strict", "--finish-profile", "strict")))
        expect(strict.code).toBe(2)
        expect(strict.stdout).toContain("error: step 1: UnexpectedFinishReason")
        expect((yield* crm.stats).mutations).toBe(0)
        // A local URL defaults to compatible, which releases the call.
        const byDefault = yield* Effect.promise(() => Cli.toolgate(args("t/default")))
        expect(byDefault.code).toBe(0)
        expect(byDefault.stdout).toMatch(/create_task\(.*\) → executed/)
        expect((yield* crm.stats).mutations).toBe(1)
      }).pipe(Effect.scoped),
    60_000
  )
})
