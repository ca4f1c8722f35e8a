/**
 * Validation of a completed turn's tool calls against the JSON Schemas of their tool definitions
 * (`ToolDefinition`), compiled by ajv 8: JSON Schema 2020-12 (the default), 2019-09 and draft-07
 * (draft-06 as draft-07), with Gemini's OpenAPI 3.0 subset converted to 2020-12 when the
 * definitions are read.
 *
 * What is declared is what is validated, and nothing else happens to the value: every keyword of
 * the dialect (`additionalProperties: false`, `required`, `enum`, `pattern`, `$ref`, …), the known
 * `format`s asserted (ajv-formats: `date-time`, `date`, `time`, `email`, `uri`, `uuid`, `ipv4`,
 * `int32`, …; an unknown format is an annotation, as the specification says), unknown keywords
 * ignored; no coercion, no defaults, no removal, so a validated call's arguments are the very
 * object the model sent.
 *
 * Recursive schemas are supported when they recurse through the value (`properties`, `items`,
 * …: a tree, as OpenAI's strict mode documents with `"$ref": "#"`). A schema that applies itself
 * to the same value without consuming any of it (`{ "$ref": "#" }`, `$defs` A → B → A, or such a
 * loop through `allOf`/`anyOf`/`oneOf`/`not`/`if`) cannot be validated by any validator, and
 * {@link make} rejects it with a `ToolDefinitionError`, as it rejects an invalid schema, an
 * unsupported `$schema` and a `$ref` that names nothing.
 *
 * Two ways to use it, with the same verdicts and the same errors: {@link validate} (a turn in,
 * its calls out, all or nothing) and {@link toToolkit} (an `effect/ai` `Toolkit` whose
 * parameters Schemas run these validators and pass the arguments through unchanged, for
 * `ToolCall.validate`, the `ToolCallPipeline` and the `ToolExecutor`).
 *
 * @since 0.1.0
 */
import { type Assembler, IdempotencyKey, ToolCall } from "@toolgate/core"
import { Tool, Toolkit } from "effect/ai"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Compiler, issues } from "./internal/jsonSchema.js"
import { type ToolDefinition, ToolDefinitionError } from "./ToolDefinition.js"

/**
 * Compiled validators for a set of tool definitions.
 *
 * - `definitions`: the tools, in the order given.
 * - `check(name, args)`: the issues of one call's arguments (`[]` when they are valid), or
 *   `undefined` when no tool has that name. Arguments nested too deeply for the validator give
 *   one issue at the root.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolValidator {
  readonly definitions: ReadonlyArray<ToolDefinition>
  readonly check: (name: string, args: unknown) => ReadonlyArray<ToolCall.ArgumentIssue> | undefined
}

/**
 * Compiles the JSON Schema of every definition. Fails with `ToolDefinitionError` (naming the
 * tool) for a schema that is invalid for its dialect, declares an unsupported `$schema`, has a
 * `$ref` that names nothing in it, or applies itself to the same value without consuming any of
 * it; and for two definitions with one name.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  definitions: ReadonlyArray<ToolDefinition>
): Effect.Effect<ToolValidator, ToolDefinitionError> =>
  Effect.suspend(() => {
    const compiler = new Compiler()
    const validators = new Map<string, (args: unknown) => ReadonlyArray<ToolCall.ArgumentIssue>>()
    for (const definition of definitions) {
      if (validators.has(definition.name)) {
        return Effect.fail(new ToolDefinitionError({ tool: definition.name, reason: "it is defined twice" }))
      }
      const compiled = compiler.compile(definition.parameters)
      if (typeof compiled !== "function") {
        return Effect.fail(new ToolDefinitionError({ tool: definition.name, reason: compiled.reason }))
      }
      validators.set(definition.name, (args) => {
        try {
          return compiled(args) ? [] : issues(compiled.errors ?? [], args)
        } catch (error) {
          return [{
            path: [],
            message: error instanceof RangeError
              ? "are nested too deeply to validate"
              : `cannot be validated (${error instanceof Error ? error.message : String(error)})`
          }]
        }
      })
    }
    return Effect.succeed({
      definitions,
      check: (name, args) => validators.get(name)?.(args)
    })
  })

/**
 * Validates every call of a completed turn against its tool's JSON Schema. All or nothing: fails
 * with `UnknownTool` (no definition has the call's name) or `ToolArgumentsInvalid` (the first
 * issue's path and every issue, bounded; `ToolCall.argumentsInvalid`) for the first bad call in
 * index order; otherwise gives the turn's calls, their arguments untouched.
 *
 * @since 0.1.0
 * @category validation
 */
export const validate = (validator: ToolValidator) =>
(
  turn: Assembler.AssembledTurn
): Effect.Effect<
  ReadonlyArray<Assembler.AssembledToolCall>,
  ToolCall.UnknownTool | ToolCall.ToolArgumentsInvalid
> =>
  Effect.suspend((): Effect.Effect<
    ReadonlyArray<Assembler.AssembledToolCall>,
    ToolCall.UnknownTool | ToolCall.ToolArgumentsInvalid
  > => {
    for (const call of turn.toolCalls) {
      const found = validator.check(call.name, call.arguments)
      if (found === undefined) {
        return Effect.fail(
          new ToolCall.UnknownTool({
            index: call.index,
            id: call.id,
            toolName: call.name,
            available: validator.definitions.map((d) => d.name)
          })
        )
      }
      if (found.length > 0) return Effect.fail(ToolCall.argumentsInvalid(call, found))
    }
    return Effect.succeed(turn.toolCalls)
  })

/**
 * Options of {@link toToolkit}: the Schemas of each tool's result (default `Schema.Json`) and
 * failure (default `Schema.Never`), as the `ToolExecutor` records them.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolkitOptions<Success extends Schema.Constraint, Failure extends Schema.Constraint> {
  readonly success?: Success | undefined
  readonly failure?: Failure | undefined
}

/**
 * An `effect/ai` `Toolkit` of the definitions. Each tool is `Tool.dynamic` with its JSON Schema
 * (what `Tool.getJsonSchema` gives a model), and its parameters Schema accepts exactly what the
 * compiled validator accepts and decodes to the arguments themselves (the same object: nothing
 * stripped, defaulted or coerced). Its issues are the validator's, so `ToolCall.validate` on this
 * toolkit fails with the same `ToolArgumentsInvalid` as {@link validate}. A definition's key
 * policy (its `"idempotency"` member) becomes the tool's `IdempotencyKey.Policy` annotation, so
 * the `ToolExecutor` keys its calls by it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toToolkit = <
  Success extends Schema.Constraint = typeof Schema.Json,
  Failure extends Schema.Constraint = typeof Schema.Never
>(
  validator: ToolValidator,
  options: ToolkitOptions<Success, Failure> = {}
): Toolkit.Toolkit<Record<string, Tool.Any>> => {
  const tools = validator.definitions.map((definition): Tool.Any => {
    const name = definition.name
    const parametersSchema = Schema.Unknown.check(Schema.makeFilter((args: unknown) => {
      const found = validator.check(name, args) ?? []
      return found.map((issue) => ({ path: issue.path, issue: issue.message }))
    }, { expected: `arguments valid for the JSON Schema of ${name}` }))
    const plain = Tool.dynamic(name, {
      description: definition.description,
      parameters: definition.parameters,
      success: options.success ?? Schema.Json,
      failure: options.failure ?? Schema.Never
    })
    const dynamic = definition.keyPolicy === undefined
      ? plain
      : plain.annotate(IdempotencyKey.Policy, definition.keyPolicy)
    // Tool.dynamic keeps the JSON Schema for the model but does not validate against it (its
    // parameters Schema is Unknown); the same tool, with the validating Schema.
    return Object.assign(Object.create(Object.getPrototypeOf(dynamic)), dynamic, { parametersSchema }) as Tool.Any
  })
  return Toolkit.make(...tools) as unknown as Toolkit.Toolkit<Record<string, Tool.Any>>
}
