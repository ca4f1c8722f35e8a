/**
 * The embedded store's session, served to several connections: exchanges are never interleaved
 * (an extended-query cycle that arrives in pieces, a transaction), what a departed or stalled
 * connection left open is ended before anyone else runs, ownership moves when the owner's layer
 * closes, and an owner that does not answer is `DataDirInUse`. Raw wire-protocol sockets play
 * the misbehaving clients; `PgClient`s through `EmbeddedPostgres.layer` the well-behaved ones.
 */
import { assert, describe, it } from "@effect/vitest"
import { EmbeddedPostgres } from "@toolgate/runtime"
import { Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import * as Pglite from "./support/pglite.js"

const frame = (type: string, body: Buffer): Buffer => {
  const out = Buffer.alloc(5 + body.length)
  out.write(type, 0, "latin1")
  out.writeInt32BE(4 + body.length, 1)
  body.copy(out, 5)
  return out
}
const cstr = (s: string) => Buffer.concat([Buffer.from(s), Buffer.alloc(1)])
const startup = (): Buffer => {
  const body = Buffer.concat([
    Buffer.from([0, 3, 0, 0]),
    cstr("user"),
    cstr("postgres"),
    cstr("database"),
    cstr("postgres"),
    Buffer.alloc(1)
  ])
  const out = Buffer.alloc(4 + body.length)
  out.writeInt32BE(4 + body.length, 0)
  body.copy(out, 4)
  return out
}
const parse = (sql: string) => frame("P", Buffer.concat([cstr(""), cstr(sql), Buffer.from([0, 0])]))
const bind = () => frame("B", Buffer.concat([cstr(""), cstr(""), Buffer.from([0, 0, 0, 0, 0, 0])]))
const execute = () => frame("E", Buffer.concat([cstr(""), Buffer.from([0, 0, 0, 0])]))
const sync = () => frame("S", Buffer.alloc(0))
const query = (sql: string) => frame("Q", cstr(sql))

/** A raw client on the owner's socket: what it received, and a wait for its n-th ReadyForQuery. */
const rawClient = (dataDir: string) =>
  Effect.promise(() =>
    new Promise<{
      readonly socket: net.Socket
      readonly received: () => string
      readonly ready: (n: number) => Promise<void>
      readonly closed: Promise<void>
    }>((resolve, reject) => {
      const { endpoint } = JSON.parse(fs.readFileSync(path.join(dataDir, "toolgate-owner.json"), "utf8")) as {
        endpoint: string
      }
      const socket = net.connect({ path: endpoint })
      let received = Buffer.alloc(0)
      const waiters: Array<() => void> = []
      socket.on("data", (chunk: Buffer) => {
        received = Buffer.concat([received, chunk])
        for (const w of waiters.splice(0)) w()
      })
      const closed = new Promise<void>((done) => socket.on("close", () => done()))
      const readyCount = () => {
        let n = 0
        for (let i = 0; i + 5 < received.length;) {
          if (received[i] === 0x5a) n++
          i += 1 + received.readInt32BE(i + 1)
        }
        return n
      }
      const ready = (n: number) =>
        new Promise<void>((done) => {
          const check = () => (readyCount() >= n ? done() : waiters.push(check))
          check()
        })
      socket.once("error", reject)
      socket.once("connect", () => {
        socket.write(startup())
        void ready(1).then(() => resolve({ socket, received: () => received.toString("latin1"), ready, closed }))
      })
    })
  )

const tick = (ms: number) => Effect.promise(() => new Promise((r) => setTimeout(r, ms)))

/** The SqlClient of an `EmbeddedPostgres` layer built in its own scope (closed by the returned effect). */
const open = (dataDir: string, options: Partial<EmbeddedPostgres.Options> = {}) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(EmbeddedPostgres.layer({ dataDir, ...options }), scope)
    const sql = context.mapUnsafe.get(SqlClient.SqlClient.key) as SqlClient.SqlClient
    return { sql, close: Scope.close(scope, Exit.void) }
  })

describe("EmbeddedPostgres: one session, several connections", () => {
  it.live(
    "a cycle that arrives in two pieces runs whole: another connection's cycle waits for its Sync",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* Effect.promise(Pglite.freshDir)
        const owner = yield* open(dataDir)
        const a = yield* rawClient(dataDir)
        const b = yield* rawClient(dataDir)
        a.socket.write(Buffer.concat([parse("SELECT 'from-A' AS v"), bind()]))
        yield* tick(150)
        b.socket.write(Buffer.concat([parse("SELECT 'from-B' AS v"), bind(), execute(), sync()]))
        yield* tick(150)
        // B's whole cycle is queued behind A's unfinished one
        assert.notInclude(b.received(), "from-")
        a.socket.write(Buffer.concat([execute(), sync()]))
        yield* Effect.promise(() => Promise.all([a.ready(2), b.ready(2)]))
        assert.include(a.received(), "from-A")
        assert.notInclude(a.received(), "from-B")
        assert.include(b.received(), "from-B")
        assert.notInclude(b.received(), "does not exist")
        a.socket.destroy()
        b.socket.destroy()
        yield* owner.close
      }),
    60_000
  )

  it.live(
    "a transaction holds the session: a member's statement runs after it, never inside it",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* Effect.promise(Pglite.freshDir)
        const owner = yield* open(dataDir)
        const member = yield* open(dataDir)
        yield* owner.sql`CREATE TABLE t (v text)`
        const inside = yield* Deferred.make<void>()
        const tx = yield* owner.sql.withTransaction(
          Effect.gen(function*() {
            yield* owner.sql`INSERT INTO t VALUES ('rolled-back')`
            yield* Deferred.succeed(inside, undefined)
            yield* tick(300)
            return yield* Effect.fail("roll back" as const)
          })
        ).pipe(Effect.exit, Effect.forkChild)
        yield* Deferred.await(inside)
        const started = performance.now()
        yield* member.sql`INSERT INTO t VALUES ('kept')`
        const waited = performance.now() - started
        assert.isTrue(Exit.isFailure(yield* Fiber.join(tx)))
        const rows = yield* member.sql<{ v: string }>`SELECT v FROM t`
        assert.deepStrictEqual(rows.map((r) => r.v), ["kept"])
        assert.isAbove(waited, 100)
        yield* member.close
        yield* owner.close
      }),
    60_000
  )

  it.live(
    "a connection that goes away inside a transaction is rolled back; the others go on",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* Effect.promise(Pglite.freshDir)
        const owner = yield* open(dataDir)
        yield* owner.sql`CREATE TABLE t (v text)`
        const raw = yield* rawClient(dataDir)
        raw.socket.write(query("BEGIN; INSERT INTO t VALUES ('orphan')"))
        yield* Effect.promise(() => raw.ready(2))
        raw.socket.destroy()
        yield* owner.sql`INSERT INTO t VALUES ('after')`
        const rows = yield* owner.sql<{ v: string }>`SELECT v FROM t`
        assert.deepStrictEqual(rows.map((r) => r.v), ["after"])
        yield* owner.close
      }),
    60_000
  )

  it.live(
    "a connection that holds the session idle is cut off after holdTimeoutMs and rolled back",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* Effect.promise(Pglite.freshDir)
        const owner = yield* open(dataDir, { holdTimeoutMs: 300 })
        yield* owner.sql`CREATE TABLE t (v text)`
        const raw = yield* rawClient(dataDir)
        raw.socket.write(query("BEGIN; INSERT INTO t VALUES ('stalled')"))
        yield* Effect.promise(() => raw.ready(2))
        yield* owner.sql`INSERT INTO t VALUES ('waited')`
        yield* Effect.promise(() => raw.closed)
        assert.include(raw.received(), "25P03")
        const rows = yield* owner.sql<{ v: string }>`SELECT v FROM t`
        assert.deepStrictEqual(rows.map((r) => r.v), ["waited"])
        yield* owner.close
      }),
    60_000
  )

  it.live(
    "when the owning layer closes, a member takes the directory over with every record",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* Effect.promise(Pglite.freshDir)
        const owner = yield* open(dataDir)
        const member = yield* open(dataDir)
        yield* member.sql`CREATE TABLE t (v text)`
        yield* member.sql`INSERT INTO t VALUES ('before')`
        const first = fs.readFileSync(path.join(dataDir, "toolgate-owner.json"), "utf8")
        yield* owner.close
        // the statement that meets the closed connection fails retryably (the store retries it too)
        yield* member.sql`INSERT INTO t VALUES ('after')`.pipe(
          Effect.retry({ times: 3, while: (e) => e.isRetryable })
        )
        const rows = yield* member.sql<{ v: string }>`SELECT v FROM t ORDER BY v DESC`
        assert.deepStrictEqual(rows.map((r) => r.v), ["before", "after"])
        const second = fs.readFileSync(path.join(dataDir, "toolgate-owner.json"), "utf8")
        assert.notStrictEqual(second, first)
        yield* member.close
        assert.isFalse(fs.existsSync(path.join(dataDir, "toolgate-owner.json")))
      }),
    60_000
  )

  it.live(
    "another process holds the directory and does not answer: DataDirInUse, naming its pid",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* Effect.promise(Pglite.freshDir)
        const holder = yield* Effect.promise(() => Pglite.unansweringOwner(dataDir))
        yield* Effect.addFinalizer(() => Effect.sync(() => holder.kill("SIGKILL")))
        const started = performance.now()
        const error = yield* Effect.flip(open(dataDir))
        assert.strictEqual(error._tag, "DataDirInUse")
        if (error._tag === "DataDirInUse") {
          assert.strictEqual(error.pid, holder.pid)
          assert.match(
            error.message,
            new RegExp(
              `^data dir .* is in use by pid ${holder.pid}, .*; use --store postgres://… to run several workers$`
            )
          )
        }
        assert.notInclude(error.message, "\n")
        assert.isBelow(performance.now() - started, 10_000)
      }).pipe(Effect.scoped),
    60_000
  )

  it.live("memory:// is a private database of the layer", () =>
    Effect.gen(function*() {
      const a = yield* open("memory://")
      const b = yield* open("memory://")
      yield* a.sql`CREATE TABLE t (v text)`
      const exit = yield* Effect.exit(b.sql`SELECT * FROM t`)
      assert.isTrue(Exit.isFailure(exit))
      yield* a.close
      yield* b.close
    }), 60_000)
})
