/**
 * A lead event: something a lead did that an SDR agent answers with one turn — a form submission,
 * a chat message or an inbound email — for one tenant's lead, with the event's own id and the time
 * it happened. It is the message a lead's entity receives (`LeadEntity`), and what the intake
 * accepts (`Intake`).
 *
 * Identity. The entity address is `tenant/leadId` (one lead's events serialize on one runner); the
 * cluster's primary key of the message is the event id, so a second send of the same event (a
 * browser that resubmits the form, a client retry, a webhook delivered twice) is the same message
 * in the cluster's message storage, answered once. The agent turn's scope is
 * `{ tenant, turn: leadId/eventId, eventTime }`: a redelivery (a runner that died mid-turn) replays
 * the journaled steps and the recorded calls.
 *
 * An event sent without an id gets one derived from its content ({@link deriveEventId}): the same
 * tenant, lead, time and payload give the same id, which is what a resubmitted form sends.
 *
 * @since 0.1.0
 */
import canonicalizeJson from "canonicalize"
import * as Effect from "effect/Effect"
import * as PrimaryKey from "effect/PrimaryKey"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"

/**
 * An identifier of a tenant, a lead or an event: 1 to 200 characters of `A–Z a–z 0–9 . _ : @ -`
 * (no `/`: it separates tenant and lead in the entity address).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Id = Schema.String.check(Schema.isPattern(/^[A-Za-z0-9._:@-]{1,200}$/))

/** An instant written with its offset (`2024-05-01T10:59:59.9Z`, `…+02:00`), never a local time. */
const instant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/i

/**
 * When the event happened: an ISO 8601 instant with its offset (`2026-12-02T11:59:59.900Z`).
 * Window-keyed tools take their window from it, so a redelivery lands in the same window.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EventTime = Schema.String.check(
  Schema.makeFilter((s) =>
    instant.test(s) && !Number.isNaN(new Date(s).getTime()) ? undefined : "an ISO 8601 instant with its offset"
  )
)

/**
 * A form submission: the form's fields as the browser sent them.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FormSubmission = Schema.TaggedStruct("form_submission", {
  form: Schema.String,
  fields: Schema.Record(Schema.String, Schema.String)
})

/**
 * A chat message the lead typed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatMessage = Schema.TaggedStruct("chat_message", {
  text: Schema.String
})

/**
 * An inbound email from the lead.
 *
 * @since 0.1.0
 * @category schemas
 */
export const InboundEmail = Schema.TaggedStruct("inbound_email", {
  from: Schema.String,
  subject: Schema.String,
  body: Schema.String
})

/**
 * What the lead did: one of the three kinds, tagged by `_tag`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Payload = Schema.Union([FormSubmission, ChatMessage, InboundEmail])

/**
 * The type of {@link Payload}.
 *
 * @since 0.1.0
 * @category models
 */
export type Payload = typeof Payload.Type

/**
 * A lead event. Its cluster primary key is `eventId` (see the module docs).
 *
 * @since 0.1.0
 * @category schemas
 */
export class LeadEvent extends Schema.Class<LeadEvent>("@toolgate/cluster/LeadEvent")({
  tenant: Id,
  leadId: Id,
  eventId: Id,
  eventTime: EventTime,
  payload: Payload
}) {
  [PrimaryKey.symbol](): string {
    return this.eventId
  }
}

/**
 * What the intake accepts: a lead event whose `eventId` may be left out (it is then derived from
 * the content, {@link deriveEventId}).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Submission = Schema.Struct({
  tenant: Id,
  leadId: Id,
  eventId: Schema.optionalKey(Id),
  eventTime: EventTime,
  payload: Payload
})

/**
 * The type of {@link Submission}.
 *
 * @since 0.1.0
 * @category models
 */
export type Submission = typeof Submission.Type

/**
 * The id of an event sent without one: `ev_` and the first 32 hex digits of the SHA-256 of the
 * RFC 8785 canonical JSON of `[tenant, leadId, eventTime, payload]`. Equal content (a form the
 * browser submits again) gives the same id, whatever the order of the fields.
 *
 * @since 0.1.0
 * @category identity
 */
export const deriveEventId = (submission: Omit<Submission, "eventId">): string => {
  const text = canonicalizeJson([submission.tenant, submission.leadId, submission.eventTime, submission.payload])!
  return `ev_${createHash("sha256").update(text).digest("hex").slice(0, 32)}`
}

/**
 * The lead event of a submission: its `eventId`, or the derived one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromSubmission = (submission: Submission): LeadEvent =>
  new LeadEvent({
    tenant: submission.tenant,
    leadId: submission.leadId,
    eventId: submission.eventId ?? deriveEventId(submission),
    eventTime: submission.eventTime,
    payload: submission.payload
  })

/**
 * Decodes an unknown value (a parsed JSON body) as a submission and returns its lead event; fails
 * with the `SchemaError` (its `message` says what and where).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (input: unknown): Effect.Effect<LeadEvent, Schema.SchemaError> =>
  Effect.map(Schema.decodeUnknownEffect(Submission)(input), fromSubmission)

/**
 * The entity id of the event's lead: `tenant/leadId`.
 *
 * @since 0.1.0
 * @category identity
 */
export const entityId = (event: { readonly tenant: string; readonly leadId: string }): string =>
  `${event.tenant}/${event.leadId}`

/**
 * The agent turn's scope for the event: `{ tenant, turn: "leadId/eventId", eventTime }`.
 *
 * @since 0.1.0
 * @category identity
 */
export const scopeOf = (event: LeadEvent) => ({
  tenant: event.tenant,
  turn: `${event.leadId}/${event.eventId}`,
  eventTime: new Date(event.eventTime)
})
