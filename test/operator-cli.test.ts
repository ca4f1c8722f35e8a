/**
 * The operator commands' contract, run as child processes against the built `toolgate`, on the
 * embedded store (`--data-dir`) and on the PostgreSQL server (`--store`): `toolgate run` leaves a
 * call `unknown` (the CRM applied it and dropped the answer) and another rejected by the webhook
 * (422, worded as a rejection, never as "applied"); `records` lists and shows them (table and
 * JSON); `resolve` settles the unknown one, fenced and audited, and the next run replays what the
 * operator recorded; every refusal exits 2 with one line, every usage error 1; `purge` deletes the
 * settled records and prints the count. Every command's help lists its exit codes and marks its
 * required flags.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { EmbeddedPostgres, IdempotencyStore } from "@toolgate/runtime"
import { FakeCrm, FakeProvider } from "@toolgate/testing"
import { Effect, Exit, Layer, Scope } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Pglite from "../packages/runtime/test/support/pglite.js"
import * as Cli from "./support/cli.js"
import * as Postgres from "./support/postgres.js"
import * as Tools from "./support/tools.js"

const toolgate = (args: ReadonlyArray<string>) => Cli.toolgate(args, { timeoutMs: 120_000 })

const scenario: FakeProvider.Scenario = {
  text: "Routing the lead.",
  toolCalls: [
    { name: "create_task", arguments: { lead: "lead-0042", title: "Call back about pilot pricing" } },
    { name: "assign_owner", arguments: { lead: "lead-0042", owner_id: "usr_7731" } }
  ]
}

const toolsFile = (crmUrl: string): string =>
  Tools.write([
    Tools.webhookTool(crmUrl, "create_task", { lead: "string", title: "string" }),
    Tools.webhookTool(crmUrl, "assign_owner", { lead: "string", owner_id: "string" })
  ])

interface Fixture {
  readonly provider: FakeProvider.Server
  readonly crm: FakeCrm.Server
  readonly tools: string
  readonly close: () => Promise<void>
}

/**
 * A fake provider and a CRM that rejects create_task (422) and applies assign_owner, dropping its
 * answer (or, `stall`, never answering).
 */
const fixture = async (assign: FakeCrm.Fault = { _tag: "ApplyThenDrop" }): Promise<Fixture> => {
  const scope = Effect.runSync(Scope.make())
  const made = await Effect.runPromise(
    Effect.gen(function*() {
      // The model calls both tools, then answers once it has read their results (the agent's step 2).
      const provider = yield* FakeProvider.make({
        plan: FakeProvider.steps([scenario, { text: "The lead is routed." }])
      })
      const crm = yield* FakeCrm.make({
        plan: (request) =>
          request.action === "create_task"
            ? { _tag: "Reject", status: 422, message: "lead-0042 has no open deal" }
            : assign
      })
      return { provider, crm }
    }).pipe(Scope.provide(scope))
  )
  return {
    ...made,
    tools: toolsFile(made.crm.url),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const lines = (text: string) => text.trimEnd().split("\n")

/**
 * Writes records straight through the store (not through a run): two keys that share a 12-digit
 * prefix, to ask for an ambiguous prefix. The store is the one the suite's commands open.
 */
const claimKeys = (
  store: Layer.Layer<IdempotencyStore.IdempotencyStore, unknown>,
  tenant: string,
  keys: ReadonlyArray<string>
) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const records = yield* IdempotencyStore.IdempotencyStore
      for (const key of keys) {
        yield* records.claim({
          scope: tenant,
          key,
          tool: "create_task",
          fingerprint: "fp",
          owner: key,
          leaseMs: 60_000,
          retentionMs: 60_000,
          maxAttempts: 3,
          recovery: "manual"
        })
      }
    }).pipe(Effect.provide(store))
  )

const suite = (
  label: string,
  storeArgs: () => ReadonlyArray<string>,
  storeLayer: () => Layer.Layer<IdempotencyStore.IdempotencyStore, unknown>
) =>
  describe(`operator commands: ${label}`, () => {
    let f: Fixture
    const tenant = `ops-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
    const run = (turn: string) =>
      toolgate([
        "run",
        "--base-url",
        `${f.provider.url}/v1`,
        "--model",
        "m",
        "--tools",
        f.tools,
        "--scope",
        `${tenant}/${turn}`,
        ...storeArgs(),
        "Route lead-0042."
      ])
    const records = (...args: ReadonlyArray<string>) => toolgate(["records", ...args, ...storeArgs()])
    const resolve = (...args: ReadonlyArray<string>) => toolgate(["resolve", ...args, ...storeArgs()])
    const listJson = async (...args: ReadonlyArray<string>) => {
      const out = await records("--scope", tenant, "--json", ...args)
      expect(out.code).toBe(0)
      return JSON.parse(out.stdout) as Array<Record<string, any>>
    }
    let unknownKey = ""
    let otherUnknownKey = ""

    beforeAll(async () => {
      f = await fixture()
    })
    afterAll(async () => {
      await f.close()
    })

    it(
      "run: a webhook's 422 is a rejection (status, body excerpt), never 'applied'; a dropped answer is unknown",
      async () => {
        const first = await run("turn-1")
        expect(first.code).toBe(2)
        expect(first.stdout).toMatch(
          /create_task\(.*\) → rejected by the webhook \(422\): ".*lead-0042 has no open deal.*"; recorded as a terminal failure, will not be retried/
        )
        expect(first.stdout).toMatch(/assign_owner\(.*\) → failed: OutcomeUnknown: /)
        expect(first.stdout).not.toMatch(/applied/)
        const second = await run("turn-2")
        expect(second.code).toBe(2)
        const stats = await Effect.runPromise(f.crm.stats)
        expect(stats.mutations).toBe(2) // the two dropped assign_owner calls; the 422s changed nothing
      },
      240_000
    )

    it("records: the table, newest first, filtered by state and tool; JSON with the arguments", async () => {
      const table = await records("--scope", tenant)
      expect(table.code).toBe(0)
      const rows = lines(table.stdout)
      expect(rows[0]).toMatch(/^KEY\s+SCOPE\s+TOOL\s+STATE\s+ATTEMPT\s+UPDATED$/)
      expect(rows).toHaveLength(5)
      const all = await listJson()
      expect(all.map((r) => [r.tool, r.status]).toSorted()).toEqual([
        ["assign_owner", "unknown"],
        ["assign_owner", "unknown"],
        ["create_task", "failed"],
        ["create_task", "failed"]
      ])
      const updated = all.map((r) => Date.parse(r.updatedAt))
      expect(updated).toEqual(updated.toSorted((a, b) => b - a))
      const unknown = await listJson("--state", "unknown")
      expect(unknown.map((r) => r.tool)).toEqual(["assign_owner", "assign_owner"])
      expect(unknown[0]!.arguments).toEqual({ lead: "lead-0042", owner_id: "usr_7731" })
      expect(unknown[0]!.downstreamKey).toMatch(/^tgk1-[0-9a-f]{64}-1$/)
      otherUnknownKey = unknown[0]!.key
      unknownKey = unknown[1]!.key
      const failed = await listJson("--state", "failed,released", "--tool", "create_task", "--limit", "1")
      expect(failed).toHaveLength(1)
      expect(failed[0]!.error).toMatchObject({ _tag: "ToolFailure", failure: { status: 422 } })
    }, 120_000)

    it("records KEY: one record, its state and how to resolve it; by a 12-digit prefix and as JSON", async () => {
      const prefix = unknownKey.slice("tg1:sha256:".length, "tg1:sha256:".length + 12)
      const shown = await records(prefix)
      expect(shown.code).toBe(0)
      expect(shown.stdout).toContain(`record ${unknownKey}`)
      expect(shown.stdout).toMatch(/state\s+unknown \(was in_progress\), attempt 1 of 3, recovery manual, fence \d+/)
      expect(shown.stdout).toContain(`toolgate resolve ${prefix} --applied`)
      const json = await records(unknownKey, "--json")
      expect(json.code).toBe(0)
      const detail = JSON.parse(json.stdout)
      expect(detail.record.key).toBe(unknownKey)
      expect(detail.resolutions).toEqual([])
    }, 60_000)

    it("resolve: usage errors exit 1 with one line", async () => {
      for (
        const [args, says] of [
          [[unknownKey], "exactly one of --applied and --not-applied"],
          [[unknownKey, "--applied", "--not-applied"], "exactly one of --applied and --not-applied"],
          [[unknownKey, "--not-applied", "--result", "{}"], "--result goes with --applied"],
          [[unknownKey, "--applied", "--fence", "x"], "not a fence"],
          [[unknownKey, "--applied", "--result", "{oops"], "result: not JSON"],
          [[unknownKey, "--not-applied"], "reason: say why it was not applied"],
          [["xyz", "--applied"], "is not a record key"]
        ] as const
      ) {
        const out = await resolve(...args)
        expect(out.code, args.join(" ")).toBe(1)
        expect(lines(out.stderr)).toHaveLength(1)
        expect(out.stderr).toContain(says)
      }
    }, 120_000)

    it("resolve --applied: fenced, audited; the next run replays the recorded result", async () => {
      const out = await resolve(
        unknownKey,
        "--applied",
        "--result",
        "{\"id\":\"own-1\",\"owner\":\"usr_7731\"}",
        "--by",
        "alice",
        "--reason",
        "the CRM shows usr_7731 as owner"
      )
      expect(out.code).toBe(0)
      expect(out.stdout).toMatch(
        new RegExp(
          `^resolved ${unknownKey} \\(assign_owner, scope ${tenant}\\) as applied at fence \\d+, by alice: the CRM shows usr_7731 as owner`
        )
      )
      const shown = JSON.parse((await records(unknownKey, "--json")).stdout)
      expect(shown.record.status).toBe("succeeded")
      expect(shown.resolutions).toHaveLength(1)
      expect(shown.resolutions[0]).toMatchObject({
        by: "alice",
        outcome: "applied",
        reason: "the CRM shows usr_7731 as owner"
      })
      expect(shown.resolutions[0].parkedError).toMatchObject({ _tag: "Ambiguous" })

      const before = (await Effect.runPromise(f.crm.stats)).requests
      const again = await run("turn-1")
      expect(again.stdout).toMatch(/assign_owner\(.*\) → replayed: \{"id":"own-1","owner":"usr_7731"\}/)
      expect(again.stdout).toMatch(
        /create_task\(.*\) → rejected by the webhook \(422\) earlier: .*; recorded as a terminal failure, replayed, not sent again/
      )
      expect(again.code).toBe(2)
      expect((await Effect.runPromise(f.crm.stats)).requests).toBe(before)
    }, 120_000)

    it(
      "resolve refusals exit 2 with one line: not unknown (the state named), a stale fence, no such record",
      async () => {
        const settled = await resolve(unknownKey, "--applied")
        expect(settled.code).toBe(2)
        expect(lines(settled.stderr)).toEqual([expect.stringMatching(/is succeeded, not unknown/)])
        const stale = await resolve(otherUnknownKey, "--not-applied", "--reason", "no such owner", "--fence", "1")
        expect(stale.code).toBe(2)
        expect(lines(stale.stderr)).toEqual([
          expect.stringMatching(/changed since fence 1 \(it is unknown at fence \d+\)/)
        ])
        const missing = await resolve(`tg1:sha256:${"0".repeat(64)}`, "--applied")
        expect(missing.code).toBe(2)
        expect(lines(missing.stderr)).toEqual([expect.stringMatching(/^toolgate: no record tg1:sha256:0{64}$/)])
        const shown = JSON.parse((await records(otherUnknownKey, "--json")).stdout)
        expect(shown.record.status).toBe("unknown")
        expect(shown.resolutions).toEqual([])
      },
      120_000
    )

    it(
      "resolve --not-applied: the record is released; its next delivery calls the webhook again, with the same key",
      async () => {
        const out = await resolve(otherUnknownKey, "--not-applied", "--reason", "the CRM has no owner change", "--json")
        expect(out.code).toBe(0)
        const resolved = JSON.parse(out.stdout)
        expect(resolved.record.status).toBe("released")
        expect(resolved.resolution).toMatchObject({ outcome: "not_applied", reason: "the CRM has no owner change" })
        expect(resolved.resolution.by.length).toBeGreaterThan(0)
        const before = await Effect.runPromise(f.crm.stats)
        const again = await run("turn-2")
        expect(again.stdout).toMatch(/assign_owner\(.*\) → executed: \{"id":"mut_/)
        // The webhook is called again, with the record's Idempotency-Key: this CRM had in fact applied
        // the first attempt, and answers the repeat from its own store instead of applying it twice.
        const after = await Effect.runPromise(f.crm.stats)
        expect(after.requests).toBe(before.requests + 1)
        expect(after.replayed).toBe(before.replayed + 1)
        expect(after.mutations).toBe(before.mutations)
      },
      120_000
    )

    it("purge: deletes the settled records of a scope, prints the count, keeps unknown ones", async () => {
      const none = await toolgate(["purge", "--scope", tenant, ...storeArgs()])
      expect(none.code).toBe(0)
      expect(none.stdout.trim()).toBe(
        `purged 0 settled records of scope ${tenant} (past their retention); records in progress or unknown are never purged`
      )
      const settledCount = (await listJson()).filter((r) => r.status !== "unknown" && r.status !== "in_progress").length
      const purged = await toolgate(["purge", "--scope", tenant, "--older-than", "0s", "--json", ...storeArgs()])
      expect(purged.code).toBe(0)
      expect(JSON.parse(purged.stdout)).toEqual({ purged: settledCount })
      expect((await listJson()).every((r) => r.status === "unknown")).toBe(true)
      // a plain retention purge covers the step journal too, and says so (nothing here is past its retention)
      const plain = await toolgate(["purge", "--json", ...storeArgs()])
      expect(plain.code).toBe(0)
      expect(Object.keys(JSON.parse(plain.stdout))).toEqual(["purged", "journalSteps"])
      expect(JSON.parse(plain.stdout).journalSteps).toBeTypeOf("number")
      const bad = await toolgate(["purge", "--older-than", "soon", ...storeArgs()])
      expect(bad.code).toBe(1)
      expect(lines(bad.stderr)).toEqual([expect.stringContaining("--older-than soon: not a duration")])
    }, 120_000)

    it("a key prefix of several records is refused with exit 2, by records and by resolve", async () => {
      const prefix = `ab${Math.random().toString(16).slice(2, 12).padEnd(10, "0")}`
      await claimKeys(storeLayer(), tenant, [
        `tg1:sha256:${prefix}${"1".repeat(52)}`,
        `tg1:sha256:${prefix}${"2".repeat(52)}`
      ])
      for (const args of [["records", prefix], ["resolve", prefix, "--applied"]]) {
        const out = await toolgate([...args, ...storeArgs()])
        expect(out.code).toBe(2)
        expect(lines(out.stderr)).toEqual([expect.stringMatching(/matches several records \(tg1:sha256:ab/)])
      }
    }, 60_000)

    it("records: bad flags exit 1", async () => {
      for (
        const [args, says] of [
          [["--limit", "0"], "--limit must be between 1 and 1000"],
          [["--state", "done"], "--state done: not a state"]
        ] as const
      ) {
        const out = await records(...args)
        expect(out.code).toBe(1)
        expect(lines(out.stderr)).toEqual([expect.stringContaining(says)])
      }
    }, 60_000)
  })

let dataDir = ""
beforeAll(async () => {
  dataDir = await Pglite.freshDir()
})
suite(
  "embedded store (--data-dir)",
  () => ["--data-dir", dataDir],
  () => IdempotencyStore.layerSql().pipe(Layer.provide(EmbeddedPostgres.layer({ dataDir })))
)

describe("operator commands beside a running worker (embedded store)", () => {
  it(
    "records and resolve reach a data dir another process owns; the worker's live call is refused, then resolved once parked",
    async () => {
      const f = await fixture({ _tag: "ApplyThenStall" })
      const dir = await Pglite.freshDir()
      const tenant = `live-${process.pid}`
      try {
        const worker = spawn(process.execPath, [
          Cli.bin,
          "run",
          "--base-url",
          `${f.provider.url}/v1`,
          "--model",
          "m",
          "--tools",
          f.tools,
          "--scope",
          `${tenant}/turn-1`,
          "--data-dir",
          dir,
          "Route lead-0042."
        ], { stdio: ["ignore", "pipe", "pipe"] })
        const exited = new Promise<number | null>((resolve) => worker.on("exit", (code) => resolve(code)))
        try {
          // the worker owns the data dir and waits on the CRM, which applied assign_owner and never answers
          await new Promise<void>((resolve) => {
            const check = () =>
              void Effect.runPromise(f.crm.stats).then((c) =>
                c.log.some((m) => m.action === "assign_owner") ? resolve() : void setTimeout(check, 50)
              )
            check()
          })
          const live = await toolgate([
            "records",
            "--scope",
            tenant,
            "--state",
            "in_progress",
            "--json",
            "--data-dir",
            dir
          ])
          expect(live.code).toBe(0)
          const [held] = JSON.parse(live.stdout) as Array<{ key: string; tool: string }>
          expect(held!.tool).toBe("assign_owner")
          const refused = await toolgate(["resolve", held!.key, "--applied", "--data-dir", dir])
          expect(refused.code).toBe(2)
          expect(refused.stderr).toContain("is in_progress, not unknown (a worker holds it now)")
          // the worker is stopped: the call it dispatched is parked unknown, never released
          worker.kill("SIGTERM")
          await exited
          const parked = JSON.parse((await toolgate(["records", held!.key, "--json", "--data-dir", dir])).stdout)
          expect(parked.record.status).toBe("unknown")
          const resolved = await toolgate([
            "resolve",
            held!.key,
            "--applied",
            "--result",
            "{\"id\":\"mut_000001\"}",
            "--by",
            "ops",
            "--data-dir",
            dir
          ])
          expect(resolved.code).toBe(0)
          expect(resolved.stdout).toContain("as applied at fence")
        } finally {
          worker.kill("SIGKILL")
        }
      } finally {
        await f.close()
      }
    },
    180_000
  )
})

const pg = await Postgres.probe()
Postgres.describeServer(pg, "PostgreSQL server", () => {
  suite(
    "PostgreSQL server (--store)",
    () => ["--store", Postgres.url],
    () => IdempotencyStore.layerSql().pipe(Layer.provide(Postgres.client(1)))
  )
})

describe("operator commands without a store", () => {
  it("a data dir without a store is one line and exit 1; nothing is created", async () => {
    const empty = join(mkdtempSync(join(tmpdir(), "toolgate-ops-none-")), "nothing")
    for (const command of [["records"], ["resolve", "0123456789ab", "--applied"], ["purge"]]) {
      const out = await toolgate([...command, "--data-dir", empty])
      expect(out.code).toBe(1)
      expect(lines(out.stderr)).toEqual([
        `toolgate: --data-dir ${empty}: holds no toolgate store (toolgate run and demo create one; or give --store postgres://…)`
      ])
    }
    const url = await toolgate(["records", "--store", "mysql://x"])
    expect(url.code).toBe(1)
    expect(url.stderr).toContain("--store must be a postgres:// URL")
  }, 60_000)
})

describe("help", () => {
  it("every command lists its exit codes; required flags are marked", async () => {
    for (const command of ["demo", "run", "inspect", "corpus", "records", "resolve", "purge"]) {
      const out = await toolgate([command, "--help"])
      expect(out.code).toBe(0)
      expect(out.stdout, command).toMatch(/EXIT CODES\n {2}0 {3}\S.*\n {2}1 {3}\S/)
    }
    const run = (await toolgate(["run", "--help"])).stdout
    for (const flag of ["base-url", "model", "tools", "scope"]) {
      expect(run).toMatch(new RegExp(`--${flag} string\\s+required: `))
    }
    expect(run).toMatch(/--max-tokens integer\s+the model's/)
    expect((await toolgate(["--help"])).stdout).toContain("EXIT CODES")
  }, 60_000)
})
