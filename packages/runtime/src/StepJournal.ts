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
import { StreamEvent } from "@toolgate/core"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Migrator, SqlClient } from "effect/sql"
import type { StoreUnavailable } from "./ExecutionError.js"
import { defaultSchema } from "./IdempotencyStore.js"
import * as MemoryJournal from "./internal/stepJournalMemory.js"
import * as SqlJournal from "./internal/stepJournalSql.js"
import * as Rules from "./internal/storeRules.js"

/**
 * A turn: `tenant` and `turn` of the caller's `IdempotencyKey.Scope`.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnRef {
  readonly tenant: string
  readonly turn: string
}

/**
 * One step of a turn (1 for the first model response).
 *
 * @since 0.1.0
 * @category models
 */
export interface StepRef extends TurnRef {
  readonly step: number
}

/**
 * A step reference plus the fence its holder (or observer) saw.
 *
 * @since 0.1.0
 * @category models
 */
export interface FencedStep extends StepRef {
  readonly fence: bigint
}

/**
 * Step states: `in_progress` (leased to a worker asking the model), `recorded` (the output is
 * kept and replayed), `released` (the model request failed; nothing was decided; claimable again).
 *
 * @since 0.1.0
 * @category models
 */
export const Status = Schema.Literals(["in_progress", "recorded", "released"])

/** The type of {@link Status}. @since 0.1.0 @category models */
export type Status = typeof Status.Type

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
})

/** The type of {@link StepCall}. @since 0.1.0 @category models */
export type StepCall = typeof StepCall.Type

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
})

/** The type of {@link StepOutput}. @since 0.1.0 @category models */
export type StepOutput = typeof StepOutput.Type

/**
 * A claim. Refused with `InvalidStepRequest` when `step` is not an integer ≥ 1, `leaseMs` not a
 * finite number > 0 or `retentionMs` not a finite number ≥ 0.
 *
 * - `fingerprint`: of the turn's request (every step of a turn carries the same); a record with
 *   another is never taken over nor replayed.
 * - `owner`: a token unique to this claimant (resuming a claim whose response was lost).
 * - `leaseMs`: lease length, ms; `retentionMs`: how long the record is kept, ms.
 * - `now`: the store clock's reading to use instead of its own (tests).
 *
 * @since 0.1.0
 * @category models
 */
export interface ClaimRequest extends StepRef {
  readonly fingerprint: string
  readonly owner: string
  readonly leaseMs: number
  readonly retentionMs: number
  readonly now?: Date | undefined
}

/**
 * A won claim: the fence to present on every later write. `previous`: the state it replaced
 * (`null` for a new record; `in_progress` for a takeover of an expired lease or a resumed own
 * claim; `released` after a failed request). `attempt`: claims of this step so far.
 *
 * @since 0.1.0
 * @category models
 */
export interface StepLease extends FencedStep {
  readonly previous: Status | null
  readonly attempt: number
  readonly leaseExpiresAt: Date
}

/**
 * A step as read, with its lease evaluated at the store clock's reading `readAt`. `outputText` is
 * the output's JSON text as stored, `output` its decoded value (both `null` unless recorded).
 * `retryAfterMs`: the lease time left in ms, rounded up (0 when none or expired).
 *
 * @since 0.1.0
 * @category models
 */
export interface StoredStep extends FencedStep {
  readonly fingerprint: string
  readonly status: Status
  readonly previous: Status | null
  readonly attempt: number
  readonly owner: string | null
  readonly outputText: string | null
  readonly output: StepOutput | null
  readonly leaseExpiresAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
  readonly recordedAt: Date | null
  readonly expiresAt: Date
  readonly retryAfterMs: number
  readonly leaseExpired: boolean
  readonly readAt: Date
}

/**
 * The answer to a claim: the lease, or the step that prevented it (read right after).
 *
 * @since 0.1.0
 * @category models
 */
export type Claim =
  | { readonly _tag: "Claimed"; readonly lease: StepLease }
  | { readonly _tag: "Existing"; readonly step: StoredStep }

/**
 * Optional store-clock override, for tests.
 *
 * @since 0.1.0
 * @category models
 */
export interface At {
  readonly now?: Date | undefined
}

/**
 * A fenced write of a step found another fence or state: another worker took the step over after
 * this worker's lease expired. Nothing was written.
 *
 * @since 0.1.0
 * @category errors
 */
export class StepLeaseLost extends Schema.TaggedError<StepLeaseLost>()("StepLeaseLost", {
  turn: Schema.String,
  step: Schema.Int,
  /** The fence this worker held, as a decimal string. */
  fence: Schema.String,
  operation: Schema.Literals(["record", "release", "heartbeat"])
}) {
  override get message(): string {
    return `lease on step ${this.step} of turn ${
      JSON.stringify(this.turn)
    } lost on ${this.operation} (held fence ${this.fence}); nothing was written`
  }
}

/**
 * Another worker holds the step's lease (it is asking the model) and did not record the step
 * within the bounded wait. Safe to retry later.
 *
 * @since 0.1.0
 * @category errors
 */
export class StepInProgress extends Schema.TaggedError<StepInProgress>()("StepInProgress", {
  turn: Schema.String,
  step: Schema.Int,
  /** Milliseconds until the holder's lease expires, by the store's clock. */
  retryAfterMs: Schema.Number,
  /** Milliseconds this worker waited. */
  waitedMs: Schema.Number
}) {
  override get message(): string {
    return `step ${this.step} of turn ${JSON.stringify(this.turn)} is being asked elsewhere; waited ${
      Math.round(this.waitedMs)
    } ms, lease ends in ${Math.round(this.retryAfterMs)} ms`
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
export class JournalMismatch extends Schema.TaggedError<JournalMismatch>()("JournalMismatch", {
  turn: Schema.String,
  step: Schema.Int,
  storedFingerprint: Schema.String,
  fingerprint: Schema.String
}) {
  override get message(): string {
    return `step ${this.step} of turn ${
      JSON.stringify(this.turn)
    } was journaled for another request (${this.storedFingerprint} ≠ ${this.fingerprint})`
  }
}

/**
 * A step's output is larger than the journal keeps ({@link maxOutputBytes}); it is not recorded,
 * and none of its calls runs.
 *
 * @since 0.1.0
 * @category errors
 */
export class StepOutputTooLarge extends Schema.TaggedError<StepOutputTooLarge>()("StepOutputTooLarge", {
  turn: Schema.String,
  step: Schema.Int,
  /** UTF-8 bytes of the output's JSON text. */
  bytes: Schema.Int,
  maxBytes: Schema.Int
}) {
  override get message(): string {
    return `the output of step ${this.step} of turn ${
      JSON.stringify(this.turn)
    } is ${this.bytes} bytes, over the journal's ${this.maxBytes}-byte limit`
  }
}

/**
 * A journal operation was called with a value no record may hold (a step below 1, a lease of 0 ms
 * or less, a negative retention). Nothing was read or written.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidStepRequest extends Schema.TaggedError<InvalidStepRequest>()("InvalidStepRequest", {
  turn: Schema.String,
  step: Schema.Number,
  operation: Schema.Literals(["claim", "heartbeat"]),
  field: Schema.Literals(["step", "leaseMs", "retentionMs"]),
  value: Schema.String,
  rule: Schema.String
}) {
  override get message(): string {
    return `invalid ${this.operation} of step ${this.step} of turn ${
      JSON.stringify(this.turn)
    }: ${this.field} = ${this.value}, must be ${this.rule}`
  }
}

/**
 * Every error of the journal's operations.
 *
 * @since 0.1.0
 * @category models
 */
export type JournalError = StepLeaseLost | StepOutputTooLarge | InvalidStepRequest | StoreUnavailable

/**
 * Largest output the journal keeps, in UTF-8 bytes of its JSON text: 8 MiB (8,388,608), also a
 * CHECK in SQL. (A step's calls are each bounded by the assembler's arguments limit, 1 MiB by
 * default.)
 *
 * @since 0.1.0
 * @category constants
 */
export const maxOutputBytes: number = Rules.maxStepOutputBytes

/**
 * The service. Every operation fails with `StoreUnavailable` when the store cannot be reached
 * (`keyHash` is `null` for the journal's operations).
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Claims the step, or returns the step that prevents it (read right after the claim lost). */
  readonly claim: (request: ClaimRequest) => Effect.Effect<Claim, StoreUnavailable | InvalidStepRequest>
  /** `in_progress` → `recorded`: the output, kept for `retentionMs` from now. */
  readonly record: (
    lease: FencedStep,
    options: At & { readonly output: StepOutput; readonly retentionMs: number }
  ) => Effect.Effect<void, StepLeaseLost | StepOutputTooLarge | StoreUnavailable>
  /** `in_progress` → `released`: the model request failed, nothing was decided. */
  readonly release: (lease: FencedStep, options?: At) => Effect.Effect<void, StepLeaseLost | StoreUnavailable>
  /** Extends the lease to `now + leaseMs`; returns the new expiry. */
  readonly heartbeat: (
    lease: FencedStep,
    options: At & { readonly leaseMs: number }
  ) => Effect.Effect<Date, StepLeaseLost | StoreUnavailable | InvalidStepRequest>
  /** The step, evaluated at `now`. */
  readonly read: (ref: StepRef, options?: At) => Effect.Effect<Option.Option<StoredStep>, StoreUnavailable>
  /** Every step of a turn, in step order. */
  readonly steps: (ref: TurnRef, options?: At) => Effect.Effect<ReadonlyArray<StoredStep>, StoreUnavailable>
  /**
   * Deletes the steps of turns whose every step is settled (or whose lease was abandoned) and past
   * retention, `batchSize` turns (default 500) at a time until none is left; returns the number
   * of steps deleted.
   */
  readonly purge: (
    options?: At & { readonly batchSize?: number | undefined }
  ) => Effect.Effect<number, StoreUnavailable>
}

/**
 * The step journal service (layers: {@link layerSql}, {@link layerMemory}).
 *
 * @since 0.1.0
 * @category services
 */
export class StepJournal extends Context.Service<StepJournal, Service>()("@toolgate/runtime/StepJournal") {}

/**
 * The SQL journal over effect's `SqlClient`, in the `IdempotencyStore`'s schema (default
 * `toolgate`; table `step_journal`). Runs the store's migrations when built (the same
 * `IdempotencyStore.migrations`, so either layer may be built first). Fails with
 * `StoreUnavailable` or `MigrationError`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSql = (options?: { readonly schema?: string | undefined }): Layer.Layer<
  StepJournal,
  StoreUnavailable | Migrator.MigrationError,
  SqlClient.SqlClient
> => Layer.effect(StepJournal, SqlJournal.make(options?.schema ?? defaultSchema))

/**
 * The in-memory journal with the same semantics, for unit tests; its clock is effect's `Clock`
 * unless an operation passes `now`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<StepJournal> = Layer.effect(StepJournal, MemoryJournal.make)
