/**
 * One PGlite session served to many PostgreSQL wire-protocol connections, one whole exchange at a
 * time: a connection that sends a message holds the session until the session is idle again at
 * the end of one of its exchanges (a `ReadyForQuery` whose status is `I`), so an extended-query
 * cycle (`Parse` … `Sync`) and an explicit transaction (`BEGIN` … `COMMIT`, the `Migrator`'s
 * included) run with no other connection's message between their messages.
 *
 * Why not `@electric-sql/pglite-socket` (0.2.17): its queue hands the session over between single
 * messages, keeping it for one connection only while `PGlite.isInTransaction()` (an explicit
 * `BEGIN`). An extended-query cycle is an implicit transaction that does not count, so when a
 * client's cycle reaches the server in two reads (a large parameter, a busy machine), another
 * connection's `Bind` can replace the unnamed portal between them: reproduced with two raw
 * connections, the first one got the second one's row and the second one
 * `portal "" does not exist` (`packages/runtime/test/EmbeddedSession.test.ts` runs that sequence
 * against this server). A failed message would likewise put every connection's messages into the
 * backend's skip-until-`Sync` state.
 *
 * What the session keeps between exchanges is shared: prepared statements (`@effect/sql-pg` names
 * them per connection with a random prefix, so they do not collide), `SET` settings (every
 * toolgate client sends the same startup settings), and `LISTEN` (not supported). When a
 * connection goes away, the server ends what it left open (a `Sync`, then `ROLLBACK` if a
 * transaction is open) and closes the statements it prepared, before anyone else gets the session.
 * A connection that holds the session without sending anything for `holdTimeoutMs` is cut off the
 * same way, so a stalled process cannot stall the others.
 *
 * (Why one long module: the wire protocol's message framing, the one-session-at-a-time queue over
 * the database and the sockets' lifecycle are one server.)
 *
 * @internal
 */
import type { PGlite } from "@electric-sql/pglite";
import type { Duplex } from "node:stream";
/** @internal */
export interface Options {
    /** How long a connection may hold the session without sending a message, ms. */
    readonly holdTimeoutMs: number;
    /** Says who is shutting down, in the error a connection gets then (e.g. `pid 123`). */
    readonly ownerLabel: string;
}
/** @internal */
export interface SessionServer {
    /** Serves a connection: a socket, or one end of an in-process duplex pair. */
    readonly attach: (stream: Duplex) => void;
    /** Listens on a Unix socket path (a named pipe on Windows), replacing a stale socket file. */
    readonly listen: (endpoint: string) => Promise<void>;
    /** Starts serving the session; until then connections wait. */
    readonly open: (db: PGlite) => void;
    /** The session could not be opened: every connection, present and future, gets `reason`. */
    readonly fail: (reason: string) => void;
    /**
     * Settles when no connection is left, or after `ms`: a member that is ending too finishes its
     * last writes (and closes its connection) before the owner closes the session.
     */
    readonly drain: (ms: number) => Promise<void>;
    /** Stops listening, tells every connection the owner is shutting down, waits for the running exchange. */
    readonly close: () => Promise<void>;
}
/** @internal */
export declare const make: (options: Options) => SessionServer;
//# sourceMappingURL=sessionServer.d.ts.map