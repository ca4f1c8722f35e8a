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
import { Schema } from "effect";
/**
 * The handler failed with its tool's own failure and it is terminal (`applied`). `failure` is
 * that failure encoded to JSON with the tool's failure Schema (`null` when it did not encode);
 * `detail` a short description.
 *
 * @since 0.1.0
 * @category models
 */
export declare const ToolFailure: Schema.TaggedStruct<"ToolFailure", {
    readonly failure: Schema.Codec<Schema.Json, Schema.Json, never, never>;
    readonly detail: Schema.String;
}>;
/**
 * The handler failed and is known not to have applied (`ToolHandler.NotApplied`, or its tool's
 * failure classified `not_applied`). `failure`: the tool's failure as JSON, or `null`;
 * `omittedBytes`: present when that failure was too large to store (its size in UTF-8 bytes) and
 * `null` was stored instead.
 *
 * @since 0.1.0
 * @category models
 */
export declare const NotApplied: Schema.TaggedStruct<"NotApplied", {
    readonly failure: Schema.Codec<Schema.Json, Schema.Json, never, never>;
    readonly detail: Schema.String;
    readonly omittedBytes: Schema.optionalKey<Schema.Int>;
}>;
/**
 * The handler returned a result its tool's success Schema does not encode; the effect happened.
 *
 * @since 0.1.0
 * @category models
 */
export declare const ResultInvalid: Schema.TaggedStruct<"ResultInvalid", {
    readonly detail: Schema.String;
}>;
/**
 * The outcome was over the size limit (see `ExecutionError.ResultTooLarge`): `bytes` of its JSON
 * text against `maxBytes`. `part` is `result` (the default, for rows written before it existed)
 * or `failure`.
 *
 * @since 0.1.0
 * @category models
 */
export declare const ResultTooLarge: Schema.TaggedStruct<"ResultTooLarge", {
    readonly part: Schema.withDecodingDefaultKey<Schema.Literals<readonly ["result", "failure"]>, never>;
    readonly bytes: Schema.Int;
    readonly maxBytes: Schema.Int;
}>;
/**
 * The handler's timeout (`timeoutMs`, finite: a handler without one never times out) elapsed
 * after it was dispatched.
 *
 * @since 0.1.0
 * @category models
 */
export declare const ExecutionTimeout: Schema.TaggedStruct<"ExecutionTimeout", {
    readonly timeoutMs: Schema.Finite;
}>;
/**
 * A running handler was interrupted: by its `caller` (the default, for rows written before the
 * field existed) or because its lease was lost (`lease_lost`, journalled).
 *
 * @since 0.1.0
 * @category models
 */
export declare const Interrupted: Schema.TaggedStruct<"Interrupted", {
    readonly reason: Schema.withDecodingDefaultKey<Schema.Literals<readonly ["caller", "lease_lost"]>, never>;
}>;
/**
 * The outcome is unknown: `reason` is `ambiguous_failure`, `defect` or `probe_failed` (see
 * `ExecutionError.UnknownReason`), `detail` a bounded description.
 *
 * @since 0.1.0
 * @category models
 */
export declare const Ambiguous: Schema.TaggedStruct<"Ambiguous", {
    readonly reason: Schema.Literals<readonly ["ambiguous_failure", "defect", "probe_failed"]>;
    readonly detail: Schema.String;
}>;
/**
 * JSON found in an error column that none of the tags above describes (written through the store
 * API by someone other than the executor, e.g. an operator's `resolve`), kept as found. The
 * executor never writes it.
 *
 * @since 0.1.0
 * @category models
 */
export declare const Unrecognized: Schema.TaggedStruct<"Unrecognized", {
    readonly stored: Schema.Codec<Schema.Json, Schema.Json, never, never>;
}>;
/**
 * The union of the stored errors, tagged by `_tag`.
 *
 * @since 0.1.0
 * @category schemas
 */
export declare const StoredError: Schema.toTaggedUnion<"_tag", readonly [Schema.TaggedStruct<"ToolFailure", {
    readonly failure: Schema.Codec<Schema.Json, Schema.Json, never, never>;
    readonly detail: Schema.String;
}>, Schema.TaggedStruct<"NotApplied", {
    readonly failure: Schema.Codec<Schema.Json, Schema.Json, never, never>;
    readonly detail: Schema.String;
    readonly omittedBytes: Schema.optionalKey<Schema.Int>;
}>, Schema.TaggedStruct<"ResultInvalid", {
    readonly detail: Schema.String;
}>, Schema.TaggedStruct<"ResultTooLarge", {
    readonly part: Schema.withDecodingDefaultKey<Schema.Literals<readonly ["result", "failure"]>, never>;
    readonly bytes: Schema.Int;
    readonly maxBytes: Schema.Int;
}>, Schema.TaggedStruct<"ExecutionTimeout", {
    readonly timeoutMs: Schema.Finite;
}>, Schema.TaggedStruct<"Interrupted", {
    readonly reason: Schema.withDecodingDefaultKey<Schema.Literals<readonly ["caller", "lease_lost"]>, never>;
}>, Schema.TaggedStruct<"Ambiguous", {
    readonly reason: Schema.Literals<readonly ["ambiguous_failure", "defect", "probe_failed"]>;
    readonly detail: Schema.String;
}>, Schema.TaggedStruct<"Unrecognized", {
    readonly stored: Schema.Codec<Schema.Json, Schema.Json, never, never>;
}>]>;
/**
 * A stored error.
 *
 * @since 0.1.0
 * @category models
 */
export type StoredError = typeof StoredError.Type;
/**
 * The JSON text to store for a stored error.
 *
 * @since 0.1.0
 * @category encoding
 */
export declare const encode: (error: StoredError) => string;
/**
 * Reads a stored error from the parsed JSON of an error column: `null` for none, an
 * `Unrecognized` for JSON this vocabulary does not describe (never a failure).
 *
 * @since 0.1.0
 * @category decoding
 */
export declare const decode: (json: unknown) => StoredError | null;
//# sourceMappingURL=StoredError.d.ts.map