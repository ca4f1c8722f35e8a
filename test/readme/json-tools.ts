/**
 * A code example of `README.md`, verbatim between the markers, so that `tsc -b` type-checks it
 * (`test/readme.test.ts` checks that the README still holds it).
 */
// begin: README.md
import { ToolDefinition, ToolValidator } from "@toolgate/adapters"
import type { Assembler } from "@toolgate/core"
import { Effect, Schema } from "effect"

declare const toolsJson: string // e.g. the `tools` array of your provider request, as JSON text
declare const turn: Effect.Effect<Assembler.AssembledTurn> // as above, its errors left out here

const tools = Effect.flatMap(ToolDefinition.parse(toolsJson), ToolValidator.make) // or a ToolDefinitionError
// The calls of a turn, their arguments untouched, or UnknownTool / ToolArgumentsInvalid:
const checked = Effect.flatMap(tools, (v) => Effect.flatMap(turn, ToolValidator.validate(v)))
// A Toolkit for the executor and the pipeline: each tool's parameters accept exactly what its
// JSON Schema accepts and decode to the arguments themselves.
const jsonToolkit = Effect.map(tools, (v) => ToolValidator.toToolkit(v, { success: Schema.Json }))
// end: README.md

export { checked, jsonToolkit }
