/**
 * `toolgate inspect`: one captured provider stream through the adapter and the assembler, to
 * its public JSON document (`InspectResult`: one object, a stable interface) or a readable view.
 *
 * @since 0.1.0
 */
import type { FinishProfile } from "@toolgate/adapters"
import * as Provider from "@toolgate/adapters/Provider"
import type * as ToolValidator from "@toolgate/adapters/ToolValidator"
import { Assembler, AssemblyError, type ModelStreamError, ToolCall } from "@toolgate/core"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/**
 * The JSON `inspect --json` prints. A public interface: keep it stable.
 *
 * - `outcome`: `"complete"` (exit 0) or `"error"` (exit 2).
 * - `finishReason`: the raw first finish reason read, or `null`.
 * - `text`: all assistant text read, in every outcome.
 * - `toolCalls`: every released call (`id` is `null` when the provider sent none); `[]` on error.
 * - `error`: `null`, or the error's tag and message.
 *
 * @since 0.1.0
 * @category models
 */
export interface InspectResult {
  readonly outcome: "complete" | "error"
  readonly finishReason: string | null
  readonly text: string
  readonly toolCalls: ReadonlyArray<{ readonly id: string | null; readonly name: string; readonly arguments: unknown }>
  readonly error: null | { readonly _tag: string; readonly message: string }
}

/**
 * Options of {@link inspect}.
 *
 * @since 0.1.0
 * @category models
 */
export interface InspectOptions {
  readonly provider: Provider.Name | "auto"
  /** When given, released calls are validated against these tools' JSON Schemas (`UnknownTool`, `ToolArgumentsInvalid`). */
  readonly tools?: ToolValidator.ToolValidator | undefined
  /** Called once `auto` has recognised the format. */
  readonly onDetected?: ((name: Provider.Name) => void) | undefined
  readonly maxArgumentsBytes?: number | undefined
  /** Which finish reasons release tool calls. Default `compatible` (`FinishProfile.defaultProfile`). */
  readonly finishProfile?: FinishProfile.FinishProfile | undefined
}

/**
 * Inspects one response body, read as it streams: reading stops once a failure has decided the
 * verdict. Assembly and validation errors become the `error` outcome; the effect fails only with
 * errors of the body itself (`E`, reading the file) and with `NotAnEventStream` when the
 * body is not an event stream at all (a non-streaming JSON response, any other text), which is an
 * input error, not an outcome.
 *
 * @since 0.1.0
 * @category inspecting
 */
export const inspect = <E, R>(
  body: Stream.Stream<Uint8Array, E, R>,
  options: InspectOptions
): Effect.Effect<InspectResult, E | ModelStreamError.NotAnEventStream, R> =>
  Effect.suspend(() => {
    let text = ""
    let turn: Assembler.AssembledTurn | undefined
    const events = Provider.decode(options.provider, {
      onDetected: options.onDetected,
      finishProfile: options.finishProfile
    })(body)
    return events.pipe(
      Assembler.stream({ maxArgumentsBytes: options.maxArgumentsBytes }),
      Stream.runForEach((output) =>
        Effect.sync(() => {
          if (output._tag === "TextDelta") text += output.text
          else turn = output.turn
        })
      ),
      Effect.flatMap(() => {
        const completed = turn!
        const tools = options.tools
        return tools === undefined
          ? Effect.succeed(completed.toolCalls)
          : Effect.flatMap(
            // The validator's module (ajv) loads only for a run that validates.
            Effect.promise(() => import("@toolgate/adapters/ToolValidator")),
            (module) => module.validate(tools)(completed)
          )
      }),
      Effect.map((calls): InspectResult => ({
        outcome: "complete",
        finishReason: turn!.finishReason,
        text,
        toolCalls: calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
        error: null
      })),
      Effect.catchIf(
        (e): e is AssemblyError.AssemblyError | ToolCall.ValidationError =>
          AssemblyError.isAssemblyError(e) || ToolCall.isValidationError(e),
        (error) =>
          Effect.succeed<InspectResult>({
            outcome: "error",
            finishReason: "finishReason" in error ? error.finishReason : turn?.finishReason ?? null,
            text,
            toolCalls: [],
            error: { _tag: error._tag, message: error.message }
          })
      )
    )
  })

/**
 * The `--json` document of a result in pieces: the head, then one tool call at a time, then the
 * tail. Joined, they are exactly `JSON.stringify(result)`; but no piece holds more than one call,
 * so printing a turn with megabytes of arguments never builds the document as one string (on a
 * 500 MB capture that string and its UTF-8 copy were the largest allocation of the run).
 *
 * @since 0.1.0
 * @category rendering
 */
export function* jsonPieces(result: InspectResult): Generator<string> {
  const head = JSON.stringify({ outcome: result.outcome, finishReason: result.finishReason, text: result.text })
  yield `${head.slice(0, -1)},"toolCalls":[`
  for (let i = 0; i < result.toolCalls.length; i++) yield `${i === 0 ? "" : ","}${JSON.stringify(result.toolCalls[i])}`
  yield `],"error":${JSON.stringify(result.error)}}`
}

/**
 * The readable view of a result: the text, each tool call with pretty-printed arguments, the
 * finish reason, or the error tag and message.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (result: InspectResult): string => {
  const lines: Array<string> = []
  lines.push(result.outcome === "complete" ? "outcome: complete" : `outcome: error (${result.error!._tag})`)
  lines.push(`finish reason: ${result.finishReason ?? "(none)"}`)
  lines.push("", "text:", result.text === "" ? "  (none)" : indent(result.text))
  if (result.outcome === "complete") {
    lines.push("", `tool calls: ${result.toolCalls.length === 0 ? "(none)" : ""}`)
    result.toolCalls.forEach((call, i) => {
      lines.push(`  ${i + 1}. ${call.name}  id=${call.id ?? "(none)"}`)
      lines.push(indent(JSON.stringify(call.arguments, null, 2), "     "))
    })
  } else {
    lines.push("", `error: ${result.error!._tag}: ${result.error!.message}`, "tool calls: none released")
  }
  return lines.join("\n")
}

const indent = (s: string, prefix = "  ") => s.split("\n").map((l) => prefix + l).join("\n")
