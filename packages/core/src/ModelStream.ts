/**
 * What a model stream is: the interface the pipeline depends on. One `ModelRequest` (the
 * conversation as effect/ai's provider-neutral `Prompt`, the tools with their JSON Schemas, the
 * choice of tool, the output token limit, and provider options passed through as they are) and
 * what the caller grants one attempt (`Attempt`: the time left, an `AbortSignal`, the attempt's
 * number) become a stream of normalized `StreamEvent`s, which the assembler gates.
 *
 * Core defines the interface and its errors (`ModelStreamError`); an implementation supplies the
 * service as a layer: `@toolgate/adapters` implements it over HTTP for each provider wire format
 * (`HttpModelStream`), and an application may implement it over anything else that yields the
 * events of a turn (an `effect/ai` `LanguageModel`, a queue, a recording). The pipeline never
 * learns which.
 *
 * A conversation that carries earlier tool calls and their results holds them as effect/ai
 * parts built with {@link toolCallPart} and {@link toolResultPart}: they keep, beside the parsed
 * values, the exact JSON text the model sent as arguments and the exact JSON text the executor
 * stored as the result, so that an encoder sends those bytes back unchanged (a replayed turn
 * sends the same request as the first run).
 *
 * ```ts
 * const request: ModelStream.ModelRequest = {
 *   prompt: Prompt.make([{ role: "system", content: "You qualify inbound leads." }, { role: "user", content: "…" }]),
 *   tools: ModelStream.toolsOf(Crm),
 *   maxOutputTokens: 1024
 * }
 * ```
 *
 * @since 0.1.0
 */
import { Prompt, Tool, type Toolkit } from "effect/ai"
import * as Context from "effect/Context"
import type * as JsonSchema from "effect/JsonSchema"
import * as Predicate from "effect/Predicate"
import type * as Stream from "effect/Stream"
import type { ModelStreamError } from "./ModelStreamError.js"
import type { StreamEvent } from "./StreamEvent.js"

/**
 * A tool as a model is told of it.
 *
 * - `name`: what the model calls it by.
 * - `description`: what it does, for the model.
 * - `parameters`: the JSON Schema of its arguments (an object schema).
 * - `strict`: `true` asks the provider to constrain the arguments to the schema (OpenAI's and
 *   Anthropic's strict mode); the schema must then meet the provider's rules, or the encoder
 *   refuses the request (see the encoders in `@toolgate/adapters`). Absent or `false`: not
 *   strict (sent as `strict: false` where the provider would otherwise default to strict).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolSpec {
  readonly name: string
  readonly description?: string | undefined
  readonly parameters: JsonSchema.JsonSchema
  readonly strict?: boolean | undefined
}

/**
 * Which tool the model may or must call: `auto` (it decides), `none`, `required` (some tool), or
 * the tool named.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolChoice = "auto" | "none" | "required" | { readonly tool: string }

/**
 * One request for a model's streamed turn, in no provider's format.
 *
 * - `prompt`: the conversation (system, user, assistant and tool messages, with tool-call and
 *   tool-result parts): effect/ai's `Prompt` (`Prompt.make("…")` for one user message).
 * - `tools`: the tools the model may call (see {@link toolsOf} for an effect/ai `Toolkit`).
 * - `toolChoice`: default: the provider's (usually `auto`).
 * - `maxOutputTokens`: the output token limit; default: the implementation's.
 * - `providerOptions`: members merged into the provider's request body as they are, last (so they
 *   win): the model parameters a caller needs that this type does not model (`temperature`,
 *   `top_p`, `seed`, `metadata`, …), under the provider's own names.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelRequest {
  readonly prompt: Prompt.Prompt
  readonly tools?: ReadonlyArray<ToolSpec> | undefined
  readonly toolChoice?: ToolChoice | undefined
  readonly maxOutputTokens?: number | undefined
  readonly providerOptions?: Readonly<Record<string, unknown>> | undefined
}

/**
 * What the caller grants one attempt of a request.
 *
 * - `number`: 1 for the first attempt, 2 for the first retry, …
 * - `remainingMs`: what is left of the caller's total budget, in milliseconds (`Infinity`: none).
 *   The stream fails with `StreamTimeout` `total` (its `budgetMs` this value) when it has not
 *   reached its end event by then.
 * - `signal`: when it fires, the stream fails with `StreamAborted`.
 *
 * Per-read budgets (first byte, idle) belong to the implementation's configuration, not to the
 * attempt.
 *
 * @since 0.1.0
 * @category models
 */
export interface Attempt {
  readonly number: number
  readonly remainingMs: number
  readonly signal?: AbortSignal | undefined
}

/**
 * The model stream service.
 *
 * - `provider`: what the stream talks to (`openai-chat`, `anthropic`, …), for metrics and spans.
 * - `stream(request, attempt)`: a cold stream of the turn's events; each run sends a new request.
 *   It fails with a {@link ModelStreamError.ModelStreamError}; the failures the provider's body
 *   itself carries (a malformed event, a provider error in the stream) travel inside events
 *   (`StreamEvent.failure`) for the assembler to judge.
 *
 * @since 0.1.0
 * @category services
 */
export class ModelStream extends Context.Service<ModelStream, {
  readonly provider: string
  readonly stream: (
    request: ModelRequest,
    attempt: Attempt
  ) => Stream.Stream<StreamEvent, ModelStreamError>
}>()("@toolgate/core/ModelStream") {}

/**
 * The {@link ToolSpec}s of an effect/ai `Toolkit`, in its order: each tool's name, description
 * (`Tool.getDescription`), parameters as JSON Schema (`Tool.getJsonSchema`, draft 2020-12) and
 * strict mode (`Tool.Strict`, when annotated).
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolsOf = <Tools extends Record<string, Tool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>
): ReadonlyArray<ToolSpec> =>
  Object.values(toolkit.tools as Record<string, Tool.Any>).map((tool) => {
    const description = Tool.getDescription(tool)
    const strict = Tool.getStrictMode(tool)
    return {
      name: tool.name,
      parameters: Tool.getJsonSchema(tool),
      ...(description === undefined ? {} : { description }),
      ...(strict === undefined ? {} : { strict })
    }
  })

/**
 * The key of a `Prompt` part's `options` under which toolgate keeps the exact JSON text of a tool
 * call's arguments (`{ toolgate: { argumentsText } }`) and of a tool result
 * (`{ toolgate: { resultText } }`): what {@link toolCallPart} and {@link toolResultPart} write
 * and {@link argumentsTextOf} and {@link resultTextOf} read.
 *
 * @since 0.1.0
 * @category history
 */
export const partOptionsKey = "toolgate"

/**
 * A tool call as the history records it: the provider's id (`null` when the provider sent none,
 * as Gemini does), the tool's name, the arguments' JSON text exactly as the model sent it, and
 * their parsed value. An assembled or validated call (`Assembler.AssembledToolCall`,
 * `ToolCall.ValidatedToolCall`) is one.
 *
 * @since 0.1.0
 * @category history
 */
export interface HistoryCall {
  readonly id: string | null
  readonly name: string
  readonly argumentsText: string
  readonly arguments: unknown
}

/**
 * A tool result as the history records it: the id of the call it answers (`null` when the call
 * had none: the encoders then pair it with its call by name and position), the tool's name,
 * whether it is a failure (a typed error the model should see as one), and its JSON text exactly
 * as the executor stored it.
 *
 * @since 0.1.0
 * @category history
 */
export interface HistoryResult {
  readonly id: string | null
  readonly name: string
  readonly isFailure: boolean
  readonly resultText: string
}

/**
 * The effect/ai `tool-call` part of an assistant message for a call of the history: `id` the
 * provider's id (`""` when it sent none), `params` the parsed arguments, and the exact arguments
 * text under `options.toolgate.argumentsText`, which the encoders send back as it is (OpenAI's
 * `arguments` strings) or parse (Anthropic's `input`, Gemini's `args`).
 *
 * @since 0.1.0
 * @category history
 */
export const toolCallPart = (call: HistoryCall): Prompt.ToolCallPart =>
  Prompt.makePart("tool-call", {
    id: call.id ?? "",
    name: call.name,
    params: call.arguments,
    providerExecuted: false,
    options: { [partOptionsKey]: { argumentsText: call.argumentsText } }
  })

/**
 * The effect/ai `tool-result` part of a tool message for a result of the history: `id` the id of
 * the call it answers (`""` when that call had none), `isFailure`, `result` the parsed JSON (the
 * text itself when it is not JSON), and the exact text under `options.toolgate.resultText`, which
 * the encoders send as the result (OpenAI's `content` and `output` strings, Anthropic's
 * `tool_result` content) or parse (Gemini's `functionResponse.response`).
 *
 * @since 0.1.0
 * @category history
 */
export const toolResultPart = (result: HistoryResult): Prompt.ToolResultPart =>
  Prompt.makePart("tool-result", {
    id: result.id ?? "",
    name: result.name,
    isFailure: result.isFailure,
    result: parseOr(result.resultText),
    providerExecuted: false,
    options: { [partOptionsKey]: { resultText: result.resultText } }
  })

const parseOr = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const optionText = (options: Prompt.ProviderOptions, key: string): string | undefined => {
  const ours = options[partOptionsKey]
  return Predicate.isObject(ours) && typeof (ours as Record<string, unknown>)[key] === "string"
    ? (ours as Record<string, string>)[key]
    : undefined
}

/** `JSON.stringify`, or `undefined` when the value cannot be written (a cycle, a BigInt, a function). */
const writeJson = (value: unknown): string | undefined => {
  try {
    return JSON.stringify(value)
  } catch {
    return undefined
  }
}

/**
 * The arguments' JSON text of a `tool-call` part: the exact text {@link toolCallPart} kept, else
 * `JSON.stringify` of its `params` (`{}` when they are absent), as effect/ai's own providers write
 * it; `undefined` when the params cannot be written as JSON.
 *
 * @since 0.1.0
 * @category history
 */
export const argumentsTextOf = (part: Prompt.ToolCallPart): string | undefined =>
  optionText(part.options, "argumentsText") ?? writeJson(part.params ?? {})

/**
 * The result's JSON text of a `tool-result` part: the exact text {@link toolResultPart} kept,
 * else `JSON.stringify` of its `result` (`null` when it is absent), as effect/ai's own providers
 * write it; `undefined` when the result cannot be written as JSON.
 *
 * @since 0.1.0
 * @category history
 */
export const resultTextOf = (part: Prompt.ToolResultPart): string | undefined =>
  optionText(part.options, "resultText") ?? writeJson(part.result ?? null)
