/**
 * A validated tool call built directly, without a stream: what the executor's tests, the process
 * tests and the execution benchmark hand to `ToolExecutor.execute`. Its parameters are its
 * arguments decoded by the tool's parameters Schema, as `ToolCall.validate` gives them.
 *
 * @since 0.1.0
 */
import type { ToolCall } from "@toolgate/core"
import type { Tool } from "effect/ai"
import * as Schema from "effect/Schema"

let next = 0

/**
 * A validated call of `tool` with `args` (decoded by its parameters Schema; throws when they do
 * not match). Options: `id` (default a fresh `call_<n>`, as a provider gives each delivery its
 * own), `index` (default 0), `argumentsText` (default the JSON of `args`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <T extends Tool.Any>(
  tool: T,
  args: Readonly<Record<string, unknown>>,
  options: {
    readonly id?: string | null | undefined
    readonly index?: number | undefined
    readonly argumentsText?: string | undefined
  } = {}
): ToolCall.ValidatedToolCall<T> => ({
  index: options.index ?? 0,
  id: options.id === undefined ? `call_${++next}` : options.id,
  name: tool.name,
  tool,
  params: Schema.decodeUnknownSync(tool.parametersSchema as Schema.Codec<unknown, unknown>)(args) as Tool.Parameters<T>,
  arguments: args,
  argumentsText: options.argumentsText ?? JSON.stringify(args)
})
