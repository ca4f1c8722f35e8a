/**
 * The outbox dispatcher: delivers the follow-up messages the `Outbox` holds, at least once each,
 * with `Idempotency-Key: <downstream key>:<ordinal>` (`FollowUp.deliveryKey`).
 *
 * Each round leases up to `batchSize` due messages (`Outbox.claim`: a lease with its own fencing
 * token, so two dispatchers never own one message), delivers them (`concurrency` at once; messages
 * of one ordering key are never leased together), and settles each with a fenced write:
 *
 * - a webhook is POSTed the payload's JSON text; 2xx is delivered; 408, 425, 429, 5xx, a refused or
 *   cut connection and a timeout (`deliveryTimeoutMs`) are retried; any other answer is permanent
 *   and dead-letters the message at once;
 * - a named destination is the application's function (`Destinations`); its `DeliveryFailed`
 *   says whether to retry; a name with no function is retried (another worker may have it);
 * - a retry is due again after a "full jitter" delay (uniform in 0 … min(`retryMaxMs`,
 *   `retryBaseMs` · 2^(attempt − 1)), AWS Architecture Blog, "Exponential Backoff And Jitter");
 *   the `maxAttempts`-th failure dead-letters it.
 *
 * Between rounds it waits for a wake-up (`wakeups`: `LISTEN` on the PostgreSQL server, see
 * {@link pgWakeups}; the completion's statement notifies at commit) or `pollMs`, whichever comes
 * first, so delayed messages and the leases of dead dispatchers are picked up without one.
 *
 * What is guaranteed: a message is delivered at least once unless dead-lettered; a receiver that
 * deduplicates on the delivery key applies it exactly once (a dispatcher killed after the
 * receiver answered, before its settlement, delivers it again once the lease expires). Messages of
 * one ordering key are delivered in the order they were written, one at a time (a later one waits
 * for every earlier one to be delivered or dead-lettered). Not guaranteed: any order between
 * messages of different keys or without one, nor between messages of one key written by
 * completions that commit concurrently (their order is that of their writes, not their commits).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Queue, Schema } from "effect";
import * as HttpClient from "effect/http/HttpClient";
import type { StoreUnavailable } from "./ExecutionError.js";
import * as Outbox from "./Outbox.js";
declare const DeliveryFailed_base: Schema.Class<DeliveryFailed, Schema.TaggedStruct<"DeliveryFailed", {
    readonly deliveryKey: Schema.String;
    readonly reason: Schema.Literals<readonly ["status", "connection", "timeout", "destination"]>;
    readonly status: Schema.NullOr<Schema.Number>;
    readonly retryable: Schema.Boolean;
    readonly detail: Schema.String;
}>, import("effect/Cause").YieldableError>;
/**
 * A delivery attempt that did not get through: `reason` (`status`: the destination answered
 * `status`; `connection`: refused or cut; `timeout`; `destination`: no function for a named
 * destination, or the function's own failure), whether to try again (`retryable`), and a short
 * `detail` (never the payload).
 *
 * @since 0.1.0
 * @category errors
 */
export declare class DeliveryFailed extends DeliveryFailed_base {
    get message(): string;
}
declare const InvalidDispatcherOptions_base: Schema.Class<InvalidDispatcherOptions, Schema.TaggedStruct<"InvalidDispatcherOptions", {
    readonly option: Schema.String;
    readonly value: Schema.String;
    readonly rule: Schema.String;
}>, import("effect/Cause").YieldableError>;
/**
 * A dispatcher option out of its range: `option` names it, `rule` says what it must be.
 *
 * @since 0.1.0
 * @category errors
 */
export declare class InvalidDispatcherOptions extends InvalidDispatcherOptions_base {
    get message(): string;
}
/**
 * What a named destination's function receives: the message (its `deliveryKey` is the key to
 * deduplicate on; `payload` the JSON text as written; `attempts` counts this one).
 *
 * @since 0.1.0
 * @category models
 */
export interface Delivery {
    readonly deliveryKey: string;
    readonly payload: string;
    readonly attempt: number;
    readonly message: Outbox.OutboxMessage;
}
/**
 * A named destination: delivers one message, or fails with `DeliveryFailed`.
 *
 * @since 0.1.0
 * @category models
 */
export type Destination = (delivery: Delivery) => Effect.Effect<void, DeliveryFailed>;
declare const Destinations_base: Context.ServiceClass<Destinations, "@toolgate/runtime/OutboxDispatcher/Destinations", ReadonlyMap<string, Destination>>;
/**
 * The application's named destinations (`FollowUp.named(name, …)`), by name.
 *
 * @since 0.1.0
 * @category services
 */
export declare class Destinations extends Destinations_base {
}
/**
 * The named destinations from a record of functions (`{ slack: (delivery) => …, ads: … }`).
 *
 * @since 0.1.0
 * @category layers
 */
export declare const layerDestinations: (destinations: Readonly<Record<string, Destination>>) => Layer.Layer<Destinations>;
/**
 * Dispatcher options (durations in ms; `make` checks each and fails with
 * `InvalidDispatcherOptions` naming the first one out of range):
 *
 * - `owner`: this dispatcher's name on its leases (default a random one).
 * - `leaseMs` (30,000; > `deliveryTimeoutMs`): how long a leased message is this dispatcher's.
 * - `deliveryTimeoutMs` (10,000; > 0): one attempt's bound.
 * - `batchSize` (16; 1 … 1,000): messages leased per round; `concurrency` (4; ≥ 1) delivered at once.
 * - `maxAttempts` (8; ≥ 1): attempts before a message is dead-lettered.
 * - `retryBaseMs` (500; ≥ 0), `retryMaxMs` (60,000; ≥ `retryBaseMs`): the jittered backoff.
 * - `pollMs` (1,000; > 0): the longest wait between rounds.
 * - `wakeups`: a queue whose items end the wait early (see {@link pgWakeups}).
 * - `onRound`: called with each round that leased messages (progress, a report).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
    readonly owner?: string | undefined;
    readonly leaseMs?: number | undefined;
    readonly deliveryTimeoutMs?: number | undefined;
    readonly batchSize?: number | undefined;
    readonly concurrency?: number | undefined;
    readonly maxAttempts?: number | undefined;
    readonly retryBaseMs?: number | undefined;
    readonly retryMaxMs?: number | undefined;
    readonly pollMs?: number | undefined;
    readonly wakeups?: Queue.Dequeue<unknown, unknown> | undefined;
    readonly onRound?: ((round: Round) => Effect.Effect<void>) | undefined;
}
/**
 * What one round did: messages leased, delivered, put back for a retry, dead-lettered, and
 * settlements fenced off.
 *
 * @since 0.1.0
 * @category models
 */
export interface Round {
    readonly leased: number;
    readonly delivered: number;
    readonly retried: number;
    readonly deadLettered: number;
    readonly leaseLost: number;
}
/**
 * A dispatcher.
 *
 * - `round`: one lease-deliver-settle round.
 * - `drain`: rounds until one leases nothing (messages delayed or leased elsewhere stay); returns
 *   their sum.
 * - `run`: rounds for ever, waiting between them (wake-up or `pollMs`); a round in progress when
 *   `stop` completes is finished first (its deliveries settled), then `run` returns. A store
 *   that cannot be reached is waited out (`pollMs`), never fatal.
 *
 * @since 0.1.0
 * @category models
 */
export interface Dispatcher {
    readonly round: Effect.Effect<Round, StoreUnavailable>;
    readonly drain: Effect.Effect<Round, StoreUnavailable>;
    readonly run: (options?: {
        readonly stop?: Effect.Effect<void> | undefined;
    }) => Effect.Effect<void>;
}
/**
 * A dispatcher over the `Outbox` in context, POSTing webhooks with the `HttpClient` in context and
 * handing named destinations to `Destinations` (optional: none by default).
 *
 * @since 0.1.0
 * @category constructors
 */
export declare const make: (options?: Options | undefined) => Effect.Effect<Dispatcher, InvalidDispatcherOptions, Outbox.Outbox | HttpClient.HttpClient>;
/**
 * Wake-ups from the PostgreSQL server: `LISTEN`s on the outbox's channel for `schema` (the
 * statement that writes follow-ups notifies it at commit) and returns the queue of its
 * notifications, for {@link Options.wakeups}. The listener holds a connection until the scope
 * closes. (PGlite serves no notifications across connections: poll there.)
 *
 * @since 0.1.0
 * @category constructors
 */
export { pgWakeups } from "./internal/outbox/wakeups.js";
//# sourceMappingURL=OutboxDispatcher.d.ts.map