/**
 * The intake: a small HTTP endpoint (effect's `HttpRouter`) that accepts lead events and sends each
 * to its lead's entity in the cluster.
 *
 * `POST /lead-events` with a JSON body ({@link LeadEvent.Submission}: `tenant`, `leadId`,
 * optional `eventId`, `eventTime`, `payload`):
 *
 * - `202 {"eventId","entityId","status":"accepted"}` once the cluster has persisted the message
 *   (a runner will answer it, a later one if its runner dies); a second submission of the same
 *   event is accepted again and is the same message;
 * - with `?wait=true`, the answer instead: `200 {"eventId","entityId","status":"answered","answer"}`,
 *   or `200 {…,"status":"failed","failure"}` (a `TurnFailed`: the turn was rejected; a second
 *   submission gets the same reply, not a second turn);
 * - `400 {"_tag":"InvalidLeadEvent","message"}` for a body that is not JSON or not a lead event
 *   (the message on one line says what and where);
 * - `503 {"_tag":"ClusterUnavailable","message"}` when the cluster did not take the message (its
 *   storage failed, or no runner took the shard); the client may send it again.
 *
 * @since 0.1.0
 */
import type { Sharding } from "effect/cluster"
import * as Effect from "effect/Effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as LeadEntity from "./LeadEntity.js"
import * as LeadEvent from "./LeadEvent.js"

/**
 * A body that is not a lead event: `message` says why, on one line.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidLeadEvent extends Schema.TaggedError<InvalidLeadEvent>()("InvalidLeadEvent", {
  message: Schema.String
}) {}

/**
 * The cluster did not take the message (`reason`: the cluster error's tag and message).
 *
 * @since 0.1.0
 * @category errors
 */
export class ClusterUnavailable extends Schema.TaggedError<ClusterUnavailable>()("ClusterUnavailable", {
  message: Schema.String
}) {}

/**
 * The path the intake listens on.
 *
 * @since 0.1.0
 * @category routes
 */
export const path = "/lead-events"

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, "; ")

const error = (status: number, e: InvalidLeadEvent | ClusterUnavailable) =>
  HttpServerResponse.jsonUnsafe({ _tag: e._tag, message: e.message }, { status })

/**
 * The intake's route, sending with the `Sharding` in context (a runner's, or a client's:
 * `Runner.layerClient`).
 *
 * @since 0.1.0
 * @category routes
 */
export const layer: Layer.Layer<never, never, HttpRouter.HttpRouter | Sharding.Sharding> = Layer.unwrap(
  Effect.gen(function*() {
    const clientFor = yield* LeadEntity.Lead.client
    return HttpRouter.add("POST", path, (request) =>
      Effect.gen(function*() {
        const body = yield* request.json.pipe(
          Effect.mapError(() => new InvalidLeadEvent({ message: "the body is not JSON" }))
        )
        const event = yield* LeadEvent.decode(body).pipe(
          Effect.mapError((e) => new InvalidLeadEvent({ message: `not a lead event: ${oneLine(e.message)}` }))
        )
        const entityId = LeadEvent.entityId(event)
        const client = clientFor(entityId)
        const wait = new URL(request.url, "http://intake").searchParams.get("wait") === "true"
        const unavailable = (e: { readonly _tag: string; readonly message: string }) =>
          new ClusterUnavailable({ message: `${e._tag}: ${oneLine(e.message)}` })
        const head = { eventId: event.eventId, entityId }
        if (!wait) {
          yield* client.Handle(event, { discard: true }).pipe(Effect.mapError(unavailable))
          return HttpServerResponse.jsonUnsafe({ ...head, status: "accepted" }, { status: 202 })
        }
        return yield* client.Handle(event).pipe(
          Effect.map((answer) => HttpServerResponse.jsonUnsafe({ ...head, status: "answered", answer })),
          Effect.catchTag("TurnFailed", (failure) =>
            Effect.succeed(HttpServerResponse.jsonUnsafe({
              ...head,
              status: "failed",
              failure: { ...Schema.encodeSync(LeadEntity.TurnFailed)(failure), message: failure.message }
            }))),
          Effect.mapError(unavailable)
        )
      }).pipe(
        Effect.catchTags({
          InvalidLeadEvent: (e) => Effect.succeed(error(400, e)),
          ClusterUnavailable: (e) => Effect.succeed(error(503, e))
        })
      ))
  })
)
