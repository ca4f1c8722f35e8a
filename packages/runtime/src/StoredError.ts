/**
 * The stored error vocabulary: what the `ToolExecutor` writes into a record's `error` (and into a
 * journal entry's `detail`) when an attempt does not end in a stored result, as one tagged Schema
 * union. The executor writes only through {@link encode} and reads only through {@link decode}, so
 * what is stored, what a replay answers and what `AttemptsExhausted.lastError` shows are one type.
 *
 * | tag | written when | the record becomes |
 * | --- | --- | --- |
 * | `ToolFailure` | the handler failed with its tool's failure, classified `applied` | `failed` (replayed) |
 * | `NotApplied` | the handler failed known not to have applied | `released` (claimable again) |
 * | `ResultInvalid` | the result does not encode with the tool's success Schema | `failed` (replayed) |
 * | `ResultTooLarge` | the encoded result or stored failure is over the limit | `failed` (replayed) |
 * | `ExecutionTimeout` | the handler did not finish within its timeout | `unknown` |
 * | `Interrupted` | the caller interrupted a running handler, or its lease was lost | `unknown` / journal |
 * | `Ambiguous` | an ambiguous failure, a defect, a failed reconcile probe | `unknown` |
 * | `Unrecognized` | (never written) JSON in the column this vocabulary does not describe | — |
 *
 * Rows written before this module existed hold the same JSON shapes (the same tags and fields), so
 * they decode unchanged; the fields added since (`ResultTooLarge.part`, `Interrupted.reason`)
 * decode to their former meaning when absent. Failure values are the tool's failure encoded with
 * its failure Schema to JSON (`Schema.toCodecJson`), never argument values.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"

/**
 * The handler failed with its tool's own failure and it is terminal (`applied`). `failure` is
 * that failure encoded to JSON with the tool's failure Schema (`null` when it did not encode);
 * `detail` a short description.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolFailure = Schema.TaggedStruct("ToolFailure", {
  failure: Schema.Json,
  detail: Schema.String
})

/**
 * The handler failed and is known not to have applied (`ToolHandler.NotApplied`, or its tool's
 * failure classified `not_applied`). `failure`: the tool's failure as JSON, or `null`;
 * `omittedBytes`: present when that failure was too large to store (its size in UTF-8 bytes) and
 * `null` was stored instead.
 *
 * @since 0.1.0
 * @category models
 */
export const NotApplied = Schema.TaggedStruct("NotApplied", {
  failure: Schema.Json,
  detail: Schema.String,
  omittedBytes: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)))
})

/**
 * The handler returned a result its tool's success Schema does not encode; the effect happened.
 *
 * @since 0.1.0
 * @category models
 */
export const ResultInvalid = Schema.TaggedStruct("ResultInvalid", {
  detail: Schema.String
})

/**
 * The outcome was over the size limit (see `ExecutionError.ResultTooLarge`): `bytes` of its JSON
 * text against `maxBytes`. `part` is `result` (the default, for rows written before it existed)
 * or `failure`.
 *
 * @since 0.1.0
 * @category models
 */
export const ResultTooLarge = Schema.TaggedStruct("ResultTooLarge", {
  part: Schema.Literals(["result", "failure"]).pipe(Schema.withDecodingDefaultKey(Effect.succeed("result" as const))),
  bytes: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  maxBytes: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
})

/**
 * The handler's timeout (`timeoutMs`, finite: a handler without one never times out) elapsed
 * after it was dispatched.
 *
 * @since 0.1.0
 * @category models
 */
export const ExecutionTimeout = Schema.TaggedStruct("ExecutionTimeout", {
  timeoutMs: Schema.Finite
})

/**
 * A running handler was interrupted: by its `caller` (the default, for rows written before the
 * field existed) or because its lease was lost (`lease_lost`, journalled).
 *
 * @since 0.1.0
 * @category models
 */
export const Interrupted = Schema.TaggedStruct("Interrupted", {
  reason: Schema.Literals(["caller", "lease_lost"]).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed("caller" as const))
  )
})

/**
 * The outcome is unknown: `reason` is `ambiguous_failure`, `defect` or `probe_failed` (see
 * `ExecutionError.UnknownReason`), `detail` a bounded description.
 *
 * @since 0.1.0
 * @category models
 */
export const Ambiguous = Schema.TaggedStruct("Ambiguous", {
  reason: Schema.Literals(["ambiguous_failure", "defect", "probe_failed"]),
  detail: Schema.String
})

/**
 * JSON found in an error column that none of the tags above describes (written through the store
 * API by someone other than the executor, e.g. an operator's `resolve`), kept as found. The
 * executor never writes it.
 *
 * @since 0.1.0
 * @category models
 */
export const Unrecognized = Schema.TaggedStruct("Unrecognized", {
  stored: Schema.Json
})

/**
 * The union of the stored errors, tagged by `_tag`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StoredError = Schema.Union([
  ToolFailure,
  NotApplied,
  ResultInvalid,
  ResultTooLarge,
  ExecutionTimeout,
  Interrupted,
  Ambiguous,
  Unrecognized
]).pipe(Schema.toTaggedUnion("_tag"))

/**
 * A stored error.
 *
 * @since 0.1.0
 * @category models
 */
export type StoredError = typeof StoredError.Type

const toText = Schema.encodeSync(Schema.fromJsonString(StoredError))
const fromValue = Schema.decodeUnknownExit(StoredError)

/**
 * The JSON text to store for a stored error.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (error: StoredError): string => toText(error)

/**
 * Reads a stored error from the parsed JSON of an error column: `null` for none, an
 * `Unrecognized` for JSON this vocabulary does not describe (never a failure).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (json: unknown): StoredError | null => {
  if (json === null || json === undefined) return null
  const decoded = fromValue(json)
  return Exit.isSuccess(decoded) ? decoded.value : { _tag: "Unrecognized", stored: json as Schema.Json }
}
