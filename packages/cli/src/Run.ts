/**
 * `toolgate run`: one prompt against a real endpoint (any OpenAI-compatible server, or the
 * Anthropic Messages API), through the agent loop: each step's text is printed as it streams, then
 * each of its tool calls with its outcome; the results go back to the model until it answers
 * (or `--max-steps`). Tool handlers are HTTP webhooks named in the tools file (`"webhook":
 * "http://…"` on each tool), called with the downstream key as `Idempotency-Key`. Every step is
 * journaled: running the same scope again replays the steps and the calls instead of asking and
 * executing again.
 *
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import { type FinishProfile, HttpModelStream, HttpTransport, type ToolsFile } from "@toolgate/adapters"
import type { IdempotencyKey, ModelStream } from "@toolgate/core"
import {
  Agent,
  EmbeddedPostgres,
  IdempotencyStore,
  StepJournal,
  type ToolCallPipeline,
  ToolExecutor,
  WebhookHandler
} from "@toolgate/runtime"
import { Prompt, type Tool } from "effect/ai"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"

/**
 * Options of a run.
 *
 * - `baseUrl`: the API base (`https://api.openai.com/v1`, `http://localhost:11434/v1`,
 *   `https://api.anthropic.com/v1`); `/chat/completions` or `/messages` is appended.
 * - `apiKey`: sent as the provider's key header; never printed.
 * - `scope`: tenant and turn of the intent keys and of the step journal: run the same prompt with
 *   the same scope again and every step is replayed, every call replayed, not re-executed.
 * - `dataDir` / `store`: the embedded store's directory, or a `postgres://` URL.
 * - `maxSteps`: the most model steps of the turn (`Agent.RunOptions.maxSteps`).
 * - `finishProfile`: which finish reasons release tool calls; default `strict` for
 *   `api.openai.com` and `api.anthropic.com`, `compatible` for every other base URL
 *   (`FinishProfile.forRequest`).
 * - `deadlineMs`: the turn's budget for streaming, every step's retries included (default 10 min);
 *   `budgets`: each stream attempt's first-byte and idle budgets, ms (`HttpTransport` defaults).
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
  readonly toolkit: Agent.RunOptions<Record<string, Tool.Any>>["toolkit"]
  readonly scope: IdempotencyKey.Scope
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly dataDir: string
  readonly store: string | undefined
  readonly maxTokens: number
  readonly maxSteps: number
  readonly finishProfile?: FinishProfile.FinishProfile | undefined
  readonly deadlineMs?: number | undefined
  readonly budgets?: { readonly firstByteMs?: number | undefined; readonly idleMs?: number | undefined } | undefined
  readonly write: (text: string) => void
  readonly warn: (text: string) => void
}

/**
 * The model stream of a run: the endpoint, its key, the model and the finish profile.
 *
 * @since 0.1.0
 * @category requests
 */
export const modelStream = (
  options: Pick<Options, "provider" | "baseUrl" | "apiKey" | "model" | "finishProfile" | "budgets">
): HttpModelStream.Options => ({
  provider: options.provider,
  baseUrl: options.baseUrl,
  apiKey: options.apiKey,
  model: options.model,
  finishProfile: options.finishProfile,
  budgets: {
    ...(options.budgets?.firstByteMs === undefined ? {} : { firstByteMs: options.budgets.firstByteMs }),
    ...(options.budgets?.idleMs === undefined ? {} : { idleMs: options.budgets.idleMs })
  }
})

const isWebhookFailure = (u: unknown): u is { readonly status: number; readonly message: string } =>
  typeof u === "object" && u !== null && typeof (u as { status?: unknown }).status === "number" &&
  typeof (u as { message?: unknown }).message === "string"

/**
 * How `run` prints one call's outcome (after `→ `): `executed: <result JSON>`, `replayed:
 * <result JSON>` (and, on the lines after, how the arguments differ from the recorded call's), a
 * webhook's refusal as `rejected by the webhook (<status>): <body excerpt>, recorded as a terminal
 * failure, will not be retried` (never "applied": the webhook changed nothing it said it did), or
 * `failed: <tag>: <message>`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderOutcome = (outcome: ToolCallPipeline.CallOutcome): string => {
  switch (outcome._tag) {
    case "Executed":
      return `executed: ${outcome.json}`
    case "Replayed": {
      const changes = outcome.argumentChanges
      if (changes === undefined) return `replayed: ${outcome.json}`
      const listed = changes.changes.map((c) => `      ${c.path}: ${c.recorded} → ${c.given}`)
      const more = changes.total > changes.changes.length
        ? [`      … and ${changes.total - changes.changes.length} more`]
        : []
      return [
        `replayed: ${outcome.json}`,
        "    the arguments differ from the recorded call's in free text; it was not executed again:",
        ...listed,
        ...more
      ].join("\n")
    }
    case "Failed": {
      const e = outcome.error
      if (e._tag === "ToolExecutionFailed" && e.classification === "applied" && isWebhookFailure(e.failure)) {
        const body = e.failure.message === "" ? "(empty body)" : JSON.stringify(e.failure.message)
        return e.replayed
          ? `rejected by the webhook (${e.failure.status}) earlier: ${body}; recorded as a terminal failure, replayed, not sent again`
          : `rejected by the webhook (${e.failure.status}): ${body}; recorded as a terminal failure, will not be retried`
      }
      return `failed: ${e._tag}: ${e.message}`
    }
  }
}

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
 * Runs the prompt through the agent loop. Succeeds with whether the model answered and every call
 * ended `executed` or `replayed`; fails with the turn's `Agent.AgentError` (`StepFailed` names the
 * step).
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
  const stores = Layer.mergeAll(IdempotencyStore.layerSql(), StepJournal.layerSql()).pipe(Layer.provide(sql))
  const layer = Agent.layer.pipe(
    Layer.provide(ToolExecutor.layer(options.toolkit, handlers).pipe(Layer.provide(FetchHttpClient.layer))),
    Layer.provide(HttpModelStream.layer(modelStream(options)).pipe(Layer.provide(HttpTransport.layerNode))),
    Layer.provide(stores)
  )
  return Effect.gen(function*() {
    const agent = yield* Agent.Agent
    let settled = true
    yield* agent.run(modelRequest(options), {
      toolkit: options.toolkit,
      scope: options.scope,
      deadlineMs: options.deadlineMs,
      maxSteps: options.maxSteps
    }).pipe(
      Stream.runForEach((output) =>
        Effect.sync(() => {
          switch (output._tag) {
            case "StepStarted":
              if (output.step > 1) options.write("\n")
              if (output.replayed) options.warn(`[step ${output.step}: replayed from the journal]\n`)
              return
            case "TextDelta":
              return options.write(output.text)
            case "AttemptFailed":
              return options.warn(
                `\n[step ${output.step}, attempt ${output.attempt} failed: ${output.error._tag}: ${output.error.message}; retrying in ${
                  Math.round(output.retryInMs)
                } ms]\n`
              )
            case "CallCompleted":
              return
            case "StepCompleted": {
              const { calls } = output.result
              if (calls.length === 0) return
              options.write("\ntool calls:\n")
              for (const call of calls) {
                if (call.outcome._tag === "Failed") settled = false
                options.write(`  ${call.name}(${JSON.stringify(call.arguments)}) → ${renderOutcome(call.outcome)}\n`)
              }
              return
            }
            case "TurnCompleted": {
              const { cost, finishReason, steps, stoppedBy } = output.result
              if (stoppedBy !== "answer") settled = false
              options.write(`\nfinish reason: ${finishReason ?? "(none)"}\n`)
              options.write(
                `steps: ${steps.length}${
                  stoppedBy === "max_steps" ? ` (stopped at --max-steps ${options.maxSteps}: no final answer)` : ""
                }; model requests: ${cost.modelRequests}; replayed from the journal: ${cost.stepsReplayed} (${cost.requestsSaved} requests saved)\n`
              )
            }
          }
        })
      )
    )
    return settled
  }).pipe(Effect.provide(layer))
}
