/**
 * The request body of an Anthropic Messages stream (`POST /v1/messages`,
 * https://docs.anthropic.com/en/api/messages), from a provider-neutral `ModelStream.ModelRequest`:
 *
 * - `system`: the system messages' text (a string for one, an array of `{ type: "text", text }`
 *   blocks for several); the API takes no system message inside `messages`.
 * - `messages`: user and assistant messages as their text (`content` a string for one text part,
 *   an array of text blocks for several); see `UnsupportedRequest` for what is not carried yet.
 * - `tools`: `{ name, description, input_schema }` (the Messages API has no per-tool strict mode:
 *   `strict` is not sent).
 * - `tool_choice`: `{ type: "auto" }`, `{ type: "none" }`, `{ type: "any" }` for `required`,
 *   `{ type: "tool", name }`.
 * - `max_tokens`: required by the API: the request's `maxOutputTokens`, else the config's
 *   `maxOutputTokens` (default 4,096).
 * - `stream: true`.
 * - `providerOptions`, merged last: its members win, and a member set to `undefined` is left out
 *   of the JSON.
 *
 * @since 0.1.0
 */
import type { ModelStream, ModelStreamError } from "@toolgate/core"
import { Result } from "effect"
import { textsOf } from "./internal/promptText.js"

/**
 * What the body needs beside the request: the model name, and the output token limit when the
 * request names none (default {@link defaultMaxOutputTokens}).
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly model: string
  readonly maxOutputTokens?: number | undefined
}

/**
 * The `max_tokens` of a request that names no limit: 4,096.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxOutputTokens = 4096

const content = (texts: ReadonlyArray<string>) =>
  texts.length === 1 ? texts[0]! : texts.map((text) => ({ type: "text", text }))

const toolChoice = (choice: ModelStream.ToolChoice) =>
  choice === "required" ? { type: "any" } : typeof choice === "string" ? { type: choice } : {
    type: "tool",
    name: choice.tool
  }

/**
 * The JSON body of a streamed Messages request. Fails with `UnsupportedRequest` for a prompt part
 * it cannot carry (see the module docs).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (
  request: ModelStream.ModelRequest,
  config: Config
): Result.Result<Record<string, unknown>, ModelStreamError.UnsupportedRequest> => {
  const system: Array<string> = []
  const messages: Array<unknown> = []
  for (const [i, message] of request.prompt.content.entries()) {
    const texts = textsOf("anthropic", message, i)
    if (Result.isFailure(texts)) return Result.fail(texts.failure)
    if (message.role === "system") system.push(...texts.success)
    else messages.push({ role: message.role, content: content(texts.success) })
  }
  const tools = request.tools ?? []
  return Result.succeed({
    model: config.model,
    max_tokens: request.maxOutputTokens ?? config.maxOutputTokens ?? defaultMaxOutputTokens,
    ...(system.length === 0 ? {} : { system: content(system) }),
    messages,
    ...(tools.length === 0 ? {} : {
      tools: tools.map((tool) => ({
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        input_schema: tool.parameters
      }))
    }),
    ...(request.toolChoice === undefined ? {} : { tool_choice: toolChoice(request.toolChoice) }),
    stream: true,
    ...request.providerOptions
  })
}
