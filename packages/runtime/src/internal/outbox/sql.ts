/**
 * The SQL `Outbox`: the store's `outbox_message` table (migration `5_outbox`, run with the
 * store's migrations), read and leased with statements rendered once per schema.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import type * as Outbox from "../../Outbox.js"
import * as Codecs from "../sqlCodecs.js"
import { names, statements } from "../sqlStatements.js"
import { migrate, queryOn } from "../sqlStore.js"
import { clampLimit } from "../storeRules.js"
import { MessageLeaseLost } from "./errors.js"

/** @internal */
export const make = (schema: string) =>
  Effect.gen(function*() {
    yield* migrate(schema)
    const sql = yield* SqlClient.SqlClient
    const s = statements(names(schema))

    const query = queryOn(sql)

    const listQuery = query("listMessages", s.listMessages, Codecs.listMessages)
    const claimQuery = query("claimMessages", s.claimMessages, Codecs.claimMessages)
    const settleQuery = query("settleMessage", s.settleMessage, Codecs.settleMessage)
    const countQuery = query("listMessages", s.countMessages, Codecs.countMessages)

    const claim = Effect.fn("Outbox.claim")(function*(request: Outbox.ClaimRequest) {
      return yield* claimQuery({
        owner: request.owner,
        leaseMs: request.leaseMs,
        limit: clampLimit(request.limit),
        now: request.now ?? null
      })
    })

    const settle = Effect.fn("Outbox.settle")(function*(
      ref: Outbox.MessageRef,
      settlement: Outbox.Settlement,
      options?: { readonly now?: Date | undefined }
    ) {
      const rows = yield* settleQuery({
        id: ref.id,
        leaseFence: ref.leaseFence,
        status: settlement._tag === "Delivered" ? "delivered" : settlement._tag === "Retry" ? "pending" : "dead",
        error: settlement._tag === "Delivered" ? null : settlement.error,
        delayMs: settlement._tag === "Retry" ? settlement.delayMs : 0,
        now: options?.now ?? null
      })
      if (rows.length === 0) {
        return yield* new MessageLeaseLost({ id: ref.id.toString(), leaseFence: ref.leaseFence.toString() })
      }
      return { latencyMs: rows[0].latencyMs }
    })

    const counts = Effect.fn("Outbox.counts")(function*() {
      const rows = yield* countQuery({})
      const found = { pending: 0, delivering: 0, delivered: 0, dead: 0 }
      for (const row of rows) found[row.status] = row.count
      return found
    })

    const list = Effect.fn("Outbox.list")(function*(wanted: Outbox.ListQuery) {
      return yield* listQuery({
        scope: wanted.scope ?? null,
        key: wanted.key ?? null,
        status: wanted.status === undefined ? null : wanted.status.join(","),
        limit: clampLimit(wanted.limit)
      })
    })

    const service: Outbox.Service = { claim, settle, counts, list }
    return service
  })
