/**
 * A tools file (`toolgate inspect --tools FILE`, `toolgate run --tools FILE`): tool definitions in
 * any provider's shape (read by `ToolDefinition`: OpenAI Chat, OpenAI Responses, Anthropic,
 * Gemini, optionally wrapped as `{ "tools": [...] }`), their JSON Schemas compiled by
 * `ToolValidator`. A tool may carry `"webhook": "http(s)://…"` (beside `"function"` in the OpenAI
 * Chat shape): the URL that performs its calls (`WebhookHandler` in `@toolgate/runtime`), and
 * `"idempotency": { … }`, its key policy (read by `ToolDefinition`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as ToolDefinition from "./ToolDefinition.js"
import * as ToolValidator from "./ToolValidator.js"

/**
 * One tool of the file: its definition and its webhook URL, if any.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tool extends ToolDefinition.ToolDefinition {
  readonly webhook: string | undefined
}

/**
 * A read tools file: its tools in order and their compiled validators.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolsFile {
  readonly tools: ReadonlyArray<Tool>
  readonly validator: ToolValidator.ToolValidator
}

const webhookOf = (
  definition: ToolDefinition.ToolDefinition
): string | undefined | ToolDefinition.ToolDefinitionError => {
  const entry = definition.entry
  const inner = typeof entry.function === "object" && entry.function !== null
    ? (entry.function as Record<string, unknown>).webhook
    : undefined
  const webhook = entry.webhook ?? inner
  if (webhook === undefined) return undefined
  if (typeof webhook !== "string" || !URL.canParse(webhook) || !/^https?:$/.test(new URL(webhook).protocol)) {
    return new ToolDefinition.ToolDefinitionError({
      tool: definition.name,
      reason: `its "webhook" must be an http(s) URL, not ${JSON.stringify(webhook)}`
    })
  }
  return webhook
}

/**
 * Reads a tools file's text and compiles its schemas. Fails with `ToolDefinitionError` (one line)
 * for anything `ToolDefinition.parse` or `ToolValidator.make` rejects, and for a `webhook` that is
 * not an http(s) URL.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (text: string): Effect.Effect<ToolsFile, ToolDefinition.ToolDefinitionError> =>
  Effect.gen(function*() {
    const definitions = yield* ToolDefinition.parse(text)
    const tools: Array<Tool> = []
    for (const definition of definitions) {
      const webhook = webhookOf(definition)
      if (webhook instanceof ToolDefinition.ToolDefinitionError) return yield* webhook
      tools.push({ ...definition, webhook })
    }
    const validator = yield* ToolValidator.make(definitions)
    return { tools, validator }
  })
