/**
 * The SQL `Outbox`: the store's `outbox_message` table (migration `5_outbox`, run with the
 * store's migrations), read and leased with statements rendered once per schema.
 *
 * @internal
 */
import { Effect } from "effect";
import { SqlClient } from "effect/sql";
import type * as Outbox from "../../Outbox.js";
/** @internal */
export declare const make: (schema: string) => Effect.Effect<Outbox.Service, import("../../ExecutionError.js").StoreUnavailable | import("effect/sql/Migrator").MigrationError, SqlClient.SqlClient>;
//# sourceMappingURL=sql.d.ts.map