/**
 * `LISTEN` on the outbox's channel through `@effect/sql-pg`'s `PgClient` (see
 * `OutboxDispatcher.pgWakeups`).
 *
 * @internal
 */
import { PgClient } from "@effect/sql-pg"
import * as Effect from "effect/Effect"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type { SqlError } from "effect/sql"
import { defaultSchema } from "../../IdempotencyStore.js"
import { checkSchema, names } from "../sqlStatements.js"

/** @internal */
export const pgWakeups = (
  schema: string = defaultSchema
): Effect.Effect<Queue.Dequeue<unknown, unknown>, SqlError.SqlError, PgClient.PgClient | Scope.Scope> =>
  Effect.gen(function*() {
    yield* checkSchema(schema)
    const pg = yield* PgClient.PgClient
    return yield* pg.listen(names(schema).channel)
  })
