/**
 * The request body of the OpenAI Responses API (`POST /responses`), from a provider-neutral
 * `ModelStream.ModelRequest`. The shapes follow the API reference,
 * https://platform.openai.com/docs/api-reference/responses/create, and the function-calling
 * guide, https://platform.openai.com/docs/guides/function-calling?api-mode=responses (openai-node's
 * `ResponseCreateParams` and `ResponseInputItem` types say the same), as {@link ResponsesRequest}
 * writes them. The conversation is the `input` list, one item per message or call, in prompt
 * order (the request is stateless: no `previous_response_id`):
 *
 * - A system message as `{ role: "system", content }`, a user message as `{ role: "user",
 *   content }` (a string for one text part, `[{ type: "input_text", text }]` for several).
 * - An assistant message as its parts in order: each non-empty text as `{ role: "assistant",
 *   content }`, each tool call as a `{ type: "function_call", call_id, name, arguments }` item,
 *   `arguments` the exact JSON text the model sent (`ModelStream.toolCallPart`). A call the
 *   provider gave no id gets `toolgate_<message>_<call>` as its `call_id`.
 * - Each tool result as a `{ type: "function_call_output", call_id, output }` item right after
 *   the calls, in their order, `output` the exact JSON text the executor stored. Responses has no
 *   failure flag: a typed failure is its stored JSON text, which says what failed.
 * - `tools`: `{ type: "function", name, description, parameters, strict }`. The API treats a
 *   function tool as strict unless told otherwise, which refuses every schema with an open
 *   object or an optional property; so `strict` is always sent: `true` for a tool that asks for
 *   it, with its schema made ready for strict mode (every object closed), `false` otherwise. A
 *   strict tool whose schema cannot be strict (an optional property, a map, a keyword strict
 *   mode refuses) fails the request with `UnsupportedRequest` naming the tool and the problem,
 *   and nothing is sent.
 * - `tool_choice`: `auto`, `none`, `required`, or `{ type: "function", name }`.
 * - `max_output_tokens`: the output token limit.
 * - `stream`: `Config.stream` (default `true`); a non-streaming request is answered with one
 *   `response` object.
 * - `providerOptions`, merged last: its members win (`instructions`, `store`, `reasoning`, …),
 *   and a member set to `undefined` is left out of the JSON; `stream` is the config's.
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

/**
 * Schema of the request body this encoder writes, from the API reference (the members it
 * writes; a `providerOptions` member is outside it).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResponsesRequest = Schema.Struct({
  model: Schema.String,
  input: Schema.Array(Schema.Union([
    Schema.Struct({
      role: Schema.Literals(["system", "user"]),
      content: Schema.Union([
        Schema.String,
        Schema.Array(Schema.Struct({ type: Schema.Literal("input_text"), text: Schema.String })).check(
          Schema.isMinLength(1)
        )
      ])
    }),
    Schema.Struct({ role: Schema.Literal("assistant"), content: Schema.String.check(Schema.isNonEmpty()) }),
    Schema.Struct({
      type: Schema.Literal("function_call"),
      call_id: Schema.String.check(Schema.isNonEmpty()),
      name: Schema.String,
      arguments: Schema.String
    }),
    Schema.Struct({
      type: Schema.Literal("function_call_output"),
      call_id: Schema.String.check(Schema.isNonEmpty()),
      output: Schema.String
    })
  ])),
  tools: Schema.optionalKey(Schema.Array(Schema.Struct({
    type: Schema.Literal("function"),
    name: Schema.String,
    description: Schema.optionalKey(Schema.String),
    parameters: Schema.Record(Schema.String, Schema.Unknown),
    strict: Schema.Boolean
  }))),
  tool_choice: Schema.optionalKey(Schema.Union([
    Schema.Literals(["auto", "none", "required"]),
    Schema.Struct({ type: Schema.Literal("function"), name: Schema.String })
  ])),
  max_output_tokens: Schema.optionalKey(Schema.Number),
  stream: Schema.Boolean
})

const content = (texts: ReadonlyArray<string>) =>
  texts.length === 1 ? texts[0]! : texts.map((text) => ({ type: "input_text", text }))

const toolChoice = (choice: ModelStream.ToolChoice) =>
  typeof choice === "string" ? choice : { type: "function", name: choice.tool }

/**
 * The JSON body of a Responses request. Fails with `UnsupportedRequest` for a prompt part it
 * cannot carry or a strict tool whose schema cannot be strict (see the module docs).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (
  request: ModelStream.ModelRequest,
  config: Config
): Result.Result<Record<string, unknown>, ModelStreamError.UnsupportedRequest> => {
  const turns = History.read("openai-responses", request.prompt)
  if (Result.isFailure(turns)) return Result.fail(turns.failure)
  const input: Array<unknown> = []
  for (const turn of turns.success) {
    switch (turn.role) {
      case "system":
        input.push({ role: "system", content: turn.text })
        break
      case "user":
        input.push({ role: "user", content: turn.texts.length === 0 ? "" : content(turn.texts) })
        break
      case "assistant":
        for (const part of turn.parts) {
          if (part.type === "text") {
            if (part.text !== "") input.push({ role: "assistant", content: part.text })
          } else {
            input.push({
              type: "function_call",
              call_id: part.call.id,
              name: part.call.name,
              arguments: part.call.argumentsText
            })
          }
        }
        break
      case "tool":
        for (const result of turn.results) {
          input.push({ type: "function_call_output", call_id: result.call.id, output: result.text })
        }
        break
    }
  }
  const tools = functionTools("openai-responses", request.tools ?? [], StrictSchema.openAi)
  if (Result.isFailure(tools)) return Result.fail(tools.failure)
  return Result.succeed({
    model: config.model,
    input,
    ...(tools.success.length === 0 ? {} : {
      tools: tools.success.map((tool) => ({
        type: "function",
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        parameters: tool.parameters,
        strict: tool.strict === true
      }))
    }),
    ...(request.toolChoice === undefined ? {} : { tool_choice: toolChoice(request.toolChoice) }),
    ...(request.maxOutputTokens === undefined ? {} : { max_output_tokens: request.maxOutputTokens }),
    ...request.providerOptions,
    stream: config.stream ?? true
  })
}
