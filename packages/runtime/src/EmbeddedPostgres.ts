/**
 * Embedded PostgreSQL: PGlite (PostgreSQL compiled to WebAssembly) on a data directory, with
 * `@effect/sql-pg`'s `PgClient` connected to it, so that the store's one SQL implementation runs
 * with nothing installed, and stays correct with any number of processes on one directory.
 *
 * PGlite is a single-process database: two processes that each open it on one directory each
 * execute every call, and lose records. So one process owns the directory and the others go
 * through it:
 *
 * - **One owner.** The first process takes an exclusive lock on the directory (an OS record lock
 *   on `toolgate-owner.lock`, released by the kernel when the process ends, however it ends),
 *   opens PGlite, serves its session on a Unix socket in the directory, and publishes
 *   `toolgate-owner.json` (`{ "pid", "endpoint", "since" }`).
 * - **Members connect.** Every other process (and every other layer on the same directory in the
 *   owner's own process) connects to that socket with the PostgreSQL wire protocol. The session
 *   serves one exchange at a time, whole: an extended-query cycle or a transaction (the
 *   `Migrator`'s included) runs with no other connection's statement inside it.
 * - **Takeover.** When the owner ends (a clean stop, a crash, SIGKILL), its connections close;
 *   the first member that needs a connection finds the lock free, takes it, reopens PGlite on the
 *   directory (committed records survive a SIGKILL of the owner: PGlite writes through to the
 *   files) and serves the others. A store operation cut by the takeover fails with a retryable
 *   `StoreUnavailable` and the executor retries it; the new connection waits (up to
 *   `connectTimeoutMs`) for the new owner.
 * - **Unreachable owner.** When the lock is held and its socket refuses connections for 3 s (an
 *   owner frozen before it listens, a socket of another user), the layer fails at once with
 *   {@link DataDirInUse}.
 *
 * One machine: the lock and the socket are local, so the directory must not be shared between
 * machines (a network file system); run several machines on a PostgreSQL server. All processes
 * share PGlite's one session and one CPU core for SQL: for throughput across many workers, use the
 * server. Why the session is served by our own code rather than `@electric-sql/pglite-socket`,
 * which interleaves two connections' messages inside an extended-query cycle, is in
 * `internal/embedded/sessionServer.ts`; why the lock is a SQLite transaction, in
 * `internal/embedded/directoryLock.ts`.
 *
 * `@effect/sql-pglite` has no build for effect 4.1 (it imports the removed
 * `effect/unstable/sql`), while the PostgreSQL wire protocol is stable, so `@effect/sql-pg`
 * connects unchanged. Starting is slow on a new data directory (initdb, 3–18 s) and fast when
 * reopening an initialised one (0.3–2 s).
 *
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { type SqlClient, SqlError } from "effect/sql"
import * as Membership from "./internal/embedded/membership.js"

/**
 * Options.
 *
 * - `dataDir`: a directory (created when missing, initialised when empty, reused when
 *   initialised; relative paths are resolved against the working directory) or `"memory://"`
 *   for a database that vanishes with the layer (never shared).
 * - `connectTimeoutMs`: how long a new connection may wait for the session, ms (default 60,000:
 *   an owner initialising a new directory, or a member taking over, takes seconds).
 * - `holdTimeoutMs`: how long a connection may hold the session mid-exchange (inside a
 *   transaction) without sending anything before it is cut off and its transaction rolled back,
 *   so that a stalled process cannot stall the others, ms (default 30,000).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly dataDir: string
  readonly connectTimeoutMs?: number | undefined
  readonly holdTimeoutMs?: number | undefined
}

/**
 * Another process holds the data directory and its socket refuses connections, so this process
 * can neither own the directory nor work through its owner. `pid` is the owner's (from
 * `toolgate-owner.json`; `null` when it published none), `reason` what refused.
 *
 * @since 0.1.0
 * @category errors
 */
export class DataDirInUse extends Schema.TaggedError<DataDirInUse>()("DataDirInUse", {
  dataDir: Schema.String,
  pid: Schema.NullOr(Schema.Number),
  reason: Schema.String
}) {
  override get message(): string {
    const owner = this.pid === null ? "another process" : `pid ${this.pid}`
    return `data dir ${this.dataDir} is in use by ${owner}, which does not answer (${this.reason}); use --store postgres://… to run several workers`
  }
}

/** How long a held lock may go with its socket refusing before the layer fails, ms. */
const unreachableAfterMs = 3_000

const cannotOpen = (dataDir: string, cause: unknown) =>
  new SqlError.SqlError({
    reason: new SqlError.ConnectionError({
      cause,
      message: `the embedded store cannot open ${dataDir}: ${cause instanceof Error ? cause.message : String(cause)}`,
      operation: "connect"
    })
  })

/**
 * Opens the embedded store on `options.dataDir` and provides a `PgClient` (and `SqlClient`) on
 * it: as the directory's owner when no other process owns it, as a member connected to the
 * owner otherwise (see the module docs). One pooled connection per layer: every statement is
 * serialised by the session anyway. When the layer's scope ends, the client closes; an owner then
 * tells its members it is shutting down, closes PGlite and releases the directory, and one of
 * them takes over.
 *
 * Fails with `DataDirInUse` when another process holds the directory and does not answer, and
 * with `SqlError` (`ConnectionError`) when the directory cannot be created, locked or opened
 * (the embedded store needs Node ≥ 22.13 for `node:sqlite`, which takes the lock).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError | DataDirInUse> =>
  Layer.unwrap(Effect.gen(function*() {
    const dataDir = yield* Effect.try({
      try: () => Membership.resolveDataDir(options.dataDir),
      catch: (cause) => cannotOpen(options.dataDir, cause)
    })
    const membership = yield* Effect.acquireRelease(
      Effect.sync(() => Membership.make({ dataDir, holdTimeoutMs: options.holdTimeoutMs ?? 30_000 })),
      (m) => Effect.promise(() => m.close())
    )
    yield* Effect.tryPromise({
      try: () => membership.reach(unreachableAfterMs),
      catch: (cause) =>
        cause instanceof Membership.Unreachable
          ? new DataDirInUse({ dataDir, pid: cause.pid, reason: cause.reason })
          : cannotOpen(dataDir, cause)
    })
    return PgClient.layer({
      stream: membership.connect,
      database: "postgres",
      username: "postgres",
      ssl: false,
      maxConnections: 1,
      connectTimeout: options.connectTimeoutMs ?? 60_000
    })
  }))
