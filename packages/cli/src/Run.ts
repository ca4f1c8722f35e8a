/**
 * `toolgate run`: one prompt against a real endpoint (any OpenAI-compatible server, or the
 * Anthropic Messages API), through the whole pipeline: the text is printed as it streams, then
 * each tool call with its outcome. Tool handlers are HTTP webhooks named in the tools file
 * (`"webhook": "http://…"` on each tool), called with the downstream key as `Idempotency-Key`.
 *
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import { type FinishProfile, HttpModelStream, HttpTransport, type ToolsFile } from "@toolgate/adapters"
import type { IdempotencyKey, ModelStream } from "@toolgate/core"
import { EmbeddedPostgres, IdempotencyStore, ToolCallPipeline, ToolExecutor, WebhookHandler } from "@toolgate/runtime"
import { Effect, Layer, Redacted, Stream } from "effect"
import { Prompt, type Tool } from "effect/ai"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClient from "effect/http/HttpClient"

/**
 * Options of a run.
 *
 * - `baseUrl`: the API base (`https://api.openai.com/v1`, `http://localhost:11434/v1`,
 *   `https://api.anthropic.com/v1`); `/chat/completions` or `/messages` is appended.
 * - `apiKey`: sent as the provider's key header; never printed.
 * - `scope`: tenant and turn of the intent keys: run the same prompt with the same scope again and
 *   every call is replayed, not re-executed.
 * - `dataDir` / `store`: the embedded store's directory, or a `postgres://` URL.
 * - `finishProfile`: which finish reasons release tool calls; default `strict` for
 *   `api.openai.com` and `api.anthropic.com`, `compatible` for every other base URL
 *   (`FinishProfile.forRequest`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly provider: HttpModelStream.Format
  readonly baseUrl: string
  readonly model: string
  readonly prompt: string
  readonly tools: ReadonlyArray<ToolsFile.Tool>
  readonly toolkit: Parameters<typeof ToolCallPipeline.runTurn>[1]["toolkit"]
  readonly scope: IdempotencyKey.Scope
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly dataDir: string
  readonly store: string | undefined
  readonly maxTokens: number
  readonly finishProfile?: FinishProfile.FinishProfile | undefined
  readonly write: (text: string) => void
  readonly warn: (text: string) => void
}

/**
 * The model stream of a run: the endpoint, its key, the model and the finish profile.
 *
 * @since 0.1.0
 * @category requests
 */
export const modelStream = (options: Options): HttpModelStream.Options => ({
  provider: options.provider,
  baseUrl: options.baseUrl,
  apiKey: options.apiKey,
  model: options.model,
  finishProfile: options.finishProfile
})

/**
 * The model request of a run: the prompt as one user message, the tools of the tools file, the
 * output token limit.
 *
 * @since 0.1.0
 * @category requests
 */
export const modelRequest = (options: Options): ModelStream.ModelRequest => ({
  prompt: Prompt.make(options.prompt),
  tools: options.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
  maxOutputTokens: options.maxTokens
})

/**
 * Runs the prompt. Succeeds with whether every call ended `executed` or `replayed`; fails with
 * the pipeline's error.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (options: Options) => {
  const handlers: Record<string, ToolExecutor.Handler<Tool.Any, HttpClient.HttpClient>> = {}
  for (const tool of options.tools) {
    handlers[tool.name] = WebhookHandler.handler({ url: tool.webhook!, parse: (json) => json })
  }
  const sql = options.store === undefined
    ? EmbeddedPostgres.layer({ dataDir: options.dataDir })
    : PgClient.layer({ url: Redacted.make(options.store), maxConnections: 4 })
  const layer = ToolCallPipeline.layer.pipe(
    Layer.provide(ToolExecutor.layer(options.toolkit, handlers).pipe(Layer.provide(FetchHttpClient.layer))),
    Layer.provide(HttpModelStream.layer(modelStream(options)).pipe(Layer.provide(HttpTransport.layerNode))),
    Layer.provide(IdempotencyStore.layerSql().pipe(Layer.provide(sql)))
  )
  return Effect.gen(function*() {
    const pipeline = yield* ToolCallPipeline.ToolCallPipeline
    let allSettled = true
    yield* pipeline.run(modelRequest(options), { toolkit: options.toolkit, scope: options.scope }).pipe(
      Stream.runForEach((output) =>
        Effect.sync(() => {
          switch (output._tag) {
            case "TextDelta":
              return options.write(output.text)
            case "AttemptFailed":
              return options.warn(
                `\n[attempt ${output.attempt} failed: ${output.error._tag}: ${output.error.message}; retrying in ${
                  Math.round(output.retryInMs)
                } ms]\n`
              )
            case "TurnCompleted": {
              const { calls, finishReason } = output.result
              options.write(`\n\nfinish reason: ${finishReason ?? "(none)"}\n`)
              options.write(calls.length === 0 ? "tool calls: none\n" : "tool calls:\n")
              for (const call of calls) {
                const o = call.outcome
                if (o._tag === "Failed") allSettled = false
                const outcome = o._tag === "Failed"
                  ? `failed: ${o.error._tag}: ${o.error.message}`
                  : `${o._tag.toLowerCase()}: ${JSON.stringify(o.value)}`
                options.write(`  ${call.name}(${JSON.stringify(call.arguments)}) → ${outcome}\n`)
              }
            }
          }
        })
      )
    )
    return allSettled
  }).pipe(Effect.provide(layer))
}
