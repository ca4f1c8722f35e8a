/**
 * The outbox's error classes, defined once here so the implementations and the public module
 * share them without an import cycle (`Outbox` re-exports them).
 *
 * @internal
 */
import { Schema } from "effect";
declare const MessageLeaseLost_base: Schema.Class<MessageLeaseLost, Schema.TaggedStruct<"MessageLeaseLost", {
    readonly id: Schema.String;
    readonly leaseFence: Schema.String;
}>, import("effect/Cause").YieldableError>;
/** See `Outbox.MessageLeaseLost`. @internal */
export declare class MessageLeaseLost extends MessageLeaseLost_base {
    get message(): string;
}
export {};
//# sourceMappingURL=errors.d.ts.map