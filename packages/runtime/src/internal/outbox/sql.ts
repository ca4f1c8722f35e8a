/**
 * The SQL `Outbox`: the store's `outbox_message` table (migration `5_outbox`, run with the
 * store's migrations), read and leased with statements rendered once per schema.
 *
 * @internal
 */
import { Effect, Schema } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import type { StoreOperation } from "../../ExecutionError.js"
import type * as Outbox from "../../Outbox.js"
import * as Codecs from "../sqlCodecs.js"
import { names, statements } from "../sqlStatements.js"
import { migrate, unavailable } from "../sqlStore.js"
import { clampLimit } from "../storeRules.js"

/** @internal */
export const make = (schema: string) =>
  Effect.gen(function*() {
    yield* migrate(schema)
    const sql = yield* SqlClient.SqlClient
    const s = statements(names(schema))

    const query = <Req extends Schema.Constraint, Row extends Schema.Constraint>(
      operation: StoreOperation,
      statement: string,
      { Request, Row, params }: Codecs.Codec<Req, Row>
    ) => {
      const run = SqlSchema.findAll({
        Request,
        Result: Row,
        execute: (request) => sql.unsafe(statement, params(request))
      })
      return (request: Req["Type"]) =>
        (run(request) as Effect.Effect<Array<Row["Type"]>, SqlError.SqlError | Schema.SchemaError>).pipe(
          Effect.mapError(unavailable(operation, null))
        )
    }

    const listQuery = query("listMessages", s.listMessages, Codecs.listMessages)

    const list = Effect.fn("Outbox.list")(function*(wanted: Outbox.ListQuery) {
      return yield* listQuery({
        scope: wanted.scope ?? null,
        key: wanted.key ?? null,
        status: wanted.status === undefined ? null : wanted.status.join(","),
        limit: clampLimit(wanted.limit)
      })
    })

    const service: Outbox.Service = { list }
    return service
  })
