/**
 * The expected result of a captured stream: `NAME.expected.json` beside `NAME.sse` in a fixture
 * corpus (`test/fixtures/<provider>/`), what a correct strict assembler gives for that capture
 * (`test/fixtures/README.md`). `toolgate corpus` checks each capture against it, and the test suite
 * runs every fixture against it.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Provider from "./Provider.js"

/**
 * The comparable result: the outcome, the raw first finish reason (`null` when none was read),
 * all the text, every released call (none on error) and the error's tag (`null` when complete).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Outcome = Schema.Struct({
  outcome: Schema.Literals(["complete", "error"]),
  finishReason: Schema.NullOr(Schema.String),
  text: Schema.String,
  toolCalls: Schema.Array(Schema.Struct({
    id: Schema.NullOr(Schema.String),
    name: Schema.String,
    arguments: Schema.Unknown
  })),
  error: Schema.NullOr(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Outcome = typeof Outcome.Type

/**
 * An `expected.json` file: the {@link Outcome}, the provider whose folder holds it, what the
 * capture shows and where it comes from.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExpectedResult = Schema.Struct({
  ...Outcome.fields,
  provider: Schema.Literals(Provider.names),
  description: Schema.String,
  source: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export type ExpectedResult = typeof ExpectedResult.Type

/**
 * The `expected.json` path of a capture (`NAME.sse` → `NAME.expected.json`).
 *
 * @since 0.1.0
 * @category paths
 */
export const pathOf = (capture: string): string => capture.replace(/\.sse$/, ".expected.json")

/**
 * Reads an `expected.json` text. Fails with a `SchemaError` naming what does not match.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (text: string): Effect.Effect<ExpectedResult, Schema.SchemaError> =>
  Schema.decodeUnknownEffect(Schema.fromJsonString(ExpectedResult))(text)

/**
 * {@link decode}, synchronously: throws the `SchemaError` (for test loaders reading files).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeSync: (text: string) => ExpectedResult = Schema.decodeUnknownSync(
  Schema.fromJsonString(ExpectedResult)
)

/**
 * The comparable part of an {@link ExpectedResult} (or of any value with its fields).
 *
 * @since 0.1.0
 * @category models
 */
export const outcomeOf = (result: Outcome): Outcome => ({
  outcome: result.outcome,
  finishReason: result.finishReason,
  text: result.text,
  toolCalls: result.toolCalls,
  error: result.error
})
