/**
 * `LISTEN` on the outbox's channel through `@effect/sql-pg`'s `PgClient` (see
 * `OutboxDispatcher.pgWakeups`).
 *
 * @internal
 */
import { PgClient } from "@effect/sql-pg";
import { Effect } from "effect";
import { defaultSchema } from "../../IdempotencyStore.js";
import { checkSchema, names } from "../sqlStatements.js";
/** @internal */
export const pgWakeups = (schema = defaultSchema) => Effect.gen(function* () {
    yield* checkSchema(schema);
    const pg = yield* PgClient.PgClient;
    return yield* pg.listen(names(schema).channel);
});
//# sourceMappingURL=wakeups.js.map