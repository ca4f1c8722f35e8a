/**
 * The step journal: what the model decided at each step of an agent turn, recorded before any of
 * that step's calls runs, so a redelivered or resumed turn replays its decisions instead of asking
 * the model again (a model asked again decides again: fresh ids, often other arguments, and the
 * duplicate mutation is back).
 *
 * One record per (tenant, turn, step). A step is claimed like a call in the `IdempotencyStore`:
 *
 * - `claim` is one statement, an insert-or-take-over that wins a lease with a fencing token from
 *   the store's monotonic sequence, or returns the record that prevents it: a recorded step (its
 *   output, to replay), a live lease elsewhere (wait), or a record written for another request of
 *   the turn (`fingerprint` differs: `JournalMismatch` for the caller). A `released` step and an
 *   expired lease are taken over; a claim by the same `owner` resumes its own lease (a claim whose
 *   response was lost is retried safely).
 * - `record` (the step's completed output) and `release` (the model request failed: nothing was
 *   decided) are fenced: a worker whose lease was taken over changes nothing (`StepLeaseLost`), so
 *   a stale worker's output is never recorded. A fenced write whose response was lost is confirmed
 *   on retry (the record holds exactly this write under the same fence).
 * - `heartbeat` extends the lease while the model streams.
 *
 * Time decisions use the store's clock (the database's `now()`; the memory journal's `Clock`);
 * every operation takes an optional `now` for tests. Records are kept for the retention given at
 * `claim` and `record`; `purge` deletes a turn's steps together, once every step of the turn is
 * settled (recorded or released, or a lease abandoned) and past its retention, so a turn is never
 * half forgotten (use the retention of the idempotency records: a turn whose steps are gone is
 * asked again, and only the idempotency records keep its calls from running twice).
 *
 * The SQL journal shares the `IdempotencyStore`'s `SqlClient`, schema, fence sequence and
 * migrations (`4_step_journal`); the memory journal has the same semantics, and one conformance
 * suite (`packages/runtime/test/stepJournalConformance.ts`) runs against memory, PGlite and the
 * PostgreSQL server.
 *
 * @since 0.1.0
 */
import { StreamEvent } from "@toolgate/core";
import { Context, Layer, Schema } from "effect";
import { defaultSchema } from "./IdempotencyStore.js";
import * as MemoryJournal from "./internal/stepJournalMemory.js";
import * as SqlJournal from "./internal/stepJournalSql.js";
import * as Rules from "./internal/storeRules.js";
/**
 * Step states: `in_progress` (leased to a worker asking the model), `recorded` (the output is
 * kept and replayed), `released` (the model request failed; nothing was decided; claimable again).
 *
 * @since 0.1.0
 * @category models
 */
export const Status = Schema.Literals(["in_progress", "recorded", "released"]);
/**
 * A validated call of a recorded step: its index, the provider's tool-call id (`null` when the
 * provider sent none), the tool's name and its arguments' JSON text exactly as the model sent it.
 *
 * @since 0.1.0
 * @category models
 */
export const StepCall = Schema.Struct({
    index: Schema.Int,
    id: Schema.NullOr(Schema.String),
    name: Schema.String,
    argumentsText: Schema.String
});
/**
 * A step's completed model output: its text, its validated calls, the raw finish reason, the
 * usage the provider reported (`null` when none), and how many stream requests it took
 * (`attempts`, retries included).
 *
 * @since 0.1.0
 * @category models
 */
export const StepOutput = Schema.Struct({
    text: Schema.String,
    calls: Schema.Array(StepCall),
    finishReason: Schema.NullOr(Schema.String),
    usage: Schema.NullOr(StreamEvent.Usage),
    attempts: Schema.Int
});
/**
 * A fenced write of a step found another fence or state: another worker took the step over after
 * this worker's lease expired. Nothing was written.
 *
 * @since 0.1.0
 * @category errors
 */
export class StepLeaseLost extends Schema.TaggedError()("StepLeaseLost", {
    turn: Schema.String,
    step: Schema.Int,
    /** The fence this worker held, as a decimal string. */
    fence: Schema.String,
    operation: Schema.Literals(["record", "release", "heartbeat"])
}) {
    get message() {
        return `lease on step ${this.step} of turn ${JSON.stringify(this.turn)} lost on ${this.operation} (held fence ${this.fence}); nothing was written`;
    }
}
/**
 * Another worker holds the step's lease (it is asking the model) and did not record the step
 * within the bounded wait. Safe to retry later.
 *
 * @since 0.1.0
 * @category errors
 */
export class StepInProgress extends Schema.TaggedError()("StepInProgress", {
    turn: Schema.String,
    step: Schema.Int,
    /** Milliseconds until the holder's lease expires, by the store's clock. */
    retryAfterMs: Schema.Number,
    /** Milliseconds this worker waited. */
    waitedMs: Schema.Number
}) {
    get message() {
        return `step ${this.step} of turn ${JSON.stringify(this.turn)} is being asked elsewhere; waited ${Math.round(this.waitedMs)} ms, lease ends in ${Math.round(this.retryAfterMs)} ms`;
    }
}
/**
 * The turn's journal was written for another request (another prompt under the same scope): its
 * decisions are never replayed for this one, and the model is not asked either. Usually a scope
 * reused for a different business event.
 *
 * @since 0.1.0
 * @category errors
 */
export class JournalMismatch extends Schema.TaggedError()("JournalMismatch", {
    turn: Schema.String,
    step: Schema.Int,
    storedFingerprint: Schema.String,
    fingerprint: Schema.String
}) {
    get message() {
        return `step ${this.step} of turn ${JSON.stringify(this.turn)} was journaled for another request (${this.storedFingerprint} ≠ ${this.fingerprint})`;
    }
}
/**
 * A step's output is larger than the journal keeps ({@link maxOutputBytes}); it is not recorded,
 * and none of its calls runs.
 *
 * @since 0.1.0
 * @category errors
 */
export class StepOutputTooLarge extends Schema.TaggedError()("StepOutputTooLarge", {
    turn: Schema.String,
    step: Schema.Int,
    /** UTF-8 bytes of the output's JSON text. */
    bytes: Schema.Int,
    maxBytes: Schema.Int
}) {
    get message() {
        return `the output of step ${this.step} of turn ${JSON.stringify(this.turn)} is ${this.bytes} bytes, over the journal's ${this.maxBytes}-byte limit`;
    }
}
/**
 * A journal operation was called with a value no record may hold (a step below 1, a lease of 0 ms
 * or less, a negative retention). Nothing was read or written.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidStepRequest extends Schema.TaggedError()("InvalidStepRequest", {
    turn: Schema.String,
    step: Schema.Number,
    operation: Schema.Literals(["claim", "heartbeat"]),
    field: Schema.Literals(["step", "leaseMs", "retentionMs"]),
    value: Schema.String,
    rule: Schema.String
}) {
    get message() {
        return `invalid ${this.operation} of step ${this.step} of turn ${JSON.stringify(this.turn)}: ${this.field} = ${this.value}, must be ${this.rule}`;
    }
}
/**
 * Largest output the journal keeps, in UTF-8 bytes of its JSON text: 8 MiB (8,388,608), also a
 * CHECK in SQL. (A step's calls are each bounded by the assembler's arguments limit, 1 MiB by
 * default.)
 *
 * @since 0.1.0
 * @category constants
 */
export const maxOutputBytes = Rules.maxStepOutputBytes;
/**
 * The step journal service (layers: {@link layerSql}, {@link layerMemory}).
 *
 * @since 0.1.0
 * @category services
 */
export class StepJournal extends Context.Service()("@toolgate/runtime/StepJournal") {
}
/**
 * The SQL journal over effect's `SqlClient`, in the `IdempotencyStore`'s schema (default
 * `toolgate`; table `step_journal`). Runs the store's migrations when built (the same
 * `IdempotencyStore.migrations`, so either layer may be built first). Fails with
 * `StoreUnavailable` or `MigrationError`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSql = (options) => Layer.effect(StepJournal, SqlJournal.make(options?.schema ?? defaultSchema));
/**
 * The in-memory journal with the same semantics, for unit tests; its clock is effect's `Clock`
 * unless an operation passes `now`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = Layer.effect(StepJournal, MemoryJournal.make);
//# sourceMappingURL=StepJournal.js.map