/**
 * @toolgate/runtime: services and layers on core's interfaces that execute released tool calls
 * exactly once — the SQL-backed idempotency store (PostgreSQL or embedded PGlite) and its
 * operator calls, the tool executor, the HTTP webhook handler, the turn pipeline, the agent loop and
 * its step journal, their typed errors and metrics.
 *
 * @since 0.1.0
 */
/** @since 0.1.0 */
export * as Agent from "./Agent.js";
/** @since 0.1.0 */
export * as EmbeddedPostgres from "./EmbeddedPostgres.js";
/** @since 0.1.0 */
export * as ExecutionError from "./ExecutionError.js";
/** @since 0.1.0 */
export * as ExecutionMetrics from "./ExecutionMetrics.js";
/** @since 0.1.0 */
export * as IdempotencyStore from "./IdempotencyStore.js";
/** @since 0.1.0 */
export * as Records from "./Records.js";
/** @since 0.1.0 */
export * as StepJournal from "./StepJournal.js";
/** @since 0.1.0 */
export * as StoredError from "./StoredError.js";
/** @since 0.1.0 */
export * as ToolExecutor from "./ToolExecutor.js";
/** @since 0.1.0 */
export * as ToolHandler from "./ToolHandler.js";
/** @since 0.1.0 */
export * as ToolCallPipeline from "./ToolCallPipeline.js";
/** @since 0.1.0 */
export * as FollowUp from "./FollowUp.js";
export * as Outbox from "./Outbox.js";
export * as OutboxDispatcher from "./OutboxDispatcher.js";
export * as OutboxMetrics from "./OutboxMetrics.js";
export * as WebhookHandler from "./WebhookHandler.js";
//# sourceMappingURL=index.d.ts.map