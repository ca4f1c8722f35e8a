/**
 * Embedded PostgreSQL: PGlite (PostgreSQL compiled to WebAssembly, in this process) served on a
 * loopback port through `@electric-sql/pglite-socket`, with `@effect/sql-pg`'s `PgClient`
 * connected to it. The store's one SQL implementation then runs unchanged on it, so toolgate works
 * with nothing installed.
 *
 * Why a socket: `@effect/sql-pglite` has no build for effect 4.1 (it imports the removed
 * `effect/unstable/sql`), while the PostgreSQL wire protocol is stable, so `@effect/sql-pg`
 * connects to pglite-socket unchanged.
 *
 * Limits (measured on a 2-core machine): PGlite is one session, so the pool is one connection and
 * concurrency means interleaving, never parallelism; a transaction holds the only connection
 * until it ends. Starting is slow on a new data directory (initdb, 6–18 s) and fast when
 * reopening an initialised one (0.7–1.9 s): persist `dataDir` (or copy an initialised one) rather
 * than starting from `memory://` each time.
 *
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect, Layer } from "effect"
import type { SqlClient, SqlError } from "effect/sql"

/**
 * Options.
 *
 * - `dataDir`: a directory (created and initialised when empty, reused when initialised) or
 *   `"memory://"` for a database that vanishes with the layer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly dataDir: string
}

/**
 * Starts PGlite on `options.dataDir`, serves it on `127.0.0.1:<free port>`, and provides a
 * one-connection `PgClient` (and `SqlClient`) on it. Everything is closed when the layer's scope
 * ends: the client, then the socket server, then PGlite (which flushes a persisted directory).
 * Fails with `SqlError` when the client cannot connect.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError> =>
  Layer.unwrap(Effect.gen(function*() {
    const db = yield* Effect.acquireRelease(
      Effect.promise(() => PGlite.create({ dataDir: options.dataDir })),
      (pglite) => Effect.promise(() => pglite.close())
    )
    const server = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const s = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 })
        await s.start()
        return s
      }),
      (s) => Effect.promise(() => s.stop())
    )
    const port = Number(server.getServerConn().split(":").pop())
    return PgClient.layer({
      host: "127.0.0.1",
      port,
      database: "postgres",
      username: "postgres",
      // pglite-socket multiplexes clients into one session; a larger pool is refused
      maxConnections: 1,
      ssl: false
    })
  }))
