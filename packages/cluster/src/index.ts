/**
 * @toolgate/cluster: lead events sharded across runner processes on `effect/cluster` — an entity
 * per lead whose handler runs the agent turn answering the event, the cluster's message and runner
 * storage on the idempotency store's PostgreSQL server, and the HTTP intake that sends events to
 * it.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Intake from "./Intake.js"

/** @since 0.1.0 */
export * as LeadEntity from "./LeadEntity.js"

/** @since 0.1.0 */
export * as LeadEvent from "./LeadEvent.js"

/** @since 0.1.0 */
export * as Runner from "./Runner.js"
