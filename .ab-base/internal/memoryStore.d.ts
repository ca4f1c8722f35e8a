/**
 * The in-memory implementation of `IdempotencyStore`, for unit tests: the same state machine as
 * the SQL statements, decision for decision, over a `Map`. Each operation is one synchronous
 * step, so it is atomic in its process. Its clock is effect's `Clock` (so `TestClock` drives it)
 * unless an operation passes `now`.
 *
 * (Why one long module: it mirrors `sqlStatements` operation for operation; keeping both in the
 * same shape is what lets them be compared.)
 *
 * @internal
 */
import { Effect } from "effect";
import type * as IdempotencyStore from "../IdempotencyStore.js";
/** @internal */
export declare const make: Effect.Effect<IdempotencyStore.Service, never, never>;
//# sourceMappingURL=memoryStore.d.ts.map