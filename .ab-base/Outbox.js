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
import { Context, Effect, Layer, Schema } from "effect";
import * as IdempotencyStore from "./IdempotencyStore.js";
import * as Errors from "./internal/outbox/errors.js";
import * as OutboxMemory from "./internal/outbox/memory.js";
import * as OutboxSql from "./internal/outbox/sql.js";
/**
 * A message's delivery state (see the module's description).
 *
 * @since 0.1.0
 * @category models
 */
export const MessageStatus = Schema.Literals(["pending", "delivering", "delivered", "dead"]);
/**
 * A settlement was fenced off: another dispatcher leased the message after this one's lease
 * expired (or it was settled already). Nothing was written; the message may have been delivered
 * twice, which its delivery key lets the receiver absorb.
 *
 * @since 0.1.0
 * @category errors
 */
export const MessageLeaseLost = Errors.MessageLeaseLost;
/**
 * The outbox service (layers: {@link layerSql}, {@link layerMemory}).
 *
 * @since 0.1.0
 * @category services
 */
export class Outbox extends Context.Service()("@toolgate/runtime/Outbox") {
}
/**
 * The SQL outbox over effect's `SqlClient`, in the store's `schema` (default `toolgate`); runs the
 * store's migrations when built. Fails with `StoreUnavailable` or `MigrationError`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSql = (options) => Layer.effect(Outbox, OutboxSql.make(options?.schema ?? IdempotencyStore.defaultSchema));
/**
 * The outbox of the memory store in context (`IdempotencyStore.layerMemory`); dies when the store
 * in context is not the memory store.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = Layer.effect(Outbox, Effect.gen(function* () {
    const store = yield* IdempotencyStore.IdempotencyStore;
    const state = OutboxMemory.stateOf(store);
    if (state === undefined) {
        return yield* Effect.die(new Error("Outbox.layerMemory needs IdempotencyStore.layerMemory"));
    }
    return OutboxMemory.service(state);
}));
//# sourceMappingURL=Outbox.js.map