/**
 * `effect/ai` stream parts to core events, so an Effect app that already streams with
 * `LanguageModel.streamText` puts toolgate's gate (and, through the runtime, exactly-once
 * execution) behind its model without changing its provider code:
 *
 * ```ts
 * model.streamText({ prompt, toolkit, disableToolCallResolution: true }).pipe(
 *   EffectAi.toStreamEvents,
 *   Assembler.assemble()
 * )
 * ```
 *
 * Pass `disableToolCallResolution: true`: otherwise `LanguageModel` runs tool handlers itself as
 * soon as a call part arrives, before toolgate has seen the finish.
 *
 * Part mapping (`effect/ai` `Response` module; the part types are its `StreamPart` union):
 *
 * - `text-delta`: text.
 * - `tool-params-start` `{id, name}` opens a call keyed by its `id` (no index: calls are ordered
 *   by arrival); `tool-params-delta` `{id, delta}` appends to it; `tool-params-end` changes
 *   nothing. A delta for an id that was never started is a `ToolCallProtocolError` (the
 *   assembler's "a fragment that opens a call must have a name").
 * - `tool-call` `{id, name, params}`: for a call whose parameters were streamed it only confirms
 *   the name (a different name is a `ToolCallProtocolError`); the streamed text stays the
 *   arguments, so nothing is re-serialised or repaired. For a call that was not streamed, its
 *   `params` as JSON are the whole arguments (a value JSON cannot represent is a
 *   `MalformedStreamEvent`).
 * - Calls with `providerExecuted: true` ran on the provider's side: they are not client tool
 *   calls and are ignored, like Anthropic's `server_tool_use`.
 * - `finish` `{reason, usage}`: the finish signal. `stop` and `tool-calls` succeed, `length` is
 *   the token limit, anything else (`content-filter`, `error`, `pause`, `other`, `unknown`) is
 *   unexpected ({@link policy}). `effect/ai` has already normalised the provider's raw reason,
 *   so the reported finish reason is the normalised one.
 * - `error` `{error}`: a `ProviderStreamError` (code: the `AiError` reason tag, or the error's
 *   `_tag`, `code` or `type`).
 * - Everything else (`text-start`/`-end`, reasoning, `tool-result`, approvals, files, sources,
 *   `response-metadata`) changes nothing.
 *
 * A failure of the parts stream itself (an `AiError` in its error channel) passes through
 * unchanged.
 *
 * @since 0.1.0
 */
import { AssemblyError, FinishReason, type StreamEvent } from "@toolgate/core"
import type { Response, Tool } from "effect/ai"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { providerError, usage, writeJson } from "./internal/payload.js"

/**
 * The finish-reason policy of `effect/ai`'s normalised `FinishReason`.
 *
 * @since 0.1.0
 * @category policies
 */
export const policy: FinishReason.Policy = FinishReason.makePolicy("effect-ai", {
  success: ["stop", "tool-calls"],
  tokenLimit: ["length"]
})

/**
 * Any `effect/ai` stream part, whatever the toolkit and parameters mode.
 *
 * @since 0.1.0
 * @category models
 */
export type Part = Response.StreamPart<Record<string, Tool.Any>, Response.ToolParametersMode>

/** The code of an error part: an `AiError`'s reason tag, else the error's `_tag`, `code` or `type`. */
const errorCode = (error: unknown): string | null => {
  if (!Predicate.isObject(error)) return null
  const reason = error.reason
  if (Predicate.isObject(reason) && typeof reason._tag === "string") return AssemblyError.excerpt(reason._tag)
  for (const key of ["_tag", "code", "type"]) {
    const value = error[key]
    if (typeof value === "string" || typeof value === "number") return AssemblyError.excerpt(String(value))
  }
  return null
}

/**
 * A fresh per-stream translator: one part in, at most one core event out. Keeps the ids of the
 * calls whose parameters are streaming and of provider-executed calls.
 *
 * @since 0.1.0
 * @category decoding
 */
export const translator = (): (part: Part) => StreamEvent.StreamEvent | undefined => {
  const streamed = new Set<string>()
  const providerExecuted = new Set<string>()
  return (part) => {
    switch (part.type) {
      case "text-delta":
        return part.delta === "" ? undefined : { text: part.delta }
      case "tool-params-start": {
        if (part.providerExecuted) {
          providerExecuted.add(part.id)
          return undefined
        }
        streamed.add(part.id)
        return { toolCalls: [{ id: part.id, name: part.name }] }
      }
      case "tool-params-delta":
        return providerExecuted.has(part.id) ? undefined : { toolCalls: [{ id: part.id, argumentsDelta: part.delta }] }
      case "tool-call": {
        if (part.providerExecuted || providerExecuted.has(part.id)) return undefined
        if (streamed.has(part.id)) return { toolCalls: [{ id: part.id, name: part.name }] }
        if (part.params === undefined) return { toolCalls: [{ id: part.id, name: part.name }] }
        const args = writeJson(part.params)
        if (args === undefined) {
          return {
            failure: new AssemblyError.MalformedStreamEvent({
              finishReason: null,
              reason: AssemblyError.excerpt(
                `the parameters of tool call ${part.id} (${part.name}) cannot be written as JSON`
              ),
              excerpt: ""
            })
          }
        }
        return { toolCalls: [{ id: part.id, name: part.name, argumentsDelta: args }] }
      }
      case "finish": {
        const event: { finish: StreamEvent.Finish; usage?: StreamEvent.Usage } = {
          finish: { reason: part.reason, class: FinishReason.classify(policy, part.reason), terminal: true }
        }
        const reported = usage({
          inputTokens: part.usage.inputTokens.total,
          outputTokens: part.usage.outputTokens.total,
          cachedInputTokens: part.usage.inputTokens.cacheRead
        })
        if (reported !== undefined) event.usage = reported
        return event
      }
      case "error":
        return {
          failure: new AssemblyError.ProviderStreamError({
            finishReason: null,
            code: errorCode(part.error),
            providerMessage: providerError(part.error, []).providerMessage
          })
        }
      default:
        return undefined
    }
  }
}

/**
 * Turns a stream of `effect/ai` response parts (from `LanguageModel.streamText`) into core
 * events for `Assembler.assemble` / `Assembler.stream`. The parts stream's own failure passes
 * through unchanged.
 *
 * @since 0.1.0
 * @category decoding
 */
export const toStreamEvents = <E, R>(parts: Stream.Stream<Part, E, R>): Stream.Stream<StreamEvent.StreamEvent, E, R> =>
  Stream.suspend(() => {
    const translate = translator()
    return Stream.filterMap(parts, (part) => {
      const event = translate(part)
      return event === undefined ? Result.failVoid : Result.succeed(event)
    })
  })
