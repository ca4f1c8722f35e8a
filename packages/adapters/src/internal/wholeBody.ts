/**
 * The readers of a whole (non-streaming) JSON response body, one per wire format, each giving
 * the core events a stream of the same turn would give: text, then every tool call whole (its
 * complete arguments text as one delta, keyed by its position), the finish with the format's
 * finish table, usage, and `end`. The assembler then applies to them exactly what it applies to
 * a stream: the finish verdict, all-or-nothing argument parsing, the size limits. An error body
 * (`{"error": …}`) is the same `ProviderStreamError` an error event in a stream is; a body that
 * is not the format's object is a `MalformedStreamEvent`.
 *
 * @internal
 */
import { AssemblyError, FinishReason, type StreamEvent } from "@toolgate/core"
import * as Predicate from "effect/Predicate"
import * as Anthropic from "../Anthropic.js"
import * as FinishProfile from "../FinishProfile.js"
import * as Gemini from "../Gemini.js"
import * as OpenAiChat from "../OpenAiChat.js"
import * as OpenAiResponses from "../OpenAiResponses.js"
import { EventParts, type Json, malformed, optionalString, providerError, usage, writeJson } from "./payload.js"
import * as ResponseEnd from "./responseEnd.js"

export interface Options {
  readonly choice?: number | undefined
  readonly finishProfile?: FinishProfile.FinishProfile | undefined
}

const one = (parts: EventParts): Array<StreamEvent.StreamEvent> => {
  parts.end = true
  const event = parts.toEvent()
  return event === undefined ? [] : [event]
}

const failed = (failure: AssemblyError.StreamFailure): Array<StreamEvent.StreamEvent> => [{ failure, end: true }]

/**
 * OpenAI Chat Completions `chat.completion`
 * (https://platform.openai.com/docs/api-reference/chat/object): the chosen choice's
 * `message.content` and `message.tool_calls` (`{ id, type, function: { name, arguments } }`, the
 * arguments a JSON text), its `finish_reason`, and `usage`. An `error` member (OpenAI, Ollama's
 * string) or vLLM's `object: "error"` body is a `ProviderStreamError`.
 */
export const openAiChat = (body: Json, text: string, options?: Options): Array<StreamEvent.StreamEvent> => {
  const policy = OpenAiChat.finishPolicy(options?.finishProfile ?? FinishProfile.defaultProfile)
  if (body.error !== undefined && body.error !== null) return failed(providerError(body.error, ["code", "type"]))
  if (body.object === "error") return failed(providerError(body, ["code", "type"]))
  const parts = new EventParts()
  const reported = body.usage
  if (Predicate.isObject(reported)) {
    const details = reported.prompt_tokens_details
    parts.usage = usage({
      inputTokens: reported.prompt_tokens,
      outputTokens: reported.completion_tokens,
      totalTokens: reported.total_tokens,
      cachedInputTokens: Predicate.isObject(details) ? details.cached_tokens : undefined
    })
  }
  const choices = body.choices
  if (!Array.isArray(choices)) return failed(malformed("a chat.completion needs a `choices` array", text))
  const wanted = options?.choice ?? 0
  const choice = choices.find((c): c is Json => Predicate.isObject(c) && (c.index ?? 0) === wanted)
  if (choices.some((c) => !Predicate.isObject(c))) parts.fail(malformed("a choice is not an object", text))
  if (choice === undefined) return one(parts)
  const message = choice.message
  if (message !== undefined && message !== null) {
    if (!Predicate.isObject(message)) {
      parts.fail(malformed("`message` is not an object", text))
    } else {
      const content = message.content
      if (content !== undefined && content !== null) {
        if (typeof content === "string") parts.addText(content)
        else parts.fail(malformed("`message.content` is not a string", text))
      }
      readChatCalls(message.tool_calls, text, parts)
    }
  }
  const reason = choice.finish_reason
  if (reason !== undefined && reason !== null) {
    if (typeof reason !== "string") parts.fail(malformed("`finish_reason` is not a string", text))
    else if (reason !== "") parts.finish = { reason, class: FinishReason.classify(policy, reason), terminal: true }
  }
  return one(parts)
}

const readChatCalls = (calls: unknown, text: string, parts: EventParts) => {
  if (calls === undefined || calls === null) return
  if (!Array.isArray(calls)) return parts.fail(malformed("`message.tool_calls` is not an array", text))
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index]
    const fn = Predicate.isObject(call) ? call.function : undefined
    if (!Predicate.isObject(call) || !Predicate.isObject(fn)) {
      return parts.fail(malformed("a tool call needs a `function` object", text))
    }
    const id = optionalString(call.id)
    const type = optionalString(call.type)
    if (typeof fn.name !== "string" || fn.name === "" || id === null || type === null) {
      return parts.fail(malformed("a tool call needs a string `function.name`, and a string `id` and `type`", text))
    }
    const args = fn.arguments
    if (args !== undefined && args !== null && typeof args !== "string") {
      return parts.fail(malformed("a tool call's `function.arguments` is not a string", text))
    }
    parts.addToolCall({ index, id, type, name: fn.name, argumentsDelta: typeof args === "string" ? args : undefined })
  }
}

/**
 * OpenAI Responses `response` (https://platform.openai.com/docs/api-reference/responses/object):
 * the `output_text` parts of its `message` items, its `function_call` items (`call_id`, `name`,
 * `arguments` a JSON text) keyed by their position in `output`, its `status` as the finish reason
 * (classified as the stream's terminal status is: `OpenAiResponses.classifyStatus`), and
 * `usage`. `status: "failed"` carries its `error` as a `ProviderStreamError`, as
 * `response.failed` does in a stream; a body that is only `{"error": …}` is one too.
 */
export const openAiResponses = (body: Json, text: string): Array<StreamEvent.StreamEvent> => {
  if (body.status === undefined && body.error !== undefined && body.error !== null) {
    return failed(providerError(body.error, ["code", "type"]))
  }
  const status = body.status
  if (typeof status !== "string") return failed(malformed("a Responses `response` needs a string `status`", text))
  const parts = new EventParts()
  if (status === "failed") parts.fail(providerError(body.error ?? "response failed", ["code", "type"]))
  const output = body.output
  if (output !== undefined && output !== null && !Array.isArray(output)) {
    parts.fail(malformed("`output` is not an array", text))
  } else if (Array.isArray(output)) {
    for (let index = 0; index < output.length; index++) {
      const item = output[index]
      if (!Predicate.isObject(item)) {
        parts.fail(malformed("an output item is not an object", text))
        continue
      }
      if (item.type === "message") {
        const content = Array.isArray(item.content) ? item.content : []
        for (const piece of content) {
          if (Predicate.isObject(piece) && piece.type === "output_text") {
            if (typeof piece.text === "string") parts.addText(piece.text)
            else parts.fail(malformed("an `output_text` part needs a string `text`", text))
          }
        }
      } else if (item.type === "function_call") {
        const callId = optionalString(item.call_id)
        const args = item.arguments
        if (typeof item.name !== "string" || item.name === "" || callId === null) {
          parts.fail(malformed("a function_call item needs a non-empty `name` and a string `call_id`", text))
        } else if (args !== undefined && args !== null && typeof args !== "string") {
          parts.fail(malformed("a function_call item's `arguments` is not a string", text))
        } else {
          parts.addToolCall({ index, id: callId, name: item.name, argumentsDelta: args ?? undefined })
        }
      }
    }
  }
  parts.finish = ResponseEnd.finishOf(body, status, OpenAiResponses.classifyStatus)
  const reported = ResponseEnd.usageOf(body)
  if (reported !== undefined) parts.usage = reported
  return one(parts)
}

/**
 * Anthropic Messages `message` (https://docs.anthropic.com/en/api/messages): its `text` blocks,
 * its `tool_use` blocks (`id`, `name`, `input` an object, written back as its JSON text) keyed by
 * block index, its `stop_reason` (a `null` one reads as a `message_stop` without a reason does:
 * unexpected), and `usage`. `thinking`, `server_tool_use` and other blocks are not text and not
 * calls. An error body (`{"type": "error", "error": {…}}`, or a gateway's `{"error": {…}}`) is a
 * `ProviderStreamError`.
 */
export const anthropic = (body: Json, text: string, options?: Options): Array<StreamEvent.StreamEvent> => {
  const policy = Anthropic.finishPolicy(options?.finishProfile ?? FinishProfile.defaultProfile)
  if (body.type === "error" || (body.type === undefined && body.error !== undefined && body.error !== null)) {
    return failed(providerError(body.error ?? body, ["type", "code"]))
  }
  if (body.type !== "message") return failed(malformed("an Anthropic body needs `type: \"message\"`", text))
  const content = body.content
  if (!Array.isArray(content)) return failed(malformed("a message needs a `content` array", text))
  const parts = new EventParts()
  for (let index = 0; index < content.length; index++) {
    const block = content[index]
    if (!Predicate.isObject(block) || typeof block.type !== "string") {
      parts.fail(malformed("a content block needs a string `type`", text))
      continue
    }
    if (block.type === "text") {
      if (typeof block.text === "string") parts.addText(block.text)
      else parts.fail(malformed("a text block needs a string `text`", text))
    } else if (block.type === "tool_use") {
      if (typeof block.id !== "string" || block.id === "" || typeof block.name !== "string" || block.name === "") {
        parts.fail(malformed("a `tool_use` block needs a non-empty string `id` and `name`", text))
        continue
      }
      const input = block.input ?? {}
      if (!Predicate.isObject(input)) {
        parts.fail(malformed("a `tool_use` block's `input` is not an object", text))
        continue
      }
      const args = writeJson(input)
      if (args === undefined) {
        parts.fail(malformed("a `tool_use` block's `input` nests too deeply to be written as JSON", text))
        continue
      }
      parts.addToolCall({ index, id: block.id, name: block.name, argumentsDelta: args })
    }
  }
  const reason = body.stop_reason
  if (reason !== null && reason !== undefined && typeof reason !== "string") {
    parts.fail(malformed("`stop_reason` is not a string or null", text))
  }
  parts.finish = typeof reason === "string" && reason !== ""
    ? { reason, class: FinishReason.classify(policy, reason), terminal: true }
    : { reason: null, class: "unexpected", terminal: true }
  const reported = body.usage
  if (Predicate.isObject(reported)) {
    parts.usage = usage({
      inputTokens: reported.input_tokens,
      outputTokens: reported.output_tokens,
      cachedInputTokens: reported.cache_read_input_tokens
    })
  }
  return one(parts)
}

/**
 * Gemini `GenerateContentResponse` (https://ai.google.dev/api/generate-content#generatecontentresponse),
 * read by the stream's own decoder (`Gemini.decoder`) as the one chunk it is: a non-streaming
 * Gemini answer has exactly the shape of a streamed chunk. A JSON array of them (the answer of
 * `streamGenerateContent` without `alt=sse`) is read as that many chunks, in order.
 */
export const gemini = (text: string): Array<StreamEvent.StreamEvent> => {
  const decoder = Gemini.decoder()
  if (text.trimStart()[0] !== "[") {
    const event = decoder.onEvent({ event: "message", data: text })
    return event === undefined ? [] : [event]
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return failed(malformed("the response body is not JSON", text))
  }
  const out: Array<StreamEvent.StreamEvent> = []
  for (const chunk of body as ReadonlyArray<unknown>) {
    const data = Predicate.isObject(chunk) ? writeJson(chunk) : undefined
    const event = data === undefined
      ? { failure: malformed("an element of the response array is not a JSON object", text) }
      : decoder.onEvent({ event: "message", data })
    if (event !== undefined) out.push(event)
    if (event?.failure !== undefined) break
  }
  return out
}
