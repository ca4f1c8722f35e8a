/**
 * `toolgate run`: one prompt against a real endpoint (any OpenAI-compatible server, or the
 * Anthropic Messages API), through the whole pipeline: the text is printed as it streams, then
 * each tool call with its outcome. Tool handlers are HTTP webhooks named in the tools file
 * (`"webhook": "http://…"` on each tool), called with the downstream key as `Idempotency-Key`.
 *
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import { FinishProfile, HttpTransport } from "@toolgate/adapters"
import type { IdempotencyKey } from "@toolgate/core"
import { EmbeddedPostgres, IdempotencyStore, ToolCallPipeline, ToolExecutor } from "@toolgate/runtime"
import { Context, Effect, Layer, Redacted, Stream } from "effect"
import type { Tool } from "effect/ai"
import type * as ToolsFile from "./ToolsFile.js"
import * as Webhook from "./Webhook.js"

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
  readonly provider: "openai-chat" | "anthropic"
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
 * The provider request of a run, with its finish profile (`options.finishProfile`, else
 * `FinishProfile.forRequest`: `strict` for the first-party APIs).
 *
 * @since 0.1.0
 * @category requests
 */
export const request = (options: Options): HttpTransport.ProviderRequest => {
  const sent = endpoint(options)
  return { ...sent, finishProfile: options.finishProfile ?? FinishProfile.forRequest(sent) }
}

const endpoint = (options: Options): HttpTransport.ProviderRequest => {
  const base = options.baseUrl.replace(/\/+$/, "")
  const messages = [{ role: "user", content: options.prompt }]
  return options.provider === "anthropic"
    ? {
      provider: "anthropic",
      url: `${base}/messages`,
      apiKey: options.apiKey,
      headers: { "anthropic-version": "2023-06-01" },
      body: {
        model: options.model,
        max_tokens: options.maxTokens,
        stream: true,
        messages,
        tools: options.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }))
      }
    }
    : {
      provider: "openai-chat",
      url: `${base}/chat/completions`,
      apiKey: options.apiKey,
      body: {
        model: options.model,
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: options.maxTokens,
        messages,
        tools: options.tools.map((t) => ({
          type: "function",
          function: { name: t.name, description: t.description, parameters: t.parameters }
        }))
      }
    }
}

/**
 * Runs the prompt. Succeeds with whether every call ended `executed` or `replayed`; fails with
 * the pipeline's error.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (options: Options) =>
  Effect.gen(function*() {
    const handlers: Record<string, ReturnType<typeof Webhook.handler>> = {}
    for (const tool of options.tools) {
      handlers[tool.name] = Webhook.handler({ url: tool.webhook!, parse: (json) => json })
    }
    const sql = options.store === undefined
      ? EmbeddedPostgres.layer({ dataDir: options.dataDir })
      : PgClient.layer({ url: Redacted.make(options.store), maxConnections: 4 })
    const layer = ToolCallPipeline.layer.pipe(
      Layer.provide(
        ToolExecutor.layer(
          options.toolkit,
          handlers as unknown as Record<string, ToolExecutor.Handler<Tool.Any, never>>
        )
      ),
      Layer.provide(HttpTransport.layerNode),
      Layer.provide(IdempotencyStore.layerSql().pipe(Layer.provide(sql)))
    )
    const pipeline = Context.get(yield* Layer.build(layer), ToolCallPipeline.ToolCallPipeline)
    let allSettled = true
    yield* pipeline.run(request(options), { toolkit: options.toolkit, scope: options.scope }).pipe(
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
  }).pipe(Effect.scoped)
