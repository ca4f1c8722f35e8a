/**
 * The outbox's error classes, defined once here so the implementations and the public module
 * share them without an import cycle (`Outbox` re-exports them).
 *
 * @internal
 */
import * as Schema from "effect/Schema"

/** See `Outbox.MessageLeaseLost`. @internal */
export class MessageLeaseLost extends Schema.TaggedError<MessageLeaseLost>()("MessageLeaseLost", {
  id: Schema.String,
  leaseFence: Schema.String
}) {
  override get message(): string {
    return `outbox message ${this.id}: lease ${this.leaseFence} lost; nothing was written`
  }
}
