/**
 * `toolgate demo` (what `npm start` runs), as a child process of the built CLI (`npm test` builds
 * first): the `--json` report says toolgate made no duplicate CRM mutation and acted on no corrupted
 * call while the naive loop duplicated; every call is accounted for; the journal saved model
 * requests (the crashes and redeliveries between steps); a second run on the same store executes
 * nothing and asks the model only for the steps no run completed. The same on a PostgreSQL server
 * (`--store`), skipped when the server is unreachable (or failing under `TOOLGATE_REQUIRE_PG=1`).
 * Bad flags exit 1 with one line.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Demo } from "@toolgate/demo"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll } from "vitest"
import * as Cli from "./support/cli.js"
import * as Postgres from "./support/postgres.js"

const scratch = mkdtempSync(join(tmpdir(), "toolgate-demo-test-"))

afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const toolgate = (...args: Array<string>) => Cli.toolgate(args, { cwd: scratch, timeoutMs: 170_000 })

/** Runs the demo and parses its stdout, which must be exactly one JSON object. */
const demo = async (...args: Array<string>): Promise<Demo.Report> => {
  const { code, stderr, stdout } = await toolgate("demo", "--leads", "40", "--seed", "31", "--json", ...args)
  expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" })
  const lines = stdout.trim().split("\n")
  expect(lines).toHaveLength(1)
  const report = JSON.parse(lines[0]!) as Demo.Report
  expect(report).toMatchObject({ leads: 40, seed: 31 })
  for (const row of [report.toolgate, report.naive]) {
    expect(Object.keys(row).toSorted()).toEqual([
      "assembled",
      "attempts",
      "corrupted",
      "crmDuplicates",
      "crmMutations",
      "executed",
      "notificationDuplicates",
      "notificationsDelivered",
      "rejected",
      "replayed",
      "requestsSaved",
      "retries",
      "stepsReplayed",
      "unknown"
    ])
  }
  return report
}

/** What must hold of every toolgate row: no duplicate, nothing corrupted, every call accounted for. */
const expectSound = (report: Demo.Report) => {
  const { naive, toolgate: row } = report
  expect(row.crmDuplicates).toBe(0)
  expect(row.corrupted).toBe(0)
  // the follow-ups of verified assignments only, each once (two per assignment)
  expect(row.notificationDuplicates).toBe(0)
  expect(row.notificationsDelivered % 2).toBe(0)
  expect(row.executed + row.replayed + row.unknown).toBe(row.assembled)
  expect(row.assembled).toBeGreaterThan(0)
  expect(row.stepsReplayed).toBeGreaterThan(0)
  expect(row.requestsSaved).toBeGreaterThanOrEqual(row.stepsReplayed)
  // The naive loop, over the same leads and faults, asks the model again on every delivery: it
  // duplicates mutations, acts on bad calls, and makes more requests.
  expect(naive.crmDuplicates).toBeGreaterThan(0)
  expect(naive.notificationDuplicates).toBeGreaterThan(0)
  expect(naive.corrupted).toBeGreaterThan(0)
  expect(naive.attempts).toBeGreaterThan(row.attempts)
  expect(naive.stepsReplayed + naive.requestsSaved + naive.replayed).toBe(0)
}

/** A first run and a second run over the same store. */
const firstAndSecond = async (...args: Array<string>) => {
  const first = await demo(...args)
  expectSound(first)
  expect(first.toolgate.executed).toBeGreaterThan(0)
  expect(first.toolgate.retries).toBeGreaterThan(0)
  // Every execution but the leads' lookups (one per lead, answered without the CRM) reached the
  // CRM once; an ambiguous (unknown) one may have applied too.
  const mutating = first.toolgate.executed - first.leads
  expect(first.toolgate.crmMutations).toBeGreaterThanOrEqual(mutating)
  expect(first.toolgate.crmMutations).toBeLessThanOrEqual(mutating + first.toolgate.unknown)
  expect(first.toolgate.notificationsDelivered).toBeGreaterThan(0)

  const second = await demo(...args)
  expectSound(second)
  expect(second.toolgate.executed).toBe(0)
  expect(second.toolgate.crmMutations).toBe(0)
  // nothing executed, nothing new to follow up
  expect(second.toolgate.notificationsDelivered).toBe(0)
  expect(second.toolgate.assembled).toBe(first.toolgate.assembled)
  expect(second.toolgate.replayed).toBe(first.toolgate.executed + first.toolgate.replayed)
  expect(second.toolgate.unknown).toBe(first.toolgate.unknown)
  expect(second.toolgate.rejected).toEqual(first.toolgate.rejected)
  // every completed step is replayed: the model is asked again only for the step each rejected
  // turn failed at (nothing was recorded for it), once per delivery
  const rejectedTurns = Object.entries(first.toolgate.rejected)
    .filter(([tag]) => tag === "TokenLimitExceeded" || tag === "MalformedToolArguments")
    .reduce((n, [, count]) => n + count, 0)
  expect(second.toolgate.attempts).toBe(rejectedTurns)
  expect(second.toolgate.retries).toBe(0)
  expect(second.toolgate.stepsReplayed).toBeGreaterThan(first.toolgate.stepsReplayed)
}

describe("toolgate demo", () => {
  it(
    "--json on the embedded store: 0 duplicates for toolgate, some for naive; a second run executes nothing",
    async () => {
      // PGlite's first start in a new directory runs initdb (several seconds); the second reopens it.
      await firstAndSecond("--data-dir", join(scratch, "store"))
    },
    180_000
  )

  it.concurrent.for([
    { args: ["--leads", "0"], says: "--leads" },
    { args: ["--leads", "20001"], says: "--leads must be between 1 and 20000" },
    { args: ["--store", "mysql://x"], says: "--store" },
    { args: ["--data-dir", fileURLToPath(import.meta.url)], says: "cannot be created as a directory" }
  ])("$args: exit 1 with one line on stderr", async ({ args, says }) => {
    const { code, stderr, stdout } = await toolgate("demo", "--json", ...args)
    expect(code).toBe(1)
    expect(stdout).toBe("")
    const lines = stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(says)
  })
})

const pg = await Postgres.probe()

Postgres.describeServer(pg, "toolgate demo --store postgres://", () => {
  // The CLI has no option for the store's schema: the demo uses the default `toolgate` schema.
  // Its keys are all in the `demo` scope (tenant), so only those rows are removed, before and after,
  // leaving the schema to anyone else who uses it.
  const clean = () =>
    Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`DO $$ BEGIN
  IF to_regclass('toolgate.idem_record') IS NOT NULL THEN
    DELETE FROM toolgate.idem_attempt WHERE scope = 'demo';
    DELETE FROM toolgate.idem_record WHERE scope = 'demo';
  END IF;
  IF to_regclass('toolgate.step_journal') IS NOT NULL THEN
    DELETE FROM toolgate.step_journal WHERE scope = 'demo';
  END IF;
  IF to_regclass('toolgate.outbox_message') IS NOT NULL THEN
    DELETE FROM toolgate.outbox_message WHERE scope = 'demo';
  END IF;
END $$`)
      }).pipe(Effect.provide(Postgres.client(1)))
    )
  beforeAll(clean)
  afterAll(clean)

  it("0 duplicates for toolgate, some for naive; a second run executes nothing", async () => {
    await firstAndSecond("--store", Postgres.url)
  }, 180_000)
})
