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
import { Context, type JsonSchema, type Stream } from "effect"
import { type Prompt, Tool, type Toolkit } from "effect/ai"
import type { ModelStreamError } from "./ModelStreamError.js"
import type { StreamEvent } from "./StreamEvent.js"

/**
 * A tool as a model is told of it.
 *
 * - `name`: what the model calls it by.
 * - `description`: what it does, for the model.
 * - `parameters`: the JSON Schema of its arguments (an object schema).
 * - `strict`: ask the provider to constrain the arguments to the schema (OpenAI's strict mode);
 *   absent: the provider's default.
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
