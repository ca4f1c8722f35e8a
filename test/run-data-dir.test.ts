/**
 * `toolgate run` processes sharing one `--data-dir` (the case of issue 11: a queue redelivery
 * handled by two or three workers on the default embedded store), through the built CLI: each
 * webhook is called once for the scope whatever the number of processes (and the model asked once
 * per step: the others replay the journaled steps), and a data dir whose owner does not answer is
 * a one-line usage error.
 */
import { describe, expect, it } from "@effect/vitest"
import { FakeCrm, FakeProvider } from "@toolgate/testing"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Pglite from "../packages/runtime/test/support/pglite.js"
import * as Cli from "./support/cli.js"

const scenario: FakeProvider.Scenario = {
  text: "Routing the lead.",
  toolCalls: [
    { name: "create_task", arguments: { lead: "lead-0077", title: "Call back" } },
    { name: "assign_owner", arguments: { lead: "lead-0077", owner_id: "usr_2" } }
  ]
}

/** The turn: the calls, then (once the results are back) the answer. */
const plan = FakeProvider.steps([scenario, { text: "Routed: lead-0077 has a task and an owner." }])

const tools = (crmUrl: string) => {
  const file = join(mkdtempSync(join(tmpdir(), "toolgate-dd-tools-")), "tools.json")
  const tool = (name: string, field: string) => ({
    type: "function",
    function: {
      name,
      parameters: {
        type: "object",
        properties: { lead: { type: "string" }, [field]: { type: "string" } },
        required: ["lead", field]
      }
    },
    webhook: `${crmUrl}/tools/${name}`
  })
  writeFileSync(file, JSON.stringify([tool("create_task", "title"), tool("assign_owner", "owner_id")]))
  return file
}

const args = (providerUrl: string, toolsFile: string, dataDir: string) => [
  "run",
  "--base-url",
  `${providerUrl}/v1`,
  "--model",
  "m",
  "--tools",
  toolsFile,
  "--scope",
  "acme/lead-0077-inbound",
  "--data-dir",
  dataDir,
  "Route lead-0077."
]

describe("toolgate run: several processes on one --data-dir", () => {
  it.live(
    "three processes, same --scope and --data-dir (a new one): each webhook is called once; a later run replays",
    () =>
      Effect.gen(function*() {
        const provider = yield* FakeProvider.make({ plan })
        const crm = yield* FakeCrm.make()
        const dataDir = join(mkdtempSync(join(tmpdir(), "toolgate-dd-")), "store")
        const toolsFile = tools(crm.url)
        const runs = yield* Effect.promise(() =>
          Promise.all([1, 2, 3].map(() => Cli.toolgate(args(provider.url, toolsFile, dataDir), { timeoutMs: 120_000 })))
        )
        for (const run of runs) {
          expect(run.stderr).not.toContain("error")
          expect(run.code).toBe(0)
        }
        const stats = yield* crm.stats
        expect(stats.mutations).toBe(2)
        expect(stats.duplicates).toBe(0)
        const outcomes = runs.flatMap((r) => [...r.stdout.matchAll(/\) → (executed|replayed): /g)].map((m) => m[1]))
        expect(outcomes.filter((o) => o === "executed")).toHaveLength(2)
        expect(outcomes.filter((o) => o === "replayed")).toHaveLength(4)
        // the model was asked once per step: the other processes replayed the journaled steps
        expect((yield* provider.stats).requests).toBe(2)
        for (const run of runs) expect(run.stdout).toContain("Routed: lead-0077 has a task and an owner.")

        const later = yield* Effect.promise(() => Cli.toolgate(args(provider.url, toolsFile, dataDir)))
        expect(later.code).toBe(0)
        expect([...later.stdout.matchAll(/\) → replayed: /g)]).toHaveLength(2)
        expect((yield* crm.stats).mutations).toBe(2)
        expect((yield* provider.stats).requests).toBe(2)
      }).pipe(Effect.scoped),
    180_000
  )

  it.live(
    "SIGTERM ends each of two processes promptly while one waits on a stalled webhook and the other on it",
    () =>
      Effect.gen(function*() {
        const provider = yield* FakeProvider.make({ plan })
        // the CRM applies and never answers: one process's handlers hang, the other waits for their leases
        const crm = yield* FakeCrm.make({ plan: () => ({ _tag: "ApplyThenStall" }) })
        const dataDir = yield* Effect.promise(Pglite.freshDir)
        const toolsFile = tools(crm.url)
        const children = [1, 2].map(() =>
          spawn(process.execPath, [Cli.bin, ...args(provider.url, toolsFile, dataDir)], {
            env: { ...process.env, OPENAI_API_KEY: "sk-test" },
            stdio: ["ignore", "pipe", "pipe"]
          })
        )
        const stderr = children.map(() => "")
        children.forEach((child, i) =>
          child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr[i] += text))
        )
        const exits = children.map((child) =>
          new Promise<{ code: number | null; signal: string | null; at: number }>((resolve) =>
            child.on("exit", (code, signal) => resolve({ code, signal, at: performance.now() }))
          )
        )
        yield* Effect.addFinalizer(() => Effect.sync(() => children.forEach((c) => c.kill("SIGKILL"))))
        // both calls reached the CRM, and the other process has the turn's step 1 (from the
        // journal: the model is asked once) and waits on the calls' leases
        yield* Effect.promise(() =>
          new Promise<void>((resolve) => {
            const check = () =>
              void Effect.runPromise(Effect.all([crm.stats, provider.stats])).then(([c, p]) =>
                c.requests >= 2 && p.requests >= 1 && stderr.some((e) => e.includes("replayed from the journal"))
                  ? resolve()
                  : void setTimeout(check, 20)
              )
            check()
          })
        )
        const sent = performance.now()
        for (const child of children) child.kill("SIGTERM")
        const ended = yield* Effect.promise(() => Promise.all(exits))
        for (const e of ended) {
          expect(e.signal).toBeNull()
          // promptly, not hung (the webhook stalls forever): a generous bound, not a speed claim
          expect(e.at - sent).toBeLessThan(10_000)
        }
        // closed cleanly: no owner left behind
        expect(existsSync(join(dataDir, "toolgate-owner.json"))).toBe(false)
        expect((yield* crm.stats).mutations).toBe(2)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "a data dir held by a process that does not answer: one line on stderr naming its pid, exit 1",
    () =>
      Effect.gen(function*() {
        const provider = yield* FakeProvider.make({ plan })
        const crm = yield* FakeCrm.make()
        const dataDir = mkdtempSync(join(tmpdir(), "toolgate-dd-held-"))
        const holder = yield* Effect.promise(() => Pglite.unansweringOwner(dataDir))
        yield* Effect.addFinalizer(() => Effect.sync(() => holder.kill("SIGKILL")))
        const result = yield* Effect.promise(() =>
          Cli.toolgate(args(provider.url, tools(crm.url), dataDir), { env: { OPENAI_API_KEY: "sk-test" } })
        )
        expect(result.code).toBe(1)
        const lines = result.stderr.trim().split("\n")
        expect(lines).toHaveLength(1)
        expect(lines[0]).toMatch(
          new RegExp(
            `^toolgate: data dir .* is in use by pid ${holder.pid}, .*; use --store postgres://… to run several workers$`
          )
        )
        expect((yield* crm.stats).requests).toBe(0)
      }).pipe(Effect.scoped),
    60_000
  )
})
