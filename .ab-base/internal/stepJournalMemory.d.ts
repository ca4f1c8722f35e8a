/**
 * The in-memory step journal, for unit tests: the same state machine as the SQL statements over a
 * `Map`, each operation one synchronous step (atomic in its process). Its clock is effect's
 * `Clock` unless an operation passes `now`; fences come from one counter, never reused.
 *
 * @internal
 */
import { Effect } from "effect";
import type * as StepJournal from "../StepJournal.js";
/** @internal */
export declare const make: Effect.Effect<StepJournal.Service, never, never>;
//# sourceMappingURL=stepJournalMemory.d.ts.map