/**
 * The request body of the Anthropic Messages API (`POST /v1/messages`), from a provider-neutral
 * `ModelStream.ModelRequest`. The shapes follow the API reference,
 * https://docs.anthropic.com/en/api/messages, and the tool-use guide,
 * https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use (the
 * `MessageCreateParams` types of `@anthropic-ai/sdk` say the same), as {@link MessagesRequest}
 * writes them:
 *
 * - `system`: the system messages' text (a string for one, an array of `{ type: "text", text }`
 *   blocks for several); the API takes no system message inside `messages`.
 * - A user message as its text (`content` a string for one text part, an array of text blocks
 *   for several; empty texts left out, as everywhere: the API refuses empty text blocks).
 * - An assistant message as its blocks in order: `{ type: "text", text }` (empty texts left out:
 *   the API refuses empty text blocks) and `{ type: "tool_use", id, name, input }`, where `input`
 *   is the JSON object the model sent (parsed from its exact arguments text, so the same text
 *   always writes the same bytes). A call the provider gave no id gets `toolgate_<message>_<call>`.
 * - The tool results as the next user message: one `{ type: "tool_result", tool_use_id, content }`
 *   block per call, in the calls' order and before any text (the guide: tool results come first
 *   in the user turn), `content` the exact JSON text the executor stored, and `is_error: true`
 *   for a typed failure. A user message that follows the results joins that same user message
 *   after them (the API would merge two consecutive user turns anyway).
 * - `tools`: `{ name, description, input_schema }`, with `strict: true` for a tool that asks for
 *   strict mode (strict tool use,
 *   https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/strict-tool-use): its schema's
 *   objects are closed with `additionalProperties: false`; a map (`additionalProperties` a
 *   schema, `patternProperties`) cannot be, and the request fails with `UnsupportedRequest`
 *   naming the tool, before anything is sent.
 * - `tool_choice`: `{ type: "auto" }`, `{ type: "none" }`, `{ type: "any" }` for `required`,
 *   `{ type: "tool", name }`.
 * - `max_tokens`: required by the API: the request's `maxOutputTokens`, else the config's
 *   `maxOutputTokens` (default 4,096).
 * - `stream`: `Config.stream` (default `true`); a non-streaming request sends `stream: false` and
 *   is answered with one `message` object.
 * - `providerOptions`, merged last: its members win, and a member set to `undefined` is left out
 *   of the JSON; `stream` is the config's.
 *
 * `UnsupportedRequest` (see `internal/history`): a file part, a tool approval, a
 * provider-executed call, arguments that are not a JSON object, a result that answers no call or
 * a call without a result.
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
 * What the body needs beside the request: the model name, the output token limit when the
 * request names none (default {@link defaultMaxOutputTokens}), and whether to ask for a stream
 * (default `true`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly model: string
  readonly maxOutputTokens?: number | undefined
  readonly stream?: boolean | undefined
}

/**
 * The `max_tokens` of a request that names none: 4,096.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxOutputTokens = 4096

const TextBlock = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String.check(Schema.isNonEmpty()) })
const Blocks = <S extends Schema.Top>(block: S) => Schema.Array(block).check(Schema.isMinLength(1))

/**
 * Schema of the request body this encoder writes, from the API reference (the members it
 * writes; a `providerOptions` member is outside it).
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessagesRequest = Schema.Struct({
  model: Schema.String,
  max_tokens: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
  system: Schema.optionalKey(Schema.Union([Schema.String, Blocks(TextBlock)])),
  messages: Schema.Array(Schema.Union([
    Schema.Struct({
      role: Schema.Literal("user"),
      content: Schema.Union([
        Schema.String,
        Blocks(Schema.Union([
          TextBlock,
          Schema.Struct({
            type: Schema.Literal("tool_result"),
            tool_use_id: Schema.String.check(Schema.isPattern(/^[a-zA-Z0-9_-]+$/)),
            content: Schema.String,
            is_error: Schema.optionalKey(Schema.Literal(true))
          })
        ]))
      ])
    }),
    Schema.Struct({
      role: Schema.Literal("assistant"),
      content: Schema.Union([
        Schema.String,
        Schema.Array(Schema.Union([
          TextBlock,
          Schema.Struct({
            type: Schema.Literal("tool_use"),
            id: Schema.String.check(Schema.isPattern(/^[a-zA-Z0-9_-]+$/)),
            name: Schema.String,
            input: Schema.Record(Schema.String, Schema.Unknown)
          })
        ]))
      ])
    })
  ])),
  tools: Schema.optionalKey(Schema.Array(Schema.Struct({
    name: Schema.String,
    description: Schema.optionalKey(Schema.String),
    input_schema: Schema.Record(Schema.String, Schema.Unknown),
    strict: Schema.optionalKey(Schema.Boolean)
  }))),
  tool_choice: Schema.optionalKey(Schema.Union([
    Schema.Struct({ type: Schema.Literals(["auto", "none", "any"]) }),
    Schema.Struct({ type: Schema.Literal("tool"), name: Schema.String })
  ])),
  stream: Schema.Boolean
})

/** A string for one text, text blocks for several; empty texts are left out (the API refuses empty blocks). */
const content = (texts: ReadonlyArray<string>) => {
  const kept = texts.filter((text) => text !== "")
  return kept.length === 0 ? "" : kept.length === 1 ? kept[0]! : kept.map((text) => ({ type: "text", text }))
}

const toolChoice = (choice: ModelStream.ToolChoice) =>
  choice === "required" ? { type: "any" } : typeof choice === "string" ? { type: choice } : {
    type: "tool",
    name: choice.tool
  }

/**
 * The JSON body of a Messages request. Fails with `UnsupportedRequest` for a prompt part it
 * cannot carry or a strict tool whose schema cannot be strict (see the module docs).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (
  request: ModelStream.ModelRequest,
  config: Config
): Result.Result<Record<string, unknown>, ModelStreamError.UnsupportedRequest> => {
  const turns = History.read("anthropic", request.prompt)
  if (Result.isFailure(turns)) return Result.fail(turns.failure)
  const system: Array<string> = []
  const messages: Array<{ role: string; content: unknown }> = []
  /** The blocks of the user message that carries the last tool results, while it is the last one. */
  let results: Array<unknown> | undefined
  for (const turn of turns.success) {
    switch (turn.role) {
      case "system":
        system.push(turn.text)
        break
      case "user":
        if (results !== undefined) {
          for (const text of turn.texts) if (text !== "") results.push({ type: "text", text })
        } else {
          messages.push({ role: "user", content: content(turn.texts) })
        }
        break
      case "assistant": {
        const blocks: Array<unknown> = []
        for (const part of turn.parts) {
          if (part.type === "text") {
            if (part.text !== "") blocks.push({ type: "text", text: part.text })
            continue
          }
          const input = History.argumentsObject("anthropic", part.call)
          if (Result.isFailure(input)) return Result.fail(input.failure)
          blocks.push({ type: "tool_use", id: part.call.id, name: part.call.name, input: input.success })
        }
        messages.push({
          role: "assistant",
          content: turn.parts.every((part) => part.type === "text") ? content(History.textsOf(turn.parts)) : blocks
        })
        break
      }
      case "tool":
        results = turn.results.map((result) => ({
          type: "tool_result",
          tool_use_id: result.call.id,
          content: result.text,
          ...(result.isFailure ? { is_error: true } : {})
        }))
        messages.push({ role: "user", content: results })
        continue
    }
    if (turn.role !== "user") results = undefined
  }
  const tools = functionTools("anthropic", request.tools ?? [], StrictSchema.anthropic)
  if (Result.isFailure(tools)) return Result.fail(tools.failure)
  return Result.succeed({
    model: config.model,
    max_tokens: request.maxOutputTokens ?? config.maxOutputTokens ?? defaultMaxOutputTokens,
    ...(system.length === 0 ? {} : { system: content(system) }),
    messages,
    ...(tools.success.length === 0 ? {} : {
      tools: tools.success.map((tool) => ({
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        input_schema: tool.parameters,
        ...(tool.strict === true ? { strict: true } : {})
      }))
    }),
    ...(request.toolChoice === undefined ? {} : { tool_choice: toolChoice(request.toolChoice) }),
    ...request.providerOptions,
    stream: config.stream ?? true
  })
}
