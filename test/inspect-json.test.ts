/**
 * `Inspect.jsonPieces`: the `--json` document printed in pieces is byte for byte
 * `JSON.stringify(result)`, for every fixture's result and for any result.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Inspect from "@toolgate/cli/Inspect"
import { Fixture } from "@toolgate/testing"
import { Effect, Schema, Stream } from "effect"

const Result = Schema.Struct({
  outcome: Schema.Literals(["complete", "error"]),
  finishReason: Schema.NullOr(Schema.String),
  text: Schema.String,
  toolCalls: Schema.Array(
    Schema.Struct({ id: Schema.NullOr(Schema.String), name: Schema.String, arguments: Schema.Json })
  ),
  error: Schema.NullOr(Schema.Struct({ _tag: Schema.String, message: Schema.String }))
})

describe("Inspect.jsonPieces", () => {
  it.effect("joined, the pieces are JSON.stringify(result) for every fixture", () =>
    Effect.gen(function*() {
      for (const fixture of Fixture.loadAll()) {
        const result = yield* Inspect.inspect(Stream.make(fixture.bytes), { provider: fixture.provider })
        expect([...Inspect.jsonPieces(result)].join("")).toBe(JSON.stringify(result))
      }
    }))

  it.prop("joined, the pieces are JSON.stringify(result) for any result", [Result], ([result]) => {
    const pieces = [...Inspect.jsonPieces(result)]
    expect(pieces.join("")).toBe(JSON.stringify(result))
    expect(pieces).toHaveLength(result.toolCalls.length + 2)
  })
})
