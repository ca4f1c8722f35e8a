/**
 * The lead cluster in one process, on the PostgreSQL server (a fresh database): a runner
 * (`Worker.layer` of the CLI: the lead entity on `effect/cluster`'s socket runner, its messages and
 * shard locks in SQL) answering lead events sent by a cluster client, against the fake provider
 * (with the demo's stream faults) and the fake CRM. Each event is answered (its final text, or the
 * typed failure of a turn a correct pipeline rejects), a second send of an event (the same primary
 * key, as a browser resubmits a form) gets the first one's reply without a second turn, and the
 * CRM applies each intent once.
 */
import { PgClient } from "@effect/sql-pg"
import { assert, describe, expect, it } from "@effect/vitest"
import { ToolsFile, ToolValidator } from "@toolgate/adapters"
import * as Worker from "@toolgate/cli/Worker"
import { LeadEntity, LeadEvent, Runner } from "@toolgate/cluster"
import { WebhookHandler } from "@toolgate/runtime"
import { Effect, Exit, Layer, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { readFileSync } from "node:fs"
import * as net from "node:net"
import * as Cli from "./support/cli.js"
import * as LeadWorld from "./support/leadWorld.js"
import * as Postgres from "./support/postgres.js"

const pg = await Postgres.probe()

/** A port free on 127.0.0.1 now. */
const freePort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
)

describe("LeadEvent", () => {
  it.effect("decodes a submission; an event without an id gets one derived from its content", () =>
    Effect.gen(function*() {
      const body = {
        tenant: "acme",
        leadId: "lead-1",
        eventTime: "2026-12-01T09:00:00.000Z",
        payload: { _tag: "form_submission", form: "demo", fields: { email: "a@b.example", company: "Acme" } }
      }
      const event = yield* LeadEvent.decode(body)
      // the same form again, its fields in another order: the same event
      const again = yield* LeadEvent.decode({
        ...body,
        payload: { ...body.payload, fields: { company: "Acme", email: "a@b.example" } }
      })
      assert.strictEqual(event.eventId, again.eventId)
      assert.match(event.eventId, /^ev_[0-9a-f]{32}$/)
      assert.strictEqual(LeadEvent.entityId(event), "acme/lead-1")
      const other = yield* LeadEvent.decode({ ...body, eventTime: "2026-12-01T09:00:01.000Z" })
      assert.notStrictEqual(other.eventId, event.eventId)
      const given = yield* LeadEvent.decode({ ...body, eventId: "form-123" })
      assert.strictEqual(given.eventId, "form-123")
      const bad = yield* Effect.flip(LeadEvent.decode({ ...body, leadId: "a/b", eventTime: "yesterday" }))
      assert.strictEqual(bad._tag, "SchemaError")
    }))
})

describe("toolgate worker and intake", () => {
  it("list their exit codes, mark their required flags, and refuse a bad flag on one line", async () => {
    for (const command of ["worker", "intake"]) {
      const help = await Cli.toolgate([command, "--help"])
      expect(help.code).toBe(0)
      expect(help.stdout, command).toMatch(/EXIT CODES\n {2}1 {3}\S.*\n {2}70 {2}\S.*\n {2}130 \S/)
      expect(help.stdout).toMatch(/--store string\s+required: /)
      expect(help.stdout).toMatch(/--port integer\s+required: /)
      const bad = await Cli.toolgate([
        command,
        "--store",
        "mysql://x",
        "--port",
        "1",
        ...(command === "worker"
          ? ["--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--tools", "none.json"]
          : [])
      ])
      expect(bad.code).toBe(1)
      expect(bad.stderr.trim()).toBe("toolgate: --store must be a postgres:// URL")
    }
  }, 60_000)
})

describe("toolgate demo --workers", () => {
  it("several workers need a PostgreSQL server", async () => {
    const out = await Cli.toolgate(["demo", "--workers", "3", "--leads", "5"])
    expect(out.code).toBe(1)
    expect(out.stderr.trim().split("\n")).toHaveLength(1)
    expect(out.stderr).toContain("--workers 3 needs --store postgres://")
  }, 60_000)
})

Postgres.describeServer(pg, "toolgate demo --workers 2 on the PostgreSQL server", () => {
  it.live(
    "real worker processes, one SIGKILLed mid-turn and replaced: every intent applied once, per-worker counts",
    () =>
      Effect.gen(function*() {
        const store = yield* Postgres.freshDatabase("tg_cluster_demo")
        const out = yield* Effect.promise(() =>
          Cli.toolgate(["demo", "--workers", "2", "--leads", "40", "--seed", "7", "--store", store, "--json"])
        )
        assert.strictEqual(out.code, 0, out.stderr)
        const report = JSON.parse(out.stdout.trim().split("\n").at(-1)!) as {
          workers: ReadonlyArray<{ turns: number; killed: boolean }>
          kills: number
          answered: number
          rejected: Record<string, number>
          crmMutations: number
          crmDuplicates: number
          crmExpected: number
        }
        assert.strictEqual(report.crmDuplicates, 0)
        assert.strictEqual(report.crmMutations, report.crmExpected)
        assert.strictEqual(report.answered + Object.values(report.rejected).reduce((a, b) => a + b, 0), 40)
        // every kill started a replacement; every turn is some worker's
        assert.strictEqual(report.workers.length, 2 + report.kills)
        assert.strictEqual(report.workers.filter((w) => w.killed).length, report.kills)
        assert.isAtLeast(report.workers.reduce((n, w) => n + w.turns, 0), 40)
      }).pipe(Effect.scoped),
    180_000
  )
})

Postgres.describeServer(pg, "the lead cluster in one process, on the PostgreSQL server", () => {
  it.live(
    "every event answered once, a resubmitted event gets the first reply, each intent applied once",
    () =>
      Effect.gen(function*() {
        const world = LeadWorld.events(24, 14, 8)
        const store = yield* Postgres.freshDatabase("tg_cluster")
        const { crm, provider } = yield* LeadWorld.servers(world)
        const file = yield* ToolsFile.parse(readFileSync(LeadWorld.toolsFile(crm.url), "utf8"))
        const toolkit = ToolValidator.toToolkit(file.validator, {
          success: Schema.Json,
          failure: WebhookHandler.WebhookFailure
        })
        const cluster: Runner.Options = { shardsPerGroup: 16, refreshAssignmentsMs: 500, messagePollMs: 500 }
        const port = yield* freePort
        const turns: Array<string> = []
        yield* Layer.build(Worker.layer({
          store,
          host: "127.0.0.1",
          port,
          cluster,
          provider: "openai-chat",
          baseUrl: `${provider.url}/v1`,
          model: "gpt-test",
          apiKey: Redacted.make("sk-test"),
          budgets: { firstByteMs: 2_000, idleMs: 750 },
          recovery: "reexecute",
          tools: file.tools,
          toolkit,
          log: (event) => turns.push(event.eventId)
        }))
        const clientContext = yield* Layer.build(
          Runner.layerClient(cluster).pipe(
            Layer.provide(PgClient.layer({ url: Redacted.make(store), maxConnections: 4 }))
          )
        )
        const client = yield* LeadEntity.Lead.client.pipe(Effect.provideContext(clientContext))
        const send = (e: LeadWorld.WorldEvent) =>
          Effect.gen(function*() {
            const event = yield* LeadEvent.decode(e.submission)
            return yield* Effect.exit(client(LeadEvent.entityId(event)).Handle(event))
          })
        const first = yield* Effect.forEach(world, send, { concurrency: "unbounded" })
        for (const [i, exit] of first.entries()) {
          const e = world[i]!
          if (e.actionable) {
            assert.isTrue(Exit.isSuccess(exit), `${e.submission.eventId} (${e.fault}): ${String(exit)}`)
            if (Exit.isSuccess(exit)) {
              assert.strictEqual(exit.value.text, e.answer)
              assert.strictEqual(exit.value.stoppedBy, "answer")
            }
          } else {
            assert.isTrue(Exit.isFailure(exit), `${e.submission.eventId} (${e.fault}) must be rejected`)
          }
        }
        // every event again (the browser resubmits): the same replies, no new turn
        const ran = turns.length
        const second = yield* Effect.forEach(world, send, { concurrency: "unbounded" })
        assert.deepStrictEqual(second.map(String), first.map(String))
        assert.strictEqual(turns.length, ran)
        assert.strictEqual(ran, world.length)
        const stats = yield* crm.stats
        assert.strictEqual(stats.duplicates, 0)
        assert.deepStrictEqual(stats.byKey, LeadWorld.expectedByKey(world))
        // one message per event in the cluster's storage
        const rows = yield* SqlClient.SqlClient.use((sql) =>
          sql<{ n: string }>`SELECT count(*) AS n FROM toolgate_cluster_messages WHERE message_id IS NOT NULL`
        ).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(store), maxConnections: 1 })))
        assert.strictEqual(Number(rows[0]!.n), world.length)
      }).pipe(Effect.scoped),
    120_000
  )
})
