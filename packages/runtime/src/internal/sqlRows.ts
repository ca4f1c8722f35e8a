/**
 * The SQL store's codecs: one `Schema` per statement's parameters and per returned row. The
 * statements alias their columns to the model's field names, so a decoded row is the model
 * (`StoredRecord`, `Lease`, `JournalEntry`) without hand mapping; columns the driver may return in
 * another representation (`int8` as a string, `timestamptz` as text) decode either way.
 *
 * @internal
 */
import { Schema } from "effect"
import type * as IdempotencyStore from "../IdempotencyStore.js"
import * as Rules from "./storeRules.js"

/** An `int8` the driver returns as `bigint` (or, configured otherwise, as a decimal string). */
export const Fence = Schema.Union([Schema.BigInt, Schema.BigIntFromString])
/** A `timestamptz` the driver returns as a `Date` (or as an ISO string). */
export const Timestamp = Schema.Union([Schema.Date, Schema.DateFromString])
export const Json = Schema.NullOr(Schema.fromJsonString(Schema.Unknown))
export const Now = Schema.NullOr(Schema.Date)

export const RefRequest = Schema.Struct({ scope: Schema.String, key: Schema.String, now: Now })
export const FencedRequest = Schema.Struct({ scope: Schema.String, key: Schema.String, fence: Schema.BigInt, now: Now })

export const ClaimRequest = Schema.Struct({
  scope: Schema.String,
  key: Schema.String,
  tool: Schema.String,
  fingerprint: Schema.String,
  owner: Schema.String,
  leaseMs: Schema.Number,
  retentionMs: Schema.Number,
  maxAttempts: Schema.Number,
  recovery: Rules.Recovery,
  now: Now
})

export const ClaimRow = Schema.Struct({
  fence: Fence,
  attempt: Schema.Number,
  maxAttempts: Schema.Number,
  generation: Schema.Number,
  previous: Schema.NullOr(Rules.Status),
  recovery: Rules.Recovery,
  leaseExpiresAt: Timestamp
})

export const RecordRow = Schema.Struct({
  scope: Schema.String,
  key: Schema.String,
  tool: Schema.String,
  fingerprint: Schema.String,
  status: Rules.Status,
  previous: Schema.NullOr(Rules.Status),
  fence: Fence,
  attempt: Schema.Number,
  maxAttempts: Schema.Number,
  generation: Schema.Number,
  recovery: Rules.Recovery,
  owner: Schema.NullOr(Schema.String),
  resultText: Schema.NullOr(Schema.String),
  error: Json,
  externalRef: Schema.NullOr(Schema.String),
  leaseExpiresAt: Schema.NullOr(Timestamp),
  expiresAt: Timestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  completedAt: Schema.NullOr(Timestamp),
  retryAfterMs: Schema.Number,
  leaseExpired: Schema.Boolean,
  retentionElapsed: Schema.Boolean,
  readAt: Timestamp
})

export const FenceRow = Schema.Struct({ fence: Fence })
export const PeekRow = Schema.Struct({ status: Rules.Status, fence: Fence })
export const LeaseRow = Schema.Struct({ leaseExpiresAt: Timestamp })
export const ReapedRow = Schema.Struct({ scope: Schema.String, key: Schema.String, fence: Fence })
export const KeyRow = Schema.Struct({ key: Schema.String })

export const JournalRow = Schema.Struct({
  fence: Fence,
  scope: Schema.String,
  key: Schema.String,
  attempt: Schema.Number,
  outcome: Rules.JournalOutcome,
  detail: Json,
  at: Timestamp
})

export const CompleteRequest = Schema.Struct({
  ...FencedRequest.fields,
  result: Schema.String,
  externalRef: Schema.NullOr(Schema.String),
  retentionMs: Schema.Number
})
export const FailRequest = Schema.Struct({ ...FencedRequest.fields, error: Schema.String, retentionMs: Schema.Number })
export const ErrorRequest = Schema.Struct({ ...FencedRequest.fields, error: Schema.NullOr(Schema.String) })
export const HeartbeatRequest = Schema.Struct({ ...FencedRequest.fields, leaseMs: Schema.Number })
export const ResolveRequest = Schema.Struct({
  ...FencedRequest.fields,
  status: Rules.Status,
  result: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  externalRef: Schema.NullOr(Schema.String),
  retentionMs: Schema.Number
})
export const ReapRequest = Schema.Struct({
  graceMs: Schema.Number,
  includeReexecutable: Schema.Boolean,
  batchSize: Schema.Number,
  now: Now
})
export const PurgeRequest = Schema.Struct({ batchSize: Schema.Number, now: Now })
export const JournalRequest = Schema.Struct({
  ...FencedRequest.fields,
  attempt: Schema.Number,
  outcome: Rules.JournalOutcome,
  detail: Schema.NullOr(Schema.String)
})
export const RecordRefRequest = Schema.Struct({ scope: Schema.String, key: Schema.String })

export const bytesOf = (text: string | null): number | null => text === null ? null : Buffer.byteLength(text, "utf8")

/** The record of a decoded row; `undefined` when its result is not JSON. */
export const toRecord = (row: typeof RecordRow.Type): IdempotencyStore.StoredRecord | undefined => {
  let result: unknown = null
  if (row.resultText !== null) {
    try {
      result = JSON.parse(row.resultText)
    } catch {
      return undefined
    }
  }
  return { ...row, result }
}
