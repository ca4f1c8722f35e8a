/**
 * Follow-up messages of a tool call: what should happen *after* a call's effect is verified (notify
 * the assigned rep, post to Slack, import an offline conversion, emit a domain event). A handler
 * declares them with `followUps` (see `ToolHandler.Handler`); the executor writes them to the
 * store's outbox **in the same statement as the call's `complete`**, fenced like it: a stale
 * worker's completion changes nothing, so its messages are never written. A call that failed, was
 * released or is parked `unknown` writes none; an operator's resolution of an `unknown` call as
 * applied (`Records.resolve`) writes the messages it is given then. `OutboxDispatcher` delivers
 * them, at least once, each with the key {@link deliveryKey} (`<downstream key>:<ordinal>`).
 *
 * @since 0.1.0
 */
import { Schema } from "effect";
/**
 * Where a message goes: a webhook (`POST url`, JSON body, `Idempotency-Key` header) or a named
 * dispatcher the application provides (`OutboxDispatcher.Destinations`), e.g. `"slack"`.
 *
 * @since 0.1.0
 * @category models
 */
export type Destination = {
    readonly _tag: "Webhook";
    readonly url: string;
} | {
    readonly _tag: "Named";
    readonly name: string;
};
/**
 * A follow-up message as a handler declares it.
 *
 * - `destination`: see {@link Destination}.
 * - `payload`: any JSON value; stored as its JSON text and sent byte for byte.
 * - `delayMs`: deliver no earlier than this many ms after the completion (store clock); default 0.
 * - `orderingKey`: messages of one ordering key (e.g. `"lead-0042/slack"`) are delivered one at a
 *   time, in the order they were written: a later one is not attempted before every earlier one is
 *   delivered or dead-lettered. `null` (default): no order.
 *
 * @since 0.1.0
 * @category models
 */
export interface FollowUp {
    readonly destination: Destination;
    readonly payload: unknown;
    readonly delayMs?: number | undefined;
    readonly orderingKey?: string | null | undefined;
}
/** Options of {@link webhook} and {@link named}. @since 0.1.0 @category models */
export interface Options {
    readonly delayMs?: number | undefined;
    readonly orderingKey?: string | null | undefined;
}
/**
 * A follow-up POSTed to `url` (http or https).
 *
 * @since 0.1.0
 * @category constructors
 */
export declare const webhook: (url: string, payload: unknown, options?: Options) => FollowUp;
/**
 * A follow-up handed to the application's dispatcher `name`.
 *
 * @since 0.1.0
 * @category constructors
 */
export declare const named: (name: string, payload: unknown, options?: Options) => FollowUp;
/**
 * At most this many follow-ups per call: 100.
 *
 * @since 0.1.0
 * @category constants
 */
export declare const maxPerCall = 100;
/**
 * Longest delay a follow-up may ask for: 30 days, in ms.
 *
 * @since 0.1.0
 * @category constants
 */
export declare const maxDelayMs: number;
/**
 * The key a message is delivered with (`Idempotency-Key`): the call's downstream key, `:`, the
 * message's ordinal (0, 1, … in the order the handler declared them). Stable across attempts,
 * takeovers and dispatchers, so a receiver that deduplicates on it applies each message once.
 *
 * @since 0.1.0
 * @category keys
 */
export declare const deliveryKey: (downstreamKey: string, ordinal: number) => string;
/**
 * The stored form of a message, as the store writes it: `kind` and `destination` (the URL or the
 * name), the payload's JSON text, the delay in ms, the ordering key, its ordinal and delivery key.
 *
 * @since 0.1.0
 * @category models
 */
export declare const Message: Schema.Struct<{
    readonly ordinal: Schema.Int;
    readonly deliveryKey: Schema.String;
    readonly kind: Schema.Literals<readonly ["webhook", "named"]>;
    readonly destination: Schema.String;
    readonly payload: Schema.String;
    readonly delayMs: Schema.Number;
    readonly orderingKey: Schema.NullOr<Schema.String>;
}>;
/** The type of {@link Message}. @since 0.1.0 @category models */
export type Message = typeof Message.Type;
declare const InvalidFollowUp_base: Schema.Class<InvalidFollowUp, Schema.TaggedStruct<"InvalidFollowUp", {
    readonly ordinal: Schema.NullOr<Schema.Int>;
    readonly reason: Schema.String;
}>, import("effect/Cause").YieldableError>;
/**
 * A declaration the store cannot take: `ordinal` names the follow-up (or `null`: the list), `reason`
 * what is wrong (not JSON, over 256 KiB, a URL that is not http(s), a bad delay, more than
 * {@link maxPerCall}).
 *
 * @since 0.1.0
 * @category errors
 */
export declare class InvalidFollowUp extends InvalidFollowUp_base {
    get message(): string;
}
/**
 * The stored form of a call's follow-ups, numbered in order, or the first declaration the store
 * cannot take.
 *
 * @since 0.1.0
 * @category encoding
 */
export declare const encodeAll: (downstreamKey: string, followUps: ReadonlyArray<FollowUp>) => ReadonlyArray<Message> | InvalidFollowUp;
export {};
//# sourceMappingURL=FollowUp.d.ts.map