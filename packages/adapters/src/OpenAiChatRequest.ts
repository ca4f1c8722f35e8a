/**
 * The request body of OpenAI Chat Completions (`POST /chat/completions`, which every
 * OpenAI-compatible server takes: vLLM, Ollama, Groq, Mistral, Azure, OpenRouter, …), from a
 * provider-neutral `ModelStream.ModelRequest`. The shapes follow the API reference,
 * https://platform.openai.com/docs/api-reference/chat/create, and the function-calling guide,
 * https://platform.openai.com/docs/guides/function-calling (openai-node's
 * `ChatCompletionCreateParams` types say the same), as {@link ChatCompletionRequest} writes them:
 *
 * - `messages`: a system message as `{ role: "system", content }`; a user message as its text
 *   (`content` a string for one text part, an array of `{ type: "text", text }` for several).
 * - An assistant message: its text as `content` (`null` when it has none but tool calls), and its
 *   tool calls as `tool_calls: [{ id, type: "function", function: { name, arguments } }]`, where
 *   `arguments` is the exact JSON text the model sent (`ModelStream.toolCallPart`), so a replayed
 *   turn sends the same bytes. A call the provider gave no id gets `toolgate_<message>_<call>`.
 * - Each tool result as a `{ role: "tool", tool_call_id, content }` message right after the
 *   assistant message, in the order of its calls, `content` the exact JSON text the executor
 *   stored. Chat Completions has no failure flag: a typed failure is its stored JSON text, which
 *   says what failed.
 * - `tools`: `{ type: "function", function: { name, description, parameters, strict } }`. A tool
 *   with `strict: true` gets its schema made ready for strict mode (every object closed with
 *   `additionalProperties: false`), or, when it cannot be strict (an optional property, a map, a
 *   keyword strict mode refuses, a root that is not one object), the request fails with
 *   `UnsupportedRequest` naming the tool and the first problem, and nothing is sent; `strict` is
 *   sent only when set.
 * - `tool_choice`: `auto`, `none`, `required`, or `{ type: "function", function: { name } }`.
 * - `max_tokens`: the output token limit (the field every compatible server reads; OpenAI also
 *   reads `max_completion_tokens`, which reasoning models require: send it through
 *   `providerOptions` with `max_tokens: undefined`).
 * - Streaming (`Config.stream`, default `true`): `stream: true` and
 *   `stream_options: { include_usage: true }` (the usage chunk after the finish,
 *   https://platform.openai.com/docs/api-reference/chat/create#chat-create-stream_options); a
 *   non-streaming request sends `stream: false` and no `stream_options` (which the API refuses
 *   without a stream).
 * - `providerOptions`, merged last: its members win, and a member set to `undefined` is left out
 *   of the JSON; `stream` and `stream_options` are the config's, whatever `providerOptions` say.
 *
 * `UnsupportedRequest` (see `internal/history`): a file part, a tool approval, a
 * provider-executed call, a result that answers no call or a call without a result.
 *
 * @since 0.1.0
 */
import type { ModelStream, ModelStreamError } from "@toolgate/core"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as History from "./internal/history.js"
import * as StrictSchema from "./internal/strictSchema.js"
import { functionTools } from "./internal/tools.js"

/**
 * What the body needs beside the request: the model name, and whether to ask for a stream
 * (default `true`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly model: string
  readonly stream?: boolean | undefined
}

const TextContent = Schema.Union([
  Schema.String,
  Schema.Array(Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }))
])

/**
 * Schema of the request body this encoder writes, from the API reference (the members it
 * writes; a `providerOptions` member is outside it).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatCompletionRequest = Schema.Struct({
  model: Schema.String,
  messages: Schema.Array(Schema.Union([
    Schema.Struct({ role: Schema.Literal("system"), content: Schema.String }),
    Schema.Struct({ role: Schema.Literal("user"), content: TextContent }),
    Schema.Struct({
      role: Schema.Literal("assistant"),
      content: Schema.NullOr(TextContent),
      tool_calls: Schema.optionalKey(
        Schema.Array(Schema.Struct({
          id: Schema.String.check(Schema.isNonEmpty()),
          type: Schema.Literal("function"),
          function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
        })).check(Schema.isMinLength(1))
      )
    }),
    Schema.Struct({
      role: Schema.Literal("tool"),
      tool_call_id: Schema.String.check(Schema.isNonEmpty()),
      content: Schema.String
    })
  ])),
  tools: Schema.optionalKey(Schema.Array(Schema.Struct({
    type: Schema.Literal("function"),
    function: Schema.Struct({
      name: Schema.String,
      description: Schema.optionalKey(Schema.String),
      parameters: Schema.Record(Schema.String, Schema.Unknown),
      strict: Schema.optionalKey(Schema.Boolean)
    })
  }))),
  tool_choice: Schema.optionalKey(Schema.Union([
    Schema.Literals(["auto", "none", "required"]),
    Schema.Struct({ type: Schema.Literal("function"), function: Schema.Struct({ name: Schema.String }) })
  ])),
  max_tokens: Schema.optionalKey(Schema.Number),
  stream: Schema.Boolean,
  stream_options: Schema.optionalKey(Schema.Struct({ include_usage: Schema.Boolean }))
})

const content = (texts: ReadonlyArray<string>) =>
  texts.length === 1 ? texts[0]! : texts.map((text) => ({ type: "text", text }))

const toolChoice = (choice: ModelStream.ToolChoice) =>
  typeof choice === "string" ? choice : { type: "function", function: { name: choice.tool } }

/**
 * The JSON body of a Chat Completions request. Fails with `UnsupportedRequest` for a prompt part
 * it cannot carry or a strict tool whose schema cannot be strict (see the module docs).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (
  request: ModelStream.ModelRequest,
  config: Config
): Result.Result<Record<string, unknown>, ModelStreamError.UnsupportedRequest> => {
  const turns = History.read("openai-chat", request.prompt)
  if (Result.isFailure(turns)) return Result.fail(turns.failure)
  const messages: Array<unknown> = []
  for (const turn of turns.success) {
    switch (turn.role) {
      case "system":
        messages.push({ role: "system", content: turn.text })
        break
      case "user":
        messages.push({ role: "user", content: content(turn.texts) })
        break
      case "assistant": {
        const texts = History.textsOf(turn.parts)
        const calls = History.callsOf(turn.parts)
        messages.push({
          role: "assistant",
          content: calls.length > 0 && texts.length === 0 ? null : content(texts),
          ...(calls.length === 0 ? {} : {
            tool_calls: calls.map((call) => ({
              id: call.id,
              type: "function",
              function: { name: call.name, arguments: call.argumentsText }
            }))
          })
        })
        break
      }
      case "tool":
        for (const result of turn.results) {
          messages.push({ role: "tool", tool_call_id: result.call.id, content: result.text })
        }
        break
    }
  }
  const tools = functionTools("openai-chat", request.tools ?? [], StrictSchema.openAi)
  if (Result.isFailure(tools)) return Result.fail(tools.failure)
  const stream = config.stream ?? true
  return Result.succeed({
    model: config.model,
    messages,
    ...(tools.success.length === 0 ? {} : {
      tools: tools.success.map((fn) => ({ type: "function", function: fn }))
    }),
    ...(request.toolChoice === undefined ? {} : { tool_choice: toolChoice(request.toolChoice) }),
    ...(request.maxOutputTokens === undefined ? {} : { max_tokens: request.maxOutputTokens }),
    ...request.providerOptions,
    stream,
    stream_options: stream ? { include_usage: true } : undefined
  })
}
