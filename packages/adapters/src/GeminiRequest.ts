/**
 * The request body of Gemini `models/{model}:generateContent` and
 * `models/{model}:streamGenerateContent?alt=sse` (Gemini API and Vertex AI), from a
 * provider-neutral `ModelStream.ModelRequest`. The shapes follow the API reference,
 * https://ai.google.dev/api/generate-content#request-body and
 * https://ai.google.dev/api/caching#Content, and the function-calling guide,
 * https://ai.google.dev/gemini-api/docs/function-calling, as {@link GenerateContentRequest}
 * writes them. Streaming or not is the method ({@link path}), not the body:
 *
 * - `systemInstruction`: the system messages' text, one `{ text }` part each, in order (Gemini
 *   has no system turn inside `contents`, so a system message anywhere in the prompt lands here).
 * - `contents`: a user message as `{ role: "user", parts: [{ text }, …] }`; an assistant message
 *   as `{ role: "model", parts }` with its parts in order: `{ text }` (empty texts left out) and
 *   `{ functionCall: { id, name, args } }`, `args` the JSON object the model sent (parsed from
 *   its exact arguments text), `id` only when the model gave one (the Gemini API usually gives
 *   none).
 * - The tool results as the next `{ role: "user", parts }` content: one
 *   `{ functionResponse: { id, name, response } }` part per call, in the calls' order (a result
 *   without an id is paired with its call by name and position, which is how Gemini matches them
 *   too), `response` `{ output: … }` for a success and `{ error: … }` for a typed failure (the
 *   keys the API reference names for a function's output and its error details), the value
 *   parsed from the exact JSON text the executor stored (the same text always writes the same
 *   bytes).
 * - `tools`: one `{ functionDeclarations: [{ name, description, parametersJsonSchema }] }`, the
 *   parameters as the JSON Schema they are (`parametersJsonSchema`; `parameters` would take
 *   Gemini's OpenAPI subset). Gemini has no per-tool strict mode: `strict` is not sent.
 * - `toolConfig.functionCallingConfig`: `AUTO`, `NONE`, `ANY` for `required`, and `ANY` with
 *   `allowedFunctionNames: [name]` for a named tool.
 * - `generationConfig.maxOutputTokens`: the output token limit.
 * - `providerOptions`, merged last: its members win (`safetySettings`, a whole
 *   `generationConfig`, …), and a member set to `undefined` is left out of the JSON.
 *
 * Not carried: a Gemini 3 `thoughtSignature` of an earlier call (the decoders do not keep it;
 * models that require it answer such a history with a 400), and `UnsupportedRequest` (see
 * `internal/history`): a file part, a tool approval, a provider-executed call, arguments that are
 * not a JSON object, a result that answers no call or a call without a result.
 *
 * @since 0.1.0
 */
import type { ModelStream, ModelStreamError } from "@toolgate/core"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as History from "./internal/history.js"

const FunctionCall = Schema.Struct({
  id: Schema.optionalKey(Schema.String.check(Schema.isNonEmpty())),
  name: Schema.String,
  args: Schema.Record(Schema.String, Schema.Unknown)
})

const FunctionResponse = Schema.Struct({
  id: Schema.optionalKey(Schema.String.check(Schema.isNonEmpty())),
  name: Schema.String,
  response: Schema.Union([
    Schema.Struct({ output: Schema.Unknown }),
    Schema.Struct({ error: Schema.Unknown })
  ])
})

/**
 * Schema of the request body this encoder writes, from the API reference (the members it
 * writes; a `providerOptions` member is outside it).
 *
 * @since 0.1.0
 * @category schemas
 */
export const GenerateContentRequest = Schema.Struct({
  systemInstruction: Schema.optionalKey(Schema.Struct({
    parts: Schema.Array(Schema.Struct({ text: Schema.String })).check(Schema.isMinLength(1))
  })),
  contents: Schema.Array(Schema.Union([
    Schema.Struct({
      role: Schema.Literal("user"),
      parts: Schema.Union([
        Schema.Array(Schema.Struct({ text: Schema.String })),
        Schema.Array(Schema.Struct({ functionResponse: FunctionResponse }))
      ]).check(Schema.isMinLength(1))
    }),
    Schema.Struct({
      role: Schema.Literal("model"),
      parts: Schema.Array(Schema.Union([
        Schema.Struct({ text: Schema.String.check(Schema.isNonEmpty()) }),
        Schema.Struct({ functionCall: FunctionCall })
      ])).check(Schema.isMinLength(1))
    })
  ])),
  tools: Schema.optionalKey(Schema.Tuple([Schema.Struct({
    functionDeclarations: Schema.Array(Schema.Struct({
      name: Schema.String,
      description: Schema.optionalKey(Schema.String),
      parametersJsonSchema: Schema.Record(Schema.String, Schema.Unknown)
    }))
  })])),
  toolConfig: Schema.optionalKey(Schema.Struct({
    functionCallingConfig: Schema.Struct({
      mode: Schema.Literals(["AUTO", "ANY", "NONE"]),
      allowedFunctionNames: Schema.optionalKey(Schema.Array(Schema.String))
    })
  })),
  generationConfig: Schema.optionalKey(Schema.Struct({ maxOutputTokens: Schema.Number }))
})

/**
 * The method path of a request for `model`, below the API base
 * (`https://generativelanguage.googleapis.com/v1beta`, or Vertex AI's
 * `…/projects/P/locations/L/publishers/google`): `/models/MODEL:streamGenerateContent?alt=sse`
 * for a stream, `/models/MODEL:generateContent` for one JSON answer. A `models/` prefix on the
 * name is dropped.
 *
 * @since 0.1.0
 * @category requests
 */
export const path = (model: string, stream: boolean): string => {
  const name = model.startsWith("models/") ? model.slice("models/".length) : model
  return stream ? `/models/${name}:streamGenerateContent?alt=sse` : `/models/${name}:generateContent`
}

const functionCallingConfig = (choice: ModelStream.ToolChoice) =>
  choice === "auto"
    ? { mode: "AUTO" }
    : choice === "none"
    ? { mode: "NONE" }
    : choice === "required"
    ? { mode: "ANY" }
    : { mode: "ANY", allowedFunctionNames: [choice.tool] }

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * The JSON body of a `generateContent` / `streamGenerateContent` request. Fails with
 * `UnsupportedRequest` for a prompt part it cannot carry (see the module docs).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (
  request: ModelStream.ModelRequest
): Result.Result<Record<string, unknown>, ModelStreamError.UnsupportedRequest> => {
  const turns = History.read("gemini", request.prompt)
  if (Result.isFailure(turns)) return Result.fail(turns.failure)
  const system: Array<{ text: string }> = []
  const contents: Array<unknown> = []
  for (const turn of turns.success) {
    switch (turn.role) {
      case "system":
        system.push({ text: turn.text })
        break
      case "user":
        contents.push({
          role: "user",
          parts: turn.texts.length === 0 ? [{ text: "" }] : turn.texts.map((text) => ({ text }))
        })
        break
      case "assistant": {
        const parts: Array<unknown> = []
        for (const part of turn.parts) {
          if (part.type === "text") {
            if (part.text !== "") parts.push({ text: part.text })
            continue
          }
          const args = History.argumentsObject("gemini", part.call)
          if (Result.isFailure(args)) return Result.fail(args.failure)
          parts.push({
            functionCall: {
              ...(part.call.providerId ? { id: part.call.id } : {}),
              name: part.call.name,
              args: args.success
            }
          })
        }
        if (parts.length > 0) contents.push({ role: "model", parts })
        break
      }
      case "tool":
        contents.push({
          role: "user",
          parts: turn.results.map((result) => ({
            functionResponse: {
              ...(result.call.providerId ? { id: result.call.id } : {}),
              name: result.call.name,
              response: result.isFailure ? { error: parsed(result.text) } : { output: parsed(result.text) }
            }
          }))
        })
        break
    }
  }
  const tools = request.tools ?? []
  return Result.succeed({
    ...(system.length === 0 ? {} : { systemInstruction: { parts: system } }),
    contents,
    ...(tools.length === 0 ? {} : {
      tools: [{
        functionDeclarations: tools.map((tool) => ({
          name: tool.name,
          ...(tool.description === undefined ? {} : { description: tool.description }),
          parametersJsonSchema: tool.parameters
        }))
      }]
    }),
    ...(request.toolChoice === undefined
      ? {}
      : { toolConfig: { functionCallingConfig: functionCallingConfig(request.toolChoice) } }),
    ...(request.maxOutputTokens === undefined
      ? {}
      : { generationConfig: { maxOutputTokens: request.maxOutputTokens } }),
    ...request.providerOptions
  })
}
