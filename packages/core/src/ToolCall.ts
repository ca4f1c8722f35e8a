/**
 * Validation of a completed turn against the tools the caller declared. A tool is effect's own
 * `effect/ai` `Tool` (a name plus a parameters Schema and a success Schema), gathered in a
 * `Toolkit`, so an Effect app that already defines its tools for `LanguageModel` reuses them.
 *
 * All or nothing: the first call that names an unknown tool or has invalid arguments fails the
 * whole turn, and no call is returned. Its errors (`UnknownTool`, `ToolArgumentsInvalid`) live
 * here; `ToolValidator` in `@toolgate/adapters`, which validates against JSON Schemas, raises the
 * same classes.
 *
 * @since 0.1.0
 */
import type { Tool, Toolkit } from "effect/ai"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import type { AssembledTurn } from "./Assembler.js"
import { excerpt } from "./AssemblyError.js"

/**
 * A released call names a tool that is not in the toolkit.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownTool extends Schema.TaggedError<UnknownTool>()("UnknownTool", {
  index: Schema.Int,
  id: Schema.NullOr(Schema.String),
  toolName: Schema.String,
  /** The tool names the toolkit has. */
  available: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `tool call ${this.index} names an unknown tool ${JSON.stringify(this.toolName)} (known: ${
      this.available.join(", ") || "none"
    })`
  }
}

/**
 * A released call's arguments do not match its tool's parameters Schema (an effect Schema, or a
 * JSON Schema from a tool definition).
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolArgumentsInvalid extends Schema.TaggedError<ToolArgumentsInvalid>()("ToolArgumentsInvalid", {
  index: Schema.Int,
  id: Schema.NullOr(Schema.String),
  toolName: Schema.String,
  /** Where the first issue is, as a readable path (`contact.email`, `items[2]`), `""` at the root. */
  path: Schema.String,
  /** Every issue as `path: message`, joined with `; ` (bounded: about 200 characters, then how many more). */
  issues: Schema.String
}) {
  override get message(): string {
    return `tool call ${this.index} (${this.toolName}) has invalid arguments: ${this.issues}`
  }
}

/**
 * What validating a completed turn against a toolkit can fail with.
 *
 * @since 0.1.0
 * @category models
 */
export type ValidationError = UnknownTool | ToolArgumentsInvalid

/**
 * Whether a value is one of the {@link ValidationError}s.
 *
 * @since 0.1.0
 * @category guards
 */
export const isValidationError = (u: unknown): u is ValidationError =>
  u instanceof UnknownTool || u instanceof ToolArgumentsInvalid

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

/**
 * One problem with a call's arguments: where it is (object keys and array indices from the root
 * of the arguments; `[]` is the root) and what is wrong there.
 *
 * @since 0.1.0
 * @category models
 */
export interface ArgumentIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/**
 * A readable path: `contact.email`, `items[2].sku`, `["x-key"]`; `""` for the root. Array indices
 * are numbers; a key that is not an identifier is quoted as JSON.
 *
 * @since 0.1.0
 * @category validation
 */
export const formatPath = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string => {
  let out = ""
  for (const segment of path) {
    const key = typeof segment === "object" ? segment.key : segment
    if (typeof key === "number") out += `[${key}]`
    else if (typeof key === "string" && identifier.test(key)) out += out === "" ? key : `.${key}`
    else out += `[${JSON.stringify(String(key))}]`
  }
  return out
}

/** How many characters of issues an error lists (the rest is counted, not listed). */
const maxIssuesText = 200

const formatIssues = (issues: ReadonlyArray<ArgumentIssue>): string => {
  const lines: Array<string> = []
  let length = 0
  for (const issue of issues) {
    const where = formatPath(issue.path)
    const line = where === "" ? issue.message : `${where}: ${issue.message}`
    if (lines.includes(line)) continue
    if (lines.length > 0 && length + line.length + 2 > maxIssuesText) {
      const rest = issues.length - lines.length
      return `${lines.join("; ")}; and ${rest} more`
    }
    lines.push(line)
    length += line.length + 2
  }
  return excerpt(lines.join("; "))
}

/**
 * The `ToolArgumentsInvalid` of one call: the first issue's path, and every issue as
 * `path: message`, joined with `; ` and bounded (about 200 characters, then how many more).
 * Both validation paths, effect Schemas here and JSON Schemas in `@toolgate/adapters`
 * (`ToolValidator`), build their errors with it, so the same problem reads the same.
 *
 * @since 0.1.0
 * @category validation
 */
export const argumentsInvalid = (
  call: { readonly index: number; readonly id: string | null; readonly name: string },
  issues: ReadonlyArray<ArgumentIssue>
): ToolArgumentsInvalid =>
  new ToolArgumentsInvalid({
    index: call.index,
    id: call.id,
    toolName: call.name,
    path: issues.length === 0 ? "" : formatPath(issues[0]!.path),
    issues: issues.length === 0 ? "the arguments are invalid" : formatIssues(issues)
  })

const schemaIssues = (error: unknown): ReadonlyArray<ArgumentIssue> => {
  if (!Schema.isSchemaError(error)) return []
  return formatter(error.issue).issues.map((issue) => ({
    path: (issue.path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment),
    message: issue.message
  }))
}

/**
 * Validates every call of a completed turn against the toolkit.
 *
 * Fails with `UnknownTool` (the name is not in the toolkit) or `ToolArgumentsInvalid` (the
 * parameters Schema rejects the arguments; see {@link argumentsInvalid}) for the first bad call in
 * index order.
 *
 * @since 0.1.0
 * @category validation
 */
export const validate =
  <Tools extends Record<string, Tool.Any>>(toolkit: Toolkit.Toolkit<Tools>) =>
  (turn: AssembledTurn): Effect.Effect<ReadonlyArray<ValidatedToolCallOf<Tools>>, ValidationError> =>
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
          return yield* argumentsInvalid(
            call,
            schemaIssues(decoded.cause.reasons.find((r) => r._tag === "Fail")?.error)
          )
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
