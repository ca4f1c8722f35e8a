/**
 * The transactional outbox: the follow-up messages (`FollowUp`) of completed tool calls, as the
 * idempotency store wrote them in the statement that completed each call, with their delivery
 * state. `OutboxDispatcher` delivers them; operators read them here (`toolgate records`).
 *
 * A message is `pending` (due at `availableAt`), `delivering` (leased to a dispatcher until
 * `leaseExpiresAt`, under `leaseFence`), `delivered`, or `dead` (dead-lettered after its attempts
 * were used up). Messages live in the store's schema (`outbox_message`, migration `5_outbox`), so
 * the layers here share the `IdempotencyStore`'s.
 *
 * Layers: {@link layerSql} (PostgreSQL or PGlite), {@link layerMemory} (the memory store's outbox:
 * requires `IdempotencyStore.layerMemory`'s service in context).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { Migrator, SqlClient } from "effect/sql"
import type { StoreUnavailable } from "./ExecutionError.js"
import * as IdempotencyStore from "./IdempotencyStore.js"
import * as OutboxMemory from "./internal/outbox/memory.js"
import * as OutboxSql from "./internal/outbox/sql.js"

/**
 * A message's delivery state (see the module's description).
 *
 * @since 0.1.0
 * @category models
 */
export const MessageStatus = Schema.Literals(["pending", "delivering", "delivered", "dead"])

/** The type of {@link MessageStatus}. @since 0.1.0 @category models */
export type MessageStatus = typeof MessageStatus.Type

/**
 * One outbox message. `id` orders messages in the order they were written; `deliveryKey` is its
 * `Idempotency-Key` (`<downstream key>:<ordinal>`); `scope`, `key` and `fence` name the call and
 * the completion that wrote it; `kind` and `destination` where it goes (a webhook URL, or a named
 * dispatcher); `payload` its JSON text as written; `attempts` the delivery attempts begun;
 * `lastError` why the last one failed (`null`: none failed).
 *
 * @since 0.1.0
 * @category models
 */
export interface OutboxMessage {
  readonly id: bigint
  readonly deliveryKey: string
  readonly scope: string
  readonly key: string
  readonly fence: bigint
  readonly ordinal: number
  readonly kind: "webhook" | "named"
  readonly destination: string
  readonly payload: string
  readonly orderingKey: string | null
  readonly status: MessageStatus
  readonly attempts: number
  readonly leaseFence: bigint | null
  readonly leaseOwner: string | null
  readonly leaseExpiresAt: Date | null
  readonly availableAt: Date
  readonly lastError: string | null
  readonly createdAt: Date
  readonly updatedAt: Date
  readonly deliveredAt: Date | null
}

/**
 * Which messages {@link Service.list} returns, oldest first, at most `limit` (default 50, clamped
 * to 1 … 1,000): one tenant's (`scope`), one call's (`key`), in these states (`status`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ListQuery {
  readonly scope?: string | undefined
  readonly key?: string | undefined
  readonly status?: ReadonlyArray<MessageStatus> | undefined
  readonly limit?: number | undefined
}

/**
 * The service. Every operation fails with `StoreUnavailable` when the store cannot be reached.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Messages matching a query, oldest first (see {@link ListQuery}). */
  readonly list: (query: ListQuery) => Effect.Effect<ReadonlyArray<OutboxMessage>, StoreUnavailable>
}

/**
 * The outbox service (layers: {@link layerSql}, {@link layerMemory}).
 *
 * @since 0.1.0
 * @category services
 */
export class Outbox extends Context.Service<Outbox, Service>()("@toolgate/runtime/Outbox") {}

/**
 * The SQL outbox over effect's `SqlClient`, in the store's `schema` (default `toolgate`); runs the
 * store's migrations when built. Fails with `StoreUnavailable` or `MigrationError`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSql = (options?: IdempotencyStore.SqlOptions): Layer.Layer<
  Outbox,
  StoreUnavailable | Migrator.MigrationError,
  SqlClient.SqlClient
> => Layer.effect(Outbox, OutboxSql.make(options?.schema ?? IdempotencyStore.defaultSchema))

/**
 * The outbox of the memory store in context (`IdempotencyStore.layerMemory`); dies when the store
 * in context is not the memory store.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<Outbox, never, IdempotencyStore.IdempotencyStore> = Layer.effect(
  Outbox,
  Effect.gen(function*() {
    const store = yield* IdempotencyStore.IdempotencyStore
    const state = OutboxMemory.stateOf(store)
    if (state === undefined) {
      return yield* Effect.die(new Error("Outbox.layerMemory needs IdempotencyStore.layerMemory"))
    }
    return OutboxMemory.service(state)
  })
)
