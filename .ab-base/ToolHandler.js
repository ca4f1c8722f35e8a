import { Schema } from "effect";
/**
 * A handler failure known not to have applied (connection refused, 429/503 answered before any
 * effect). The record is released; a later call may run the handler again, within `maxAttempts`.
 * `detail` is stored (its first 200 characters); keep argument values out of it.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotApplied extends Schema.TaggedError()("NotApplied", {
    detail: Schema.String,
    cause: Schema.optional(Schema.Defect())
}) {
    get message() {
        return `not applied: ${this.detail}`;
    }
}
/**
 * A handler failure after which the downstream may or may not have applied the call (a read
 * timeout or connection reset after the request was sent). The record is parked `unknown`.
 *
 * @since 0.1.0
 * @category errors
 */
export class Ambiguous extends Schema.TaggedError()("Ambiguous", {
    detail: Schema.String,
    cause: Schema.optional(Schema.Defect())
}) {
    get message() {
        return `outcome ambiguous: ${this.detail}`;
    }
}
//# sourceMappingURL=ToolHandler.js.map