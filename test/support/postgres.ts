/**
 * Shared helper for tests that need the PostgreSQL server.
 *
 * The server is found at `TOOLGATE_PG_URL` (default `postgres://postgres@127.0.0.1:5432/test`).
 * When it cannot be reached, those tests are skipped with the reason in their title — unless
 * `TOOLGATE_REQUIRE_PG=1` (CI), in which case a failing test takes their place, so a missing
 * server can never pass silently.
 *
 * Usage at the top of a test file (top-level await is fine in vitest):
 *
 * ```ts
 * const pg = await Postgres.probe()
 * Postgres.describeServer(pg, "store on the server", () => { ... })
 * ```
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import * as net from "node:net"
import { describe, it } from "vitest"

/** The server's URL. */
export const url = process.env.TOOLGATE_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test"

/** `TOOLGATE_REQUIRE_PG=1`: server tests must run. */
export const required = process.env.TOOLGATE_REQUIRE_PG === "1"

/** Whether the server answered, and why not. */
export interface Probe {
  readonly available: boolean
  readonly reason: string
}

/** Opens a TCP connection to the server's host and port (1.5 s timeout). */
export const probe = (): Promise<Probe> => {
  const target = new URL(url)
  const port = Number(target.port === "" ? 5432 : target.port)
  const host = target.hostname
  return new Promise((resolve) => {
    const socket = net.connect({ host, port })
    const done = (result: Probe) => {
      socket.destroy()
      resolve(result)
    }
    socket.setTimeout(1500, () => done({ available: false, reason: `no answer from ${host}:${port} within 1.5 s` }))
    socket.once("connect", () => done({ available: true, reason: "" }))
    socket.once("error", (e) => done({ available: false, reason: `${host}:${port}: ${e.message}` }))
  })
}

/**
 * `describe` for server tests: runs `body` when the server is available; otherwise skips it with
 * the reason in the title, or, under `TOOLGATE_REQUIRE_PG=1`, registers one failing test.
 */
export const describeServer = (p: Probe, name: string, body: () => void): void => {
  if (p.available) {
    describe(name, body)
  } else if (required) {
    describe(name, () => {
      it("PostgreSQL server is reachable (TOOLGATE_REQUIRE_PG=1)", () => {
        throw new Error(`TOOLGATE_REQUIRE_PG=1 but the PostgreSQL server is unreachable: ${p.reason}`)
      })
    })
  } else {
    describe.skip(
      `${name} [skipped: PostgreSQL server unreachable: ${p.reason}; set TOOLGATE_REQUIRE_PG=1 to fail instead]`,
      body
    )
  }
}

/** A schema name unique to this process and call, for tests running in parallel. */
export const uniqueSchema = (prefix: string): string =>
  `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`.toLowerCase()

/** A pooled client on the server (`maxConnections` default 10). */
export const client = (maxConnections = 10): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError> =>
  PgClient.layer({ url: Redacted.make(url), maxConnections })

/**
 * A layer that drops `schema` (CASCADE) when released, so a test leaves nothing behind. Provide
 * it above the layers that create the schema.
 */
export const dropSchemaOnRelease = (schema: string): Layer.Layer<never, never, SqlClient.SqlClient> =>
  Layer.effectDiscard(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Effect.addFinalizer(() => Effect.ignore(sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)))
  }))

/**
 * Runs one statement on the server's database through a client of its own (closed after), for
 * statements outside any schema: `CREATE DATABASE`, `DROP DATABASE`.
 */
export const admin = (statement: string): Effect.Effect<void, SqlError.SqlError> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(statement)
  }).pipe(Effect.provide(client(1)))

/**
 * A fresh database on the server, named `<prefix>_<pid>_<random>`, dropped (its sessions ended)
 * when the scope closes; gives its URL. For tests whose processes use the default table names
 * (the cluster's tables, the store's): nothing is shared with other tests, advisory locks
 * included (PostgreSQL scopes them to a database).
 */
export const freshDatabase = (prefix: string) =>
  Effect.gen(function*() {
    const name = uniqueSchema(prefix)
    yield* Effect.acquireRelease(
      Effect.orDie(admin(`CREATE DATABASE "${name}"`)),
      () => Effect.ignore(admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))
    )
    const target = new URL(url)
    target.pathname = `/${name}`
    return target.toString()
  })
