/**
 * The operator's surface of the idempotency store, as library calls over the `IdempotencyStore`
 * in context (the `toolgate records`, `resolve` and `purge` commands are these, printed):
 *
 * - {@link list}: records by tenant, key prefix, state and tool, newest change first, bounded;
 * - {@link find} / {@link show}: one record by its key or a unique prefix of it (at least 8 hex
 *   digits), with its attempt journal and its audited resolutions;
 * - {@link resolve}: settles an `unknown` record once the outcome is known downstream — `Applied`
 *   (the effect happened: the record replays `result`) or `NotApplied` (it did not: the record is
 *   released, and the next call of the intent runs it, within its attempts). Fenced: it reads the
 *   record's fence (or takes the one the operator saw, `fence`) and resolves at that fence only,
 *   so a record that changed meanwhile (taken over, resolved by someone else) is
 *   {@link RecordChanged}, never overwritten. Audited: who, when (the store's clock), why, and the
 *   error the record held, in the same statement (`IdempotencyStore.resolutions`); an `Applied`
 *   resolution writes the call's follow-ups (`followUps`) to the outbox in that statement too.
 *   Only `unknown`
 *   records: anything else is {@link RecordNotUnknown}, naming the state;
 * - {@link purge}: deletes settled records past their retention, or settled longer ago than
 *   `olderThanMs`; never a record in progress or `unknown`.
 *
 * @since 0.1.0
 */
import { IdempotencyKey } from "@toolgate/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { StoreUnavailable } from "./ExecutionError.js"
import * as FollowUp from "./FollowUp.js"
import * as IdempotencyStore from "./IdempotencyStore.js"
import { maxAuditBy, maxAuditReason } from "./internal/storeRules.js"

/**
 * No record has this key (or key prefix) in the store (in `scope`, when one was named).
 *
 * @since 0.1.0
 * @category errors
 */
export class RecordNotFound extends Schema.TaggedError<RecordNotFound>()("RecordNotFound", {
  key: Schema.String,
  scope: Schema.NullOr(Schema.String)
}) {
  override get message(): string {
    return `no record ${this.key}${this.scope === null ? "" : ` in scope ${JSON.stringify(this.scope)}`}`
  }
}

/**
 * A key prefix matches more than one record: give more of the key (or its scope).
 *
 * @since 0.1.0
 * @category errors
 */
export class AmbiguousKey extends Schema.TaggedError<AmbiguousKey>()("AmbiguousKey", {
  prefix: Schema.String,
  /** Up to 5 of the matching keys. */
  matches: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `${this.prefix} matches several records (${this.matches.join(", ")}${
      this.matches.length >= 5 ? ", …" : ""
    }); give more of the key, or its scope`
  }
}

/**
 * Only an `unknown` record can be resolved: this one is in another state (`succeeded`, `failed`,
 * `released`: already settled; `in_progress`: a worker holds it now).
 *
 * @since 0.1.0
 * @category errors
 */
export class RecordNotUnknown extends Schema.TaggedError<RecordNotUnknown>()("RecordNotUnknown", {
  keyHash: Schema.String,
  status: IdempotencyStore.Status
}) {
  override get message(): string {
    const why = this.status === "in_progress" ? "a worker holds it now" : "it is already settled"
    return `record ${this.keyHash} is ${this.status}, not unknown (${why}); only an unknown record can be resolved`
  }
}

/**
 * The record changed between the fence the operator saw and the resolution: it was taken over,
 * settled, resolved or parked again. Nothing was written; look at it again.
 *
 * @since 0.1.0
 * @category errors
 */
export class RecordChanged extends Schema.TaggedError<RecordChanged>()("RecordChanged", {
  keyHash: Schema.String,
  /** The fence the resolution was made at, as a decimal string. */
  fence: Schema.String,
  /** What the record is now (`null`: purged). */
  status: Schema.NullOr(IdempotencyStore.Status),
  /** Its fence now, as a decimal string (`null`: purged). */
  currentFence: Schema.NullOr(Schema.String)
}) {
  override get message(): string {
    return `record ${this.keyHash} changed since fence ${this.fence}${
      this.status === null ? " (it is gone)" : ` (it is ${this.status} at fence ${this.currentFence})`
    }; nothing was written: look at it again before resolving`
  }
}

/**
 * An operator request toolgate cannot carry out as given: `field` names the input (`key`,
 * `result`, `by`, `reason`, `olderThanMs`, `fence`), `reason` what is wrong with it.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidRecordRequest extends Schema.TaggedError<InvalidRecordRequest>()("InvalidRecordRequest", {
  field: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.field}: ${this.reason}`
  }
}

/**
 * What an operator call can fail with: its own errors and the store's.
 *
 * @since 0.1.0
 * @category models
 */
export type RecordsError =
  | RecordNotFound
  | AmbiguousKey
  | RecordNotUnknown
  | RecordChanged
  | InvalidRecordRequest
  | StoreUnavailable

/** The shortest key prefix accepted, in hex digits. */
const minPrefix = 8

const keyPattern = /^(?:tg1:sha256:)?([0-9a-f]{1,64})$/

/**
 * The full key, or the key prefix, a reference names: `tg1:sha256:<hex>` or the hex alone, at
 * least 8 hex digits (case-insensitive). Fails with `InvalidRecordRequest` (`key`).
 *
 * @since 0.1.0
 * @category references
 */
export const keyOf = (
  reference: string
): Effect.Effect<{ readonly key: string; readonly complete: boolean }, InvalidRecordRequest> => {
  const m = keyPattern.exec(reference.trim().toLowerCase())
  if (m === null || m[1].length < minPrefix) {
    return Effect.fail(
      new InvalidRecordRequest({
        field: "key",
        reason: `${
          JSON.stringify(reference)
        } is not a record key (tg1:sha256:<64 hex>) or a prefix of at least ${minPrefix} hex digits`
      })
    )
  }
  return Effect.succeed({ key: `tg1:sha256:${m[1]}`, complete: m[1].length === 64 })
}

/**
 * A record reference: its key (or a unique prefix of at least 8 hex digits), optionally its scope
 * (the tenant), which narrows a prefix and must match a full key.
 *
 * @since 0.1.0
 * @category models
 */
export interface Reference {
  readonly key: string
  readonly scope?: string | undefined
}

/**
 * The record a reference names. Fails with `RecordNotFound`, `AmbiguousKey` (a prefix of
 * several), `InvalidRecordRequest` (not a key) or `StoreUnavailable`.
 *
 * @since 0.1.0
 * @category reading
 */
export const find = Effect.fn("Records.find")(function*(reference: Reference) {
  const store = yield* IdempotencyStore.IdempotencyStore
  const { complete, key } = yield* keyOf(reference.key)
  const scope = reference.scope ?? null
  if (complete && scope !== null) {
    const found = yield* store.read({ scope, key })
    if (Option.isSome(found)) return found.value
    return yield* new RecordNotFound({ key, scope })
  }
  const matches = yield* store.list({ keyPrefix: key, scope: scope ?? undefined, limit: 5 })
  if (matches.length === 0) return yield* new RecordNotFound({ key, scope })
  const exact = matches.filter((r) => r.key === key)
  if (exact.length === 1 || (matches.length === 1 && exact.length === 0)) return exact[0] ?? matches[0]
  return yield* new AmbiguousKey({
    prefix: key,
    matches: matches.map((r) => exact.length > 1 ? `${r.scope}/${r.key}` : r.key)
  })
})

/**
 * Records matching a query, newest change first (see `IdempotencyStore.ListQuery`).
 *
 * @since 0.1.0
 * @category reading
 */
export const list = (
  query: IdempotencyStore.ListQuery
): Effect.Effect<ReadonlyArray<IdempotencyStore.StoredRecord>, StoreUnavailable, IdempotencyStore.IdempotencyStore> =>
  IdempotencyStore.IdempotencyStore.use((store) => store.list(query))

/**
 * One record with its history.
 *
 * @since 0.1.0
 * @category models
 */
export interface Detail {
  readonly record: IdempotencyStore.StoredRecord
  readonly journal: ReadonlyArray<IdempotencyStore.JournalEntry>
  readonly resolutions: ReadonlyArray<IdempotencyStore.ResolutionEntry>
}

/**
 * The record a reference names, with its attempt journal and its audited resolutions. Fails as
 * {@link find}.
 *
 * @since 0.1.0
 * @category reading
 */
export const show = Effect.fn("Records.show")(function*(reference: Reference) {
  const store = yield* IdempotencyStore.IdempotencyStore
  const record = yield* find(reference)
  const journal = yield* store.journalOf(record)
  const resolutions = yield* store.resolutions(record)
  return { record, journal, resolutions } satisfies Detail
})

/**
 * The outcome an operator found downstream:
 *
 * - `Applied`: the effect happened; `result` is what the tool would have answered, as JSON text
 *   (replayed to every later call; default `null`), `externalRef` a downstream reference.
 * - `NotApplied`: it did not happen; the record is released, so the next call of the intent runs
 *   it again (if it has attempts left).
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome =
  | {
    readonly _tag: "Applied"
    readonly result?: string | undefined
    readonly externalRef?: string | undefined
    /**
     * The call's follow-ups (what its handler's `followUps` declares for this result), written to
     * the outbox in the resolution's statement, keyed by the record's downstream key.
     */
    readonly followUps?: ReadonlyArray<FollowUp.FollowUp> | undefined
  }
  | { readonly _tag: "NotApplied" }

/**
 * A resolution's request: the outcome; `by` who decides (a person or a system, 1 to 200
 * characters); `reason` why (at most 2,000 characters; required for `NotApplied`, which makes the
 * call run again); `fence` the fence the operator saw (default: the record's fence now);
 * `retentionMs` how long the settled record is kept (default 24 h).
 *
 * @since 0.1.0
 * @category models
 */
export interface Resolution {
  readonly outcome: Outcome
  readonly by: string
  readonly reason?: string | undefined
  readonly fence?: bigint | undefined
  readonly retentionMs?: number | undefined
}

/**
 * What a resolution did: the record as it is now, and its audit entry.
 *
 * @since 0.1.0
 * @category models
 */
export interface Resolved {
  readonly record: IdempotencyStore.StoredRecord
  readonly audit: IdempotencyStore.ResolutionEntry
}

const checkResolution = (resolution: Resolution): InvalidRecordRequest | undefined => {
  const { by, outcome, reason, retentionMs } = resolution
  if (by.trim().length === 0 || by.length > maxAuditBy) {
    return new InvalidRecordRequest({ field: "by", reason: `who resolves must be 1 to ${maxAuditBy} characters` })
  }
  if (reason !== undefined && reason.length > maxAuditReason) {
    return new InvalidRecordRequest({ field: "reason", reason: `at most ${maxAuditReason} characters` })
  }
  if (outcome._tag === "NotApplied" && (reason === undefined || reason.trim().length === 0)) {
    return new InvalidRecordRequest({
      field: "reason",
      reason: "say why it was not applied: the call will run again on its next delivery"
    })
  }
  if (retentionMs !== undefined && !(Number.isFinite(retentionMs) && retentionMs >= 0)) {
    return new InvalidRecordRequest({ field: "retentionMs", reason: "a finite number of ms ≥ 0" })
  }
  if (outcome._tag === "Applied" && outcome.result !== undefined) {
    try {
      JSON.parse(outcome.result)
    } catch (error) {
      return new InvalidRecordRequest({ field: "result", reason: `not JSON: ${(error as Error).message}` })
    }
    if (Buffer.byteLength(outcome.result, "utf8") > IdempotencyStore.maxResultBytes) {
      return new InvalidRecordRequest({
        field: "result",
        reason: `over ${IdempotencyStore.maxResultBytes} bytes, the store's limit`
      })
    }
  }
  return undefined
}

/**
 * Resolves the `unknown` record a reference names (see the module docs). Fails with
 * `RecordNotUnknown` (another state), `RecordChanged` (it changed since `fence`, or during the
 * resolution), `InvalidRecordRequest` (a result that is not JSON, a missing reason for
 * `NotApplied`, …) and as {@link find}.
 *
 * @since 0.1.0
 * @category resolving
 */
export const resolve = Effect.fn("Records.resolve")(function*(reference: Reference, resolution: Resolution) {
  const invalid = checkResolution(resolution)
  if (invalid !== undefined) return yield* invalid
  const store = yield* IdempotencyStore.IdempotencyStore
  const record = yield* find(reference)
  const fence = resolution.fence ?? record.fence
  const changed = (now: Option.Option<IdempotencyStore.StoredRecord>) =>
    new RecordChanged({
      keyHash: record.key,
      fence: fence.toString(),
      status: Option.isSome(now) ? now.value.status : null,
      currentFence: Option.isSome(now) ? now.value.fence.toString() : null
    })
  if (record.fence !== fence) return yield* changed(Option.some(record))
  if (record.status !== "unknown") return yield* new RecordNotUnknown({ keyHash: record.key, status: record.status })
  const { outcome } = resolution
  let followUps: ReadonlyArray<FollowUp.Message> | undefined
  if (outcome._tag === "Applied" && outcome.followUps !== undefined) {
    const encoded = FollowUp.encodeAll(IdempotencyKey.downstreamKey(record.key, record.generation), outcome.followUps)
    if (encoded instanceof FollowUp.InvalidFollowUp) {
      return yield* new InvalidRecordRequest({ field: "followUps", reason: encoded.message })
    }
    followUps = encoded
  }
  yield* store.resolve(
    { scope: record.scope, key: record.key, fence },
    outcome._tag === "Applied"
      ? { _tag: "Succeeded", result: outcome.result ?? "null", externalRef: outcome.externalRef ?? null, followUps }
      : { _tag: "Released" },
    {
      retentionMs: resolution.retentionMs ?? IdempotencyStore.defaultRetentionMs,
      audit: { by: resolution.by, reason: resolution.reason ?? null }
    }
  ).pipe(
    Effect.catchTag(
      "LeaseLost",
      () => Effect.flatMap(store.read(record), (now) => Effect.fail(changed(now)))
    )
  )
  const after = yield* store.read(record)
  const audits = yield* store.resolutions(record)
  const audit = audits.find((a) => a.fence === fence)
  if (Option.isNone(after) || audit === undefined) return yield* changed(after)
  return { record: after.value, audit } satisfies Resolved
})

/**
 * Deletes settled records (`succeeded`, `failed`, `released`) past their retention, or, with
 * `olderThanMs`, those settled more than that many ms ago whatever their retention (with `scope`,
 * only that tenant's); returns how many. Records in progress and `unknown` ones are never deleted;
 * resolution audits are kept. Fails with `InvalidRecordRequest` for an `olderThanMs` that is not a
 * finite number ≥ 0.
 *
 * @since 0.1.0
 * @category purging
 */
export const purge = Effect.fn("Records.purge")(function*(
  options: { readonly olderThanMs?: number | undefined; readonly scope?: string | undefined } = {}
) {
  const { olderThanMs, scope } = options
  if (olderThanMs !== undefined && !(Number.isFinite(olderThanMs) && olderThanMs >= 0)) {
    return yield* new InvalidRecordRequest({ field: "olderThanMs", reason: "a finite number of ms ≥ 0" })
  }
  const store = yield* IdempotencyStore.IdempotencyStore
  return yield* store.purge({ olderThanMs, scope })
})
