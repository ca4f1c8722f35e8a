/**
 * What every request encoder reads from an effect/ai `Prompt`: the conversation as a list of
 * system, user, assistant and tool turns, each tool result paired with the call it answers, in
 * the order of the calls.
 *
 * - A system message is its text. A user message is the text of its text parts. An assistant
 *   message is its text and tool-call parts in order (reasoning parts are left out: no format
 *   takes earlier reasoning back in this form). A run of tool messages right after an assistant
 *   message with calls is one tool turn.
 * - A call's arguments are the exact JSON text the model sent (`ModelStream.argumentsTextOf`),
 *   with their parsed value (empty text reads as `{}`, as the assembler reads it). A result's
 *   content is the exact JSON text the executor stored (`ModelStream.resultTextOf`), or the text
 *   of its `modelOutput` parts when the caller gave some.
 * - Pairing: a result whose `id` is not empty answers the call of the preceding assistant message
 *   with that id; a result with the empty id (a call the provider gave no id, as Gemini does)
 *   answers, by name and position, the k-th call of that name without an id. Every call of an
 *   assistant message must be answered exactly once by the tool turn that follows it.
 * - A call without a provider id gets an id of the form `toolgate_<message>_<call>` (message and
 *   call positions in the prompt) in formats that require one, so the same prompt always encodes
 *   to the same bytes.
 *
 * Anything else is an `UnsupportedRequest` naming the message and the part: a file part, a tool
 * approval, a provider-executed tool call or result, arguments or a result that cannot be
 * written as JSON, a result that answers no call, a call without a result, a tool message that
 * follows no calls.
 *
 * @internal
 */
import { ModelStream, ModelStreamError } from "@toolgate/core"
import { Prompt } from "effect/ai"
import * as Result from "effect/Result"

/** One tool call of an assistant message. */
export interface Call {
  /** The provider's id, or `toolgate_<message>_<call>` when it sent none. */
  readonly id: string
  /** Whether `id` is the provider's (not made up here). */
  readonly providerId: boolean
  readonly name: string
  /** Exactly as the model sent it. */
  readonly argumentsText: string
  /** The parsed arguments; `undefined` when the text is not JSON. */
  readonly arguments: unknown
}

/** One tool result, with the call it answers. */
export interface ToolResult {
  readonly call: Call
  readonly isFailure: boolean
  /** Exactly as the executor stored it (or the text of the caller's `modelOutput`). */
  readonly text: string
}

export type AssistantPart = { readonly type: "text"; readonly text: string } | {
  readonly type: "call"
  readonly call: Call
}

export type Turn =
  | { readonly role: "system"; readonly text: string }
  | { readonly role: "user"; readonly texts: ReadonlyArray<string> }
  | { readonly role: "assistant"; readonly parts: ReadonlyArray<AssistantPart> }
  | { readonly role: "tool"; readonly results: ReadonlyArray<ToolResult> }

/** The texts of an assistant turn's parts, in order. */
export const textsOf = (parts: ReadonlyArray<AssistantPart>): Array<string> =>
  parts.flatMap((part) => part.type === "text" ? [part.text] : [])

/** The calls of an assistant turn, in order. */
export const callsOf = (parts: ReadonlyArray<AssistantPart>): Array<Call> =>
  parts.flatMap((part) => part.type === "call" ? [part.call] : [])

const parseArguments = (text: string): unknown => {
  if (text.trim() === "") return {}
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Pending calls of the last assistant message, waiting for their results. */
interface Pending {
  readonly message: number
  readonly calls: ReadonlyArray<Call>
  readonly answers: Array<ToolResult | undefined>
}

/**
 * The turns of a prompt, or the `UnsupportedRequest` of the first part the encoders cannot carry.
 */
export const read = (
  provider: string,
  prompt: Prompt.Prompt
): Result.Result<ReadonlyArray<Turn>, ModelStreamError.UnsupportedRequest> => {
  const turns: Array<Turn> = []
  let pending: Pending | undefined
  let failure: ModelStreamError.UnsupportedRequest | undefined
  const unsupported = (position: number, role: string, what: string) => {
    failure ??= new ModelStreamError.UnsupportedRequest({ provider, reason: `message ${position} (${role}): ${what}` })
  }

  /** Closes the tool turn of `pending`: every call answered, results in the calls' order. */
  const settle = () => {
    if (pending === undefined) return
    const missing = pending.calls.findIndex((_, i) => pending!.answers[i] === undefined)
    if (missing >= 0) {
      const call = pending.calls[missing]!
      unsupported(
        pending.message,
        "assistant",
        `tool call ${
          call.providerId ? call.id : `${missing}`
        } (${call.name}) has no result in the tool messages after it`
      )
    } else {
      turns.push({ role: "tool", results: pending.answers as Array<ToolResult> })
    }
    pending = undefined
  }

  const answer = (position: number, part: Prompt.ToolResultPart) => {
    if (pending === undefined) {
      return unsupported(position, "tool", `a result for ${part.name}, but the message before made no tool call`)
    }
    if (part.providerExecuted) return unsupported(position, "tool", "a provider-executed tool result")
    let index = -1
    if (part.id !== "") {
      index = pending.calls.findIndex((call) => call.providerId && call.id === part.id)
    } else {
      // By name and position: the first unanswered call of this name without an id, so the k-th
      // such result answers the k-th such call.
      index = pending.calls.findIndex((call, i) =>
        !call.providerId && call.name === part.name && pending!.answers[i] === undefined
      )
    }
    if (index < 0) {
      return unsupported(
        position,
        "tool",
        `a result for ${
          part.id === "" ? part.name : `call ${part.id} (${part.name})`
        }, which no open call of message ${pending.message} matches`
      )
    }
    if (pending.answers[index] !== undefined) {
      return unsupported(position, "tool", `a second result for call ${part.id} (${part.name})`)
    }
    let text: string | undefined
    if (part.modelOutput !== undefined) {
      if (part.modelOutput.some((p) => p.type !== "text")) {
        return unsupported(position, "tool", `a result for ${part.name} whose modelOutput holds a file`)
      }
      text = Prompt.toolModelOutputToText(part.modelOutput)
    } else {
      text = ModelStream.resultTextOf(part)
    }
    if (text === undefined) {
      return unsupported(position, "tool", `a result for ${part.name} that cannot be written as JSON`)
    }
    pending.answers[index] = { call: pending.calls[index]!, isFailure: part.isFailure, text }
  }

  for (const [position, message] of prompt.content.entries()) {
    if (failure !== undefined) break
    if (message.role === "tool") {
      for (const part of message.content) {
        if (part.type === "tool-result") answer(position, part)
        else unsupported(position, "tool", `a ${part.type} part`)
        if (failure !== undefined) break
      }
      continue
    }
    settle()
    if (failure !== undefined) break
    switch (message.role) {
      case "system":
        turns.push({ role: "system", text: message.content })
        break
      case "user": {
        const texts: Array<string> = []
        for (const part of message.content) {
          if (part.type === "text") texts.push(part.text)
          else unsupported(position, "user", `a ${part.type} part`)
        }
        turns.push({ role: "user", texts })
        break
      }
      case "assistant": {
        const parts: Array<AssistantPart> = []
        const calls: Array<Call> = []
        for (const part of message.content) {
          if (part.type === "text") parts.push({ type: "text", text: part.text })
          else if (part.type === "reasoning") continue
          else if (part.type === "tool-call") {
            if (part.providerExecuted) {
              unsupported(position, "assistant", "a provider-executed tool call")
              continue
            }
            const argumentsText = ModelStream.argumentsTextOf(part)
            if (argumentsText === undefined) {
              unsupported(position, "assistant", `a tool call (${part.name}) whose arguments cannot be written as JSON`)
              continue
            }
            const call: Call = {
              id: part.id !== "" ? part.id : `toolgate_${position}_${calls.length}`,
              providerId: part.id !== "",
              name: part.name,
              argumentsText,
              arguments: parseArguments(argumentsText)
            }
            calls.push(call)
            parts.push({ type: "call", call })
          } else unsupported(position, "assistant", `a ${part.type} part`)
        }
        turns.push({ role: "assistant", parts })
        if (calls.length > 0) pending = { message: position, calls, answers: calls.map(() => undefined) }
        break
      }
    }
  }
  if (failure === undefined) settle()
  return failure === undefined ? Result.succeed(turns) : Result.fail(failure)
}

/** An `UnsupportedRequest` of a provider's encoder. */
export const unsupported = (provider: string, reason: string) =>
  Result.fail(new ModelStreamError.UnsupportedRequest({ provider, reason }))

/**
 * The arguments of a call as a JSON object, for the formats that carry them as an object
 * (Anthropic `input`, Gemini `args`), or the `UnsupportedRequest` when the model's text is not
 * one.
 */
export const argumentsObject = (
  provider: string,
  call: Call
): Result.Result<Record<string, unknown>, ModelStreamError.UnsupportedRequest> =>
  typeof call.arguments === "object" && call.arguments !== null && !Array.isArray(call.arguments)
    ? Result.succeed(call.arguments as Record<string, unknown>)
    : unsupported(provider, `tool call ${call.id} (${call.name}): its arguments are not a JSON object`)
