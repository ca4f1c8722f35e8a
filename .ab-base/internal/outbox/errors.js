/**
 * The outbox's error classes, defined once here so the implementations and the public module
 * share them without an import cycle (`Outbox` re-exports them).
 *
 * @internal
 */
import { Schema } from "effect";
/** See `Outbox.MessageLeaseLost`. @internal */
export class MessageLeaseLost extends Schema.TaggedError()("MessageLeaseLost", {
    id: Schema.String,
    leaseFence: Schema.String
}) {
    get message() {
        return `outbox message ${this.id}: lease ${this.leaseFence} lost; nothing was written`;
    }
}
//# sourceMappingURL=errors.js.map