/**
 * The SQL implementation of `IdempotencyStore`: one statement per operation (claim, the claims of
 * a step, read, complete, fail, release, heartbeat, park, park-expired, resolve (audited or not),
 * reap, purge, journal, list, resolutions), with
 * the semantics listed in `IdempotencyStore.ts`, in the portable subset that runs on PostgreSQL
 * ≥ 13 and PGlite (no `RETURNING old.*`, no `ON CONFLICT DO SELECT`). Statements are rendered once
 * per schema and run with `sql.unsafe`, so the driver's prepared-statement cache serves them;
 * every value is a bound parameter. Parameters and rows go through synchronous `Schema` codecs
 * (`sqlCodecs`): the statements alias their columns to the model's field names, so a decoded row
 * is the model.
 *
 * Results, errors and journal details are `text` columns holding the JSON text exactly as
 * written (migration 2; `jsonb` would reorder members and drop duplicates, so a replay would not
 * return the bytes the execution produced), each bounded by a CHECK to 256 KiB.
 *
 * (Why one long module: each operation of the store's contract with its answer — won or lost
 * claims, confirmed or fenced-off writes — side by side, as `memoryStore` mirrors them; the SQL
 * text is in `sqlStatements`, the codecs in `sqlCodecs`.)
 *
 * @internal
 */
import { Effect, Schema } from "effect";
import { Migrator, SqlClient, type SqlError } from "effect/sql";
import { type StoreOperation, StoreUnavailable } from "../ExecutionError.js";
import type * as IdempotencyStore from "../IdempotencyStore.js";
import type { Codec } from "./sqlCodecs.js";
/**
 * Maps a driver failure to `StoreUnavailable`, keeping the reason tag and SQLSTATE, never values;
 * a row (or request) the codecs refuse is `UnreadableRow`, not retryable. (The step journal's SQL
 * maps its failures with it too.)
 *
 * @internal
 */
export declare const unavailable: (operation: StoreOperation, keyHash: string | null) => (error: SqlError.SqlError | Schema.SchemaError) => StoreUnavailable;
/** @internal */
export declare const migrate: (schema: string) => Effect.Effect<void, StoreUnavailable | Migrator.MigrationError, SqlClient.SqlClient>;
/**
 * A statement with its codecs, run on `sql`: `Request` encodes the parameters (`params` puts them
 * in placeholder order), `Row` decodes each returned row; failures become `StoreUnavailable` naming
 * the operation and the record's key hash (null when the statement has none). Shared by the store,
 * the outbox and the step journal.
 *
 * @internal
 */
export declare const queryOn: (sql: SqlClient.SqlClient) => <Req extends Schema.Constraint, Row extends Schema.Constraint>(operation: StoreOperation, statement: string, { Request, Row, params }: Codec<Req, Row>) => (request: Req["Type"], keyHash?: string | null) => Effect.Effect<Array<Row["Type"]>, StoreUnavailable>;
/** How the store group-commits claims (`false`: every claim alone in its statement). @internal */
export type GroupCommitOptions = {
    readonly inFlight: number;
    readonly maxBatch: number;
} | false;
/** @internal */
export declare const make: (schema: string, groupCommit: GroupCommitOptions) => Effect.Effect<IdempotencyStore.Service, StoreUnavailable | Migrator.MigrationError, SqlClient.SqlClient>;
//# sourceMappingURL=sqlStore.d.ts.map