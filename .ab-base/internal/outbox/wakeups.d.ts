/**
 * `LISTEN` on the outbox's channel through `@effect/sql-pg`'s `PgClient` (see
 * `OutboxDispatcher.pgWakeups`).
 *
 * @internal
 */
import { PgClient } from "@effect/sql-pg";
import type { Queue, Scope } from "effect";
import { Effect } from "effect";
import type { SqlError } from "effect/sql";
/** @internal */
export declare const pgWakeups: (schema?: string) => Effect.Effect<Queue.Dequeue<unknown, unknown>, SqlError.SqlError, PgClient.PgClient | Scope.Scope>;
//# sourceMappingURL=wakeups.d.ts.map