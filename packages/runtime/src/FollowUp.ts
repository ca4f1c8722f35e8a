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
import * as Schema from "effect/Schema"
import { maxStoredBytes } from "./internal/storeRules.js"

/**
 * Where a message goes: a webhook (`POST url`, JSON body, `Idempotency-Key` header) or a named
 * dispatcher the application provides (`OutboxDispatcher.Destinations`), e.g. `"slack"`.
 *
 * @since 0.1.0
 * @category models
 */
export type Destination =
  | { readonly _tag: "Webhook"; readonly url: string }
  | { readonly _tag: "Named"; readonly name: string }

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
  readonly destination: Destination
  readonly payload: unknown
  readonly delayMs?: number | undefined
  readonly orderingKey?: string | null | undefined
}

/** Options of {@link webhook} and {@link named}. @since 0.1.0 @category models */
export interface Options {
  readonly delayMs?: number | undefined
  readonly orderingKey?: string | null | undefined
}

/**
 * A follow-up POSTed to `url` (http or https).
 *
 * @since 0.1.0
 * @category constructors
 */
export const webhook = (url: string, payload: unknown, options?: Options): FollowUp => ({
  destination: { _tag: "Webhook", url },
  payload,
  delayMs: options?.delayMs,
  orderingKey: options?.orderingKey
})

/**
 * A follow-up handed to the application's dispatcher `name`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const named = (name: string, payload: unknown, options?: Options): FollowUp => ({
  destination: { _tag: "Named", name },
  payload,
  delayMs: options?.delayMs,
  orderingKey: options?.orderingKey
})

/**
 * At most this many follow-ups per call: 100.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxPerCall = 100

/**
 * Longest delay a follow-up may ask for: 30 days, in ms.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxDelayMs = 30 * 24 * 60 * 60 * 1000

/**
 * The key a message is delivered with (`Idempotency-Key`): the call's downstream key, `:`, the
 * message's ordinal (0, 1, … in the order the handler declared them). Stable across attempts,
 * takeovers and dispatchers, so a receiver that deduplicates on it applies each message once.
 *
 * @since 0.1.0
 * @category keys
 */
export const deliveryKey = (downstreamKey: string, ordinal: number): string => `${downstreamKey}:${ordinal}`

/**
 * The stored form of a message, as the store writes it: `kind` and `destination` (the URL or the
 * name), the payload's JSON text, the delay in ms, the ordering key, its ordinal and delivery key.
 *
 * @since 0.1.0
 * @category models
 */
export const Message = Schema.Struct({
  ordinal: Schema.Int,
  deliveryKey: Schema.String,
  kind: Schema.Literals(["webhook", "named"]),
  destination: Schema.String,
  payload: Schema.String,
  delayMs: Schema.Number,
  orderingKey: Schema.NullOr(Schema.String)
})

/** The type of {@link Message}. @since 0.1.0 @category models */
export type Message = typeof Message.Type

/**
 * A declaration the store cannot take: `ordinal` names the follow-up (or `null`: the list), `reason`
 * what is wrong (not JSON, over 256 KiB, a URL that is not http(s), a bad delay, more than
 * {@link maxPerCall}).
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidFollowUp extends Schema.TaggedError<InvalidFollowUp>()("InvalidFollowUp", {
  ordinal: Schema.NullOr(Schema.Int),
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.ordinal === null ? "follow-ups" : `follow-up ${this.ordinal}`}: ${this.reason}`
  }
}

const checkOne = (followUp: FollowUp, ordinal: number, downstreamKey: string): Message | InvalidFollowUp => {
  const invalid = (reason: string) => new InvalidFollowUp({ ordinal, reason })
  const { destination } = followUp
  let kind: Message["kind"]
  let target: string
  if (destination._tag === "Webhook") {
    let url: URL
    try {
      url = new URL(destination.url)
    } catch {
      return invalid("the webhook URL does not parse")
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return invalid("the webhook URL is not http(s)")
    kind = "webhook"
    target = destination.url
  } else {
    if (destination.name.length === 0 || destination.name.length > 200) {
      return invalid("a dispatcher name is 1 to 200 characters")
    }
    kind = "named"
    target = destination.name
  }
  let payload: string | undefined
  try {
    payload = JSON.stringify(followUp.payload)
  } catch {
    payload = undefined
  }
  if (payload === undefined) return invalid("the payload is not JSON")
  if (Buffer.byteLength(payload, "utf8") > maxStoredBytes) return invalid(`the payload is over ${maxStoredBytes} bytes`)
  const delayMs = followUp.delayMs ?? 0
  if (!Number.isFinite(delayMs) || delayMs < 0 || delayMs > maxDelayMs) {
    return invalid(`the delay is not a number of ms from 0 to ${maxDelayMs}`)
  }
  const orderingKey = followUp.orderingKey ?? null
  if (orderingKey !== null && (orderingKey.length === 0 || orderingKey.length > 500)) {
    return invalid("an ordering key is 1 to 500 characters")
  }
  return {
    ordinal,
    deliveryKey: deliveryKey(downstreamKey, ordinal),
    kind,
    destination: target,
    payload,
    delayMs,
    orderingKey
  }
}

/**
 * The stored form of a call's follow-ups, numbered in order, or the first declaration the store
 * cannot take.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeAll = (
  downstreamKey: string,
  followUps: ReadonlyArray<FollowUp>
): ReadonlyArray<Message> | InvalidFollowUp => {
  if (followUps.length > maxPerCall) {
    return new InvalidFollowUp({ ordinal: null, reason: `more than ${maxPerCall} follow-ups` })
  }
  const messages: Array<Message> = []
  for (let i = 0; i < followUps.length; i++) {
    const checked = checkOne(followUps[i], i, downstreamKey)
    if (checked instanceof InvalidFollowUp) return checked
    messages.push(checked)
  }
  return messages
}
