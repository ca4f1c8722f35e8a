/**
 * Key policies from a tools file's `"idempotency"` member, through `toolgate run` as a child
 * process against the fake provider and the fake CRM: a rerun of the turn whose model rephrased
 * the free-text title replays (and prints how the arguments differed) and the CRM sees one task; a
 * different amount is `IdempotencyKeyReused`; two form submissions of one lead within the calendar
 * hour assign one owner, the next hour a new one; the event received at 10:59:59.9 and its
 * redelivery after the hour turned are one; a windowed tool without `--event-time` is a usage
 * error. And the per-attempt budgets and the deadline as flags.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { FakeCrm, FakeProvider } from "@toolgate/testing"
import { Effect, Exit, Scope } from "effect"
import * as Pglite from "../packages/runtime/test/support/pglite.js"
import * as Cli from "./support/cli.js"
import * as Tools from "./support/tools.js"

const toolgate = (args: ReadonlyArray<string>) => Cli.toolgate(args, { timeoutMs: 120_000 })

/** What the fake model answers next. */
let next: FakeProvider.Scenario = {}
/** Whether the fake model withholds its answer (`first-byte`) or stops in the middle (`idle`). */
let stall: "first-byte" | "idle" | undefined = undefined

let provider: FakeProvider.Server
let crm: FakeCrm.Server
let tools = ""
const scope = Effect.runSync(Scope.make())
let store = ""

beforeAll(async () => {
  store = await Pglite.freshDir()
  const made = await Effect.runPromise(
    Effect.gen(function*() {
      return {
        provider: yield* FakeProvider.make({
          // Step 1 calls the tools of `next`; step 2 (the model has read their results) answers.
          plan: FakeProvider.steps(() => [next, { text: "Done." }], {
            answer: () => ({
              ...(stall === "first-byte" ? { headersDelayMs: Number.POSITIVE_INFINITY } : {}),
              ...(stall === "idle" ? { fault: { _tag: "Stall", afterBytes: 40 } as const } : {})
            })
          })
        }),
        crm: yield* FakeCrm.make()
      }
    }).pipe(Scope.provide(scope))
  )
  provider = made.provider
  crm = made.crm
  tools = Tools.write([
    Tools.webhookTool(crm.url, "create_task", { lead: "string", title: "string", amount: "number" }, {
      idempotency: { keyFields: ["lead"], freeText: ["title"], window: { size: "day", timeZone: "Europe/Berlin" } }
    }),
    Tools.webhookTool(crm.url, "assign_owner", { lead: "string", email: "string", owner_id: "string" }, {
      idempotency: { keyFields: ["email"], window: { size: "hour", timeZone: "Europe/Berlin" } }
    })
  ])
}, 60_000)

afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const run = (turn: string, eventTime: string | undefined, ...extra: ReadonlyArray<string>) =>
  toolgate([
    "run",
    "--base-url",
    `${provider.url}/v1`,
    "--model",
    "m",
    "--tools",
    tools,
    "--scope",
    `acme/${turn}`,
    "--data-dir",
    store,
    ...(eventTime === undefined ? [] : ["--event-time", eventTime]),
    ...extra,
    "Handle the lead."
  ])

const crmCount = async (action: string) =>
  (await Effect.runPromise(crm.stats)).log.filter((m) => m.action === action).length

const createTask = (title: string, amount: number): FakeProvider.Scenario => ({
  toolCalls: [{ name: "create_task", arguments: { lead: "lead-0042", title, amount } }]
})
const assignOwner = (lead: string, email: string): FakeProvider.Scenario => ({
  toolCalls: [{ name: "assign_owner", arguments: { lead, email, owner_id: "usr_7731" } }]
})

describe("toolgate run: key policies from the tools file", () => {
  it(
    "a rerun of the turn replays its journaled step; a redelivery whose model rephrased the title replays and says how the arguments differed; a different amount is refused",
    async () => {
      const at = "2031-06-15T10:00:00+02:00"
      next = createTask("Call back about pilot pricing", 1200)
      const first = await run("lead-0042-form-1", at)
      expect(first.code).toBe(0)
      expect(first.stdout).toMatch(/create_task\(.*\) → executed: \{"id":"mut_/)

      // The same turn again: the journal answers both steps; the model is not asked.
      const requests = (await Effect.runPromise(provider.stats)).requests
      const rerun = await run("lead-0042-form-1", at)
      expect(rerun.code).toBe(0)
      expect(rerun.stderr).toContain("[step 1: replayed from the journal]")
      expect(rerun.stdout).toMatch(/create_task\(.*\) → replayed: \{"id":"mut_/)
      expect((await Effect.runPromise(provider.stats)).requests).toBe(requests)

      // The form redelivered as another turn the same day: the model rephrases the title.
      next = createTask("Call back re: the pilot's pricing", 1200)
      const redelivered = await run("lead-0042-form-2", at)
      expect(redelivered.code).toBe(0)
      expect(redelivered.stdout).toMatch(/create_task\(.*\) → replayed: \{"id":"mut_/)
      expect(redelivered.stdout).toContain(
        "the arguments differ from the recorded call's in free text; it was not executed again:"
      )
      expect(redelivered.stdout).toContain(
        `title: "Call back about pilot pricing" → "Call back re: the pilot's pricing"`
      )
      expect(await crmCount("create_task")).toBe(1)

      next = createTask("Call back about pilot pricing", 2500)
      const changed = await run("lead-0042-form-3", at)
      expect(changed.code).toBe(2)
      expect(changed.stdout).toMatch(
        /create_task\(.*\) → failed: IdempotencyKeyReused: .* was already used with arguments that differ at amount; this call was not executed and nothing was replayed/
      )
      expect(await crmCount("create_task")).toBe(1)
    },
    180_000
  )

  it(
    "two form submissions of one lead within the calendar hour assign one owner; the next hour a new one",
    async () => {
      next = assignOwner("lead-7", "ana@example.com")
      const first = await run("form-1", "2031-06-15T10:05:00+02:00")
      const second = await run("form-2", "2031-06-15T08:50:00Z") // 10:50 in Berlin
      const nextHour = await run("form-3", "2031-06-15T11:00:00.100+02:00")
      expect([first.code, second.code, nextHour.code]).toEqual([0, 0, 0])
      expect(first.stdout).toMatch(/assign_owner\(.*\) → executed/)
      expect(second.stdout).toMatch(/assign_owner\(.*\) → replayed/)
      expect(nextHour.stdout).toMatch(/assign_owner\(.*\) → executed/)
      expect(await crmCount("assign_owner")).toBe(2)
    },
    180_000
  )

  it("the event received at 10:59:59.9 and its redelivery after the hour turned are one assignment", async () => {
    next = assignOwner("lead-8", "bo@example.com")
    const before = await crmCount("assign_owner")
    const first = await run("form-4", "2031-06-15T10:59:59.900+02:00")
    const redelivered = await run("form-4-redelivered", "2031-06-15T10:59:59.900+02:00")
    expect(first.stdout).toMatch(/assign_owner\(.*\) → executed/)
    expect(redelivered.stdout).toMatch(/assign_owner\(.*\) → replayed/)
    expect(await crmCount("assign_owner")).toBe(before + 1)
  }, 180_000)

  it(
    "a windowed tool without --event-time, or a time without its offset, is a usage error before anything is sent",
    async () => {
      const requests = (await Effect.runPromise(provider.stats)).requests
      for (
        const [eventTime, says] of [
          [
            undefined,
            "toolgate: --event-time is required: tool create_task is keyed by a calendar window (P1D in Europe/Berlin); give the time the event was received, not the time of this run"
          ],
          ["2031-06-15T10:00", "toolgate: --event-time 2031-06-15T10:00: not an ISO 8601 instant with its offset"]
        ] as const
      ) {
        const out = await run("form-x", eventTime)
        expect(out.code).toBe(1)
        expect(out.stdout).toBe("")
        expect(out.stderr.trimEnd().split("\n")).toEqual([expect.stringContaining(says)])
      }
      expect((await Effect.runPromise(provider.stats)).requests).toBe(requests)
    },
    60_000
  )
})

describe("toolgate run: the deadline and the per-attempt budgets", () => {
  it("bad durations are usage errors", async () => {
    for (
      const [flag, value] of [["--deadline", "0s"], ["--first-byte-timeout", "soon"], [
        "--idle-timeout",
        "-5s"
      ]] as const
    ) {
      const out = await run("budget", "2031-06-15T10:00:00Z", `${flag}=${value}`)
      expect(out.code).toBe(1)
      expect(out.stderr.trimEnd().split("\n")).toEqual([
        expect.stringContaining(`${flag} ${value}: not a duration > 0`)
      ])
    }
  }, 60_000)

  it.each(
    [
      ["first-byte", "--first-byte-timeout", "no first byte within 300 ms"],
      ["idle", "--idle-timeout", "no byte within 300 ms"]
    ] as const
  )(
    "a %s stall: %s ends each attempt, --deadline the retries; it fails in seconds, exit 2",
    async (kind, flag, says) => {
      stall = kind
      try {
        const started = Date.now()
        const out = await run(`stalled-${kind}`, "2031-06-15T10:00:00Z", flag, "300ms", "--deadline", "2s")
        expect(out.code).toBe(2)
        expect(out.stdout).toContain("error: step 1: StreamTimeout")
        expect(out.stderr).toContain(`[step 1, attempt 1 failed: StreamTimeout: stream timed out: ${says}`)
        expect(Date.now() - started).toBeLessThan(30_000)
      } finally {
        stall = undefined
      }
    },
    60_000
  )
})
