/**
 * The SQL implementation of `StepJournal`, beside the idempotency store in its schema (its table
 * is migration `4_step_journal` of the store's loader, in `sqlStatements`): one statement per
 * operation rendered once per schema (every value a bound parameter, run through the driver's prepared-statement cache),
 * and the codecs of their parameters and rows. Fences come from the store's sequence
 * (`idem_fence_seq`). The claim is an insert-or-take-over whose `WHERE` is the takeover rule of
 * `stepJournalRules.claimOn`; every later write is fenced (`… AND fence = $4 AND status =
 * 'in_progress'`); time is `coalesce($now, now())`, the database clock unless a test injects one.
 * Outputs are `text` holding the JSON text as written, bounded by a CHECK (8 MiB).
 *
 * @internal
 */
import { Effect } from "effect";
import { SqlClient } from "effect/sql";
import { StoreUnavailable } from "../ExecutionError.js";
import type * as StepJournal from "../StepJournal.js";
/** @internal */
export declare const make: (schema: string) => Effect.Effect<StepJournal.Service, StoreUnavailable | import("effect/sql/Migrator").MigrationError, SqlClient.SqlClient>;
//# sourceMappingURL=stepJournalSql.d.ts.map