/**
 * The request body of an OpenAI Chat Completions stream (`POST /chat/completions`, which every
 * OpenAI-compatible server takes: vLLM, Ollama, Groq, Mistral, Azure, OpenRouter, …), from a
 * provider-neutral `ModelStream.ModelRequest`:
 *
 * - `messages`: a system message as `{ role: "system", content }`; a user or assistant message as
 *   its text (`content` a string for one text part, an array of `{ type: "text", text }` for
 *   several); see `UnsupportedRequest` for what is not carried yet.
 * - `tools`: `{ type: "function", function: { name, description, parameters, strict } }`.
 * - `tool_choice`: `auto`, `none`, `required`, or `{ type: "function", function: { name } }`.
 * - `max_tokens`: the output token limit (the field every compatible server reads; OpenAI also
 *   reads `max_completion_tokens`, which reasoning models require: send it through
 *   `providerOptions` with `max_tokens: undefined`).
 * - `stream: true` and `stream_options: { include_usage: true }` (the usage chunk after the
 *   finish, https://platform.openai.com/docs/api-reference/chat/create#chat-create-stream_options).
 * - `providerOptions`, merged last: its members win, and a member set to `undefined` is left out
 *   of the JSON.
 *
 * @since 0.1.0
 */
import type { ModelStream, ModelStreamError } from "@toolgate/core"
import { Result } from "effect"
import { textsOf } from "./internal/promptText.js"

/**
 * What the body needs beside the request: the model name.
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly model: string
}

const content = (texts: ReadonlyArray<string>) =>
  texts.length === 1 ? texts[0]! : texts.map((text) => ({ type: "text", text }))

const toolChoice = (choice: ModelStream.ToolChoice) =>
  typeof choice === "string" ? choice : { type: "function", function: { name: choice.tool } }

/**
 * The JSON body of a streamed Chat Completions request. Fails with `UnsupportedRequest` for a
 * prompt part it cannot carry (see the module docs).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (
  request: ModelStream.ModelRequest,
  config: Config
): Result.Result<Record<string, unknown>, ModelStreamError.UnsupportedRequest> => {
  const messages: Array<unknown> = []
  for (const [i, message] of request.prompt.content.entries()) {
    const texts = textsOf("openai-chat", message, i)
    if (Result.isFailure(texts)) return Result.fail(texts.failure)
    messages.push({
      role: message.role,
      content: message.role === "system" ? texts.success[0] : content(texts.success)
    })
  }
  const tools = request.tools ?? []
  return Result.succeed({
    model: config.model,
    messages,
    ...(tools.length === 0 ? {} : {
      tools: tools.map((tool) => ({
        type: "function",
        function: {
          name: tool.name,
          ...(tool.description === undefined ? {} : { description: tool.description }),
          parameters: tool.parameters,
          ...(tool.strict === undefined ? {} : { strict: tool.strict })
        }
      }))
    }),
    ...(request.toolChoice === undefined ? {} : { tool_choice: toolChoice(request.toolChoice) }),
    ...(request.maxOutputTokens === undefined ? {} : { max_tokens: request.maxOutputTokens }),
    stream: true,
    stream_options: { include_usage: true },
    ...request.providerOptions
  })
}
