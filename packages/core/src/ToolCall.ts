/**
 * Validation of a completed turn against the tools the caller declared. A tool is effect's own
 * `effect/ai` `Tool` (a name plus a parameters Schema and a success Schema), gathered in a
 * `Toolkit`, so an Effect app that already defines its tools for `LanguageModel` reuses them.
 *
 * All or nothing: the first call that names an unknown tool or has invalid arguments fails the
 * whole turn, and no call is returned.
 *
 * @since 0.1.0
 */
import { Effect, Schema, SchemaIssue } from "effect"
import type { Tool, Toolkit } from "effect/ai"
import type { AssembledTurn } from "./Assembler.js"
import { excerpt, ToolArgumentsInvalid, UnknownTool } from "./AssemblyError.js"

/**
 * A released call whose arguments were decoded by its tool's parameters Schema.
 *
 * - `params`: the decoded parameters (the Schema's `Type`).
 * - `arguments`: the validated arguments as JSON (the parsed object the model sent).
 *
 * @since 0.1.0
 * @category models
 */
export interface ValidatedToolCall<T extends Tool.Any = Tool.Any> {
  readonly index: number
  readonly id: string | null
  readonly name: T["name"]
  readonly tool: T
  readonly params: Tool.Parameters<T>
  readonly arguments: Readonly<Record<string, unknown>>
  readonly argumentsText: string
}

/**
 * One validated call for each tool of a toolkit, as a union.
 *
 * @since 0.1.0
 * @category models
 */
export type ValidatedToolCallOf<Tools extends Record<string, Tool.Any>> = {
  [K in keyof Tools]: ValidatedToolCall<Tools[K]>
}[keyof Tools]

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const formatPath = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string => {
  let out = ""
  for (const segment of path) {
    const key = typeof segment === "object" ? segment.key : segment
    out += typeof key === "number" ? `[${key}]` : out === "" ? String(key) : `.${String(key)}`
  }
  return out
}

/**
 * Validates every call of a completed turn against the toolkit.
 *
 * Fails with `UnknownTool` (the name is not in the toolkit) or `ToolArgumentsInvalid` (the
 * parameters Schema rejects the arguments; carries the first issue's path and every issue's
 * message) for the first bad call in index order.
 *
 * @since 0.1.0
 * @category validation
 */
export const validate =
  <Tools extends Record<string, Tool.Any>>(toolkit: Toolkit.Toolkit<Tools>) =>
  (turn: AssembledTurn): Effect.Effect<ReadonlyArray<ValidatedToolCallOf<Tools>>, UnknownTool | ToolArgumentsInvalid> =>
    Effect.gen(function*() {
      const tools = toolkit.tools as Record<string, Tool.Any>
      const out: Array<ValidatedToolCall> = []
      for (const call of turn.toolCalls) {
        const tool = Object.hasOwn(tools, call.name) ? tools[call.name] : undefined
        if (tool === undefined) {
          return yield* new UnknownTool({
            index: call.index,
            id: call.id,
            toolName: call.name,
            available: Object.keys(tools)
          })
        }
        const decoded = Schema.decodeUnknownExit(tool.parametersSchema as Schema.Codec<unknown, unknown>, {
          errors: "all"
        })(call.arguments)
        if (decoded._tag === "Failure") {
          const error = decoded.cause.reasons.find((r) => r._tag === "Fail")?.error
          const issue = Schema.isSchemaError(error) ? error.issue : undefined
          const first = issue === undefined ? undefined : formatter(issue).issues[0]
          return yield* new ToolArgumentsInvalid({
            index: call.index,
            id: call.id,
            toolName: call.name,
            path: first?.path ? formatPath(first.path) : "",
            issues: excerpt(issue === undefined ? "the parameters schema failed" : String(error?.message))
          })
        }
        out.push({
          index: call.index,
          id: call.id,
          name: call.name,
          tool,
          params: decoded.value as never,
          arguments: call.arguments,
          argumentsText: call.argumentsText
        })
      }
      return out as unknown as ReadonlyArray<ValidatedToolCallOf<Tools>>
    })
