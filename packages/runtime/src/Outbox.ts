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
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { Migrator, SqlClient } from "effect/sql"
import type { StoreUnavailable } from "./ExecutionError.js"
import * as IdempotencyStore from "./IdempotencyStore.js"
import * as Errors from "./internal/outbox/errors.js"
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
 * A leased message's identity: its `id` and the `leaseFence` its dispatcher holds.
 *
 * @since 0.1.0
 * @category models
 */
export interface MessageRef {
  readonly id: bigint
  readonly leaseFence: bigint
}

/**
 * How a delivery attempt ends: `Delivered`; `Retry` (back to `pending`, due again in `delayMs`
 * ms, `error` kept as `lastError`); `Dead` (dead-lettered: never attempted again, `error` kept).
 *
 * @since 0.1.0
 * @category models
 */
export type Settlement =
  | { readonly _tag: "Delivered" }
  | { readonly _tag: "Retry"; readonly error: string; readonly delayMs: number }
  | { readonly _tag: "Dead"; readonly error: string }

/**
 * A lease request: `owner` (diagnostics), `leaseMs` (how long the messages are this dispatcher's,
 * ms, > 0), `limit` (at most this many messages, 1 … 1,000), `now` (the store clock's reading to
 * use instead of its own: tests).
 *
 * @since 0.1.0
 * @category models
 */
export interface ClaimRequest {
  readonly owner: string
  readonly leaseMs: number
  readonly limit: number
  readonly now?: Date | undefined
}

/**
 * A settlement was fenced off: another dispatcher leased the message after this one's lease
 * expired (or it was settled already). Nothing was written; the message may have been delivered
 * twice, which its delivery key lets the receiver absorb.
 *
 * @since 0.1.0
 * @category errors
 */
export const MessageLeaseLost = Errors.MessageLeaseLost

/** The type of {@link MessageLeaseLost}. @since 0.1.0 @category errors */
export type MessageLeaseLost = Errors.MessageLeaseLost

/**
 * The service. Every operation fails with `StoreUnavailable` when the store cannot be reached.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Leases due messages to one dispatcher, oldest first, each with a fresh `leaseFence` (from the
   * store's fence sequence) and `attempts` + 1. Due: `pending` and available, or `delivering` with
   * an expired lease; a message with an ordering key only when no earlier message of its key is
   * `pending` or `delivering`. Of concurrent claims, each message goes to at most one.
   */
  readonly claim: (request: ClaimRequest) => Effect.Effect<ReadonlyArray<OutboxMessage>, StoreUnavailable>
  /**
   * Settles a leased message (fenced by `leaseFence`: `MessageLeaseLost` when another lease
   * replaced it); returns the delivery latency, ms from its writing to now (store clock).
   */
  readonly settle: (
    ref: MessageRef,
    settlement: Settlement,
    options?: { readonly now?: Date | undefined }
  ) => Effect.Effect<{ readonly latencyMs: number }, MessageLeaseLost | StoreUnavailable>
  /** How many messages are in each state. */
  readonly counts: () => Effect.Effect<Readonly<Record<MessageStatus, number>>, StoreUnavailable>
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
