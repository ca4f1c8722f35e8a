/**
 * The benchmark contenders: each takes one response body as a web `ReadableStream<Uint8Array>`
 * and returns the final text and parsed tool calls, the way a user of that library writes it.
 *
 * - toolgate: the provider adapter's `decodeReadableStream()` over the body → `Assembler.assemble()`,
 *   run with `Effect.runPromise` (text forwarding: `Assembler.stream()`); the assembler drives the
 *   body's reader itself. (`streamPipeline`, the form before it, `Stream.fromReadableStream` → the
 *   adapter's `decode()` → the assembler, is a step of the gap ladder, `bench/gap.ts`.)
 * - floor: the least possible work: one streaming `TextDecoder`, a line split, `JSON.parse` per
 *   event, string concatenation per tool-call index, `JSON.parse` per call. No validation at all.
 * - openai: the `openai` SDK's `client.chat.completions.stream()` (`ChatCompletionStream`).
 * - vercel-ai: the Vercel AI SDK, `streamText` over `createOpenAI(...).chat(...)`, reading `fullStream`.
 * - anthropic-sdk: `@anthropic-ai/sdk`'s `client.messages.stream()` (`MessageStream`).
 *
 * The SDKs are fed through a custom `fetch` that answers with a `Response` around the body (their
 * `fromReadableStream` helpers read newline-delimited JSON, not SSE). Each SDK client is made once;
 * a request header names the body to answer with, so concurrent streams stay apart.
 */
import { createOpenAI } from "@ai-sdk/openai"
import AnthropicClient from "@anthropic-ai/sdk"
import { Anthropic, OpenAiChat } from "@toolgate/adapters"
import { Assembler, type StreamEvent } from "@toolgate/core"
import { jsonSchema, streamText, tool, type ToolSet } from "ai"
import { Data, Effect, Stream } from "effect"
import { Sse } from "effect/encoding"
import { createParser } from "eventsource-parser"
import OpenAI from "openai"
import { type Provider, tools } from "./generator.js"

/** A released tool call, normalized across contenders. */
export interface ResultCall {
  readonly id: string
  readonly name: string
  readonly arguments: unknown
}

/** What every contender returns. */
export interface Result {
  readonly text: string
  readonly toolCalls: ReadonlyArray<ResultCall>
}

/**
 * One contender. `run` consumes the whole body; `onText`, when given, is called with each text
 * delta the moment it reaches the caller (the latency measurement uses it).
 */
export interface Contender {
  readonly name: string
  readonly providers: ReadonlyArray<Provider>
  readonly run: (
    body: ReadableStream<Uint8Array>,
    provider: Provider,
    onText?: ((text: string) => void) | undefined
  ) => Promise<Result>
}

class BodyError extends Data.TaggedError("BodyError")<{ readonly cause: unknown }> {}

const toolgateDecode = (provider: Provider) => provider === "openai-chat" ? OpenAiChat.decode() : Anthropic.decode()

/** A completed turn as a {@link Result}. */
export const fromTurn = (turn: Assembler.AssembledTurn): Result => ({
  text: turn.text,
  toolCalls: turn.toolCalls.map((call) => ({ id: call.id ?? "", name: call.name, arguments: call.arguments }))
})

/** Runs a stream of events through `Assembler.assemble()`, or `Assembler.stream()` when text is forwarded. */
const runEvents = <E>(
  events: Stream.Stream<StreamEvent.StreamEvent, E>,
  onText: ((text: string) => void) | undefined
): Promise<Result> => {
  if (onText === undefined) return Effect.runPromise(events.pipe(Assembler.assemble())).then(fromTurn)
  let turn: Assembler.AssembledTurn | undefined
  return Effect.runPromise(
    events.pipe(
      Assembler.stream(),
      Stream.runForEach((out) =>
        Effect.sync(() => {
          if (out._tag === "TextDelta") onText(out.text)
          else turn = out.turn
        })
      )
    )
  ).then(() => fromTurn(turn!))
}

const bodySource = (body: ReadableStream<Uint8Array>) => ({
  evaluate: () => body,
  onError: (cause: unknown) => new BodyError({ cause })
})

/**
 * toolgate as users call it on a web body: the adapter's `decodeReadableStream()` then
 * `Assembler.assemble()` (or `Assembler.stream()` for text), the reader driven by the assembler.
 */
export const toolgate: Contender = {
  name: "toolgate",
  providers: ["openai-chat", "anthropic"],
  run: (body, provider, onText) =>
    runEvents(
      provider === "openai-chat"
        ? OpenAiChat.decodeReadableStream(bodySource(body))
        : Anthropic.decodeReadableStream(bodySource(body)),
      onText
    )
}

/**
 * toolgate's Stream pipeline, the form before `decodeReadableStream`: `Stream.fromReadableStream` →
 * the adapter's `decode()` → `Assembler.assemble()` (or `Assembler.stream()`).
 */
export const streamPipeline: Contender = {
  name: "Stream pipeline",
  providers: ["openai-chat", "anthropic"],
  run: (body, provider, onText) =>
    runEvents(Stream.fromReadableStream(bodySource(body)).pipe(toolgateDecode(provider)), onText)
}

/**
 * How the floor finds `data:` payloads: `lines` is the floor proper (split on LF with `indexOf`,
 * take `data: ` lines); `eventsource-parser` hands the text to `eventsource-parser`'s
 * `createParser`, the framing toolgate's `Decoder.decodeSse` uses; `effect-sse` to effect's
 * `Sse.makeParser`, which it used before (the gap analysis measures the differences).
 */
export type Framing = "lines" | "eventsource-parser" | "effect-sse"

/** The floor's run function: plain locals and arrays, no validation, nothing but the happy path. */
export const floorRun = (framing: Framing): Contender["run"] => async (body, provider, onText) => {
  const decoder = new TextDecoder()
  const reader = body.getReader()
  const ids: Array<string> = []
  const names: Array<string> = []
  const args: Array<string> = []
  let text = ""
  const openAi = provider === "openai-chat"
  const onData = (data: string) => {
    if (openAi) {
      if (data === "[DONE]") return
      const delta = JSON.parse(data).choices[0]?.delta
      if (delta === undefined) return
      if (delta.content) {
        text += delta.content
        onText?.(delta.content)
      }
      const calls = delta.tool_calls
      if (calls !== undefined) {
        for (const call of calls) {
          const i = call.index
          if (call.id) {
            ids[i] = call.id
            names[i] = call.function.name
            args[i] = ""
          }
          args[i] += call.function.arguments
        }
      }
      return
    }
    const event = JSON.parse(data)
    if (event.type === "content_block_delta") {
      const delta = event.delta
      if (delta.type === "input_json_delta") args[event.index] += delta.partial_json
      else if (delta.type === "text_delta") {
        text += delta.text
        onText?.(delta.text)
      }
    } else if (event.type === "content_block_start" && event.content_block.type === "tool_use") {
      ids[event.index] = event.content_block.id
      names[event.index] = event.content_block.name
      args[event.index] = ""
    }
  }
  if (framing === "lines") {
    let buffer = ""
    for (;;) {
      const { done, value } = await reader.read()
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true })
      let start = 0
      for (;;) {
        const end = buffer.indexOf("\n", start)
        if (end < 0) break
        if (buffer.startsWith("data: ", start)) onData(buffer.slice(start + 6, end))
        start = end + 1
      }
      buffer = buffer.slice(start)
      if (done) break
    }
  } else {
    const parser = framing === "effect-sse"
      ? Sse.makeParser((event) => {
        if (event._tag === "Event") onData(event.data)
      })
      : createParser({ onEvent: (event) => onData(event.data) })
    for (;;) {
      const { done, value } = await reader.read()
      parser.feed(done ? decoder.decode() : decoder.decode(value, { stream: true }))
      if (done) break
    }
  }
  const toolCalls: Array<ResultCall> = []
  for (let i = 0; i < args.length; i++) {
    if (args[i] !== undefined) toolCalls.push({ id: ids[i]!, name: names[i]!, arguments: JSON.parse(args[i]!) })
  }
  return { text, toolCalls }
}

/** The floor: the least possible work from bytes to parsed tool calls. */
export const floor: Contender = { name: "floor", providers: ["openai-chat", "anthropic"], run: floorRun("lines") }

/**
 * Bodies waiting for an SDK's `fetch`, by the id in the `x-bench-body` request header.
 */
const pending = new Map<string, ReadableStream<Uint8Array>>()
let nextBodyId = 0

const register = (body: ReadableStream<Uint8Array>): Record<string, string> => {
  const id = String(nextBodyId++)
  pending.set(id, body)
  return { "x-bench-body": id }
}

const benchFetch = async (_input: unknown, init?: RequestInit): Promise<Response> => {
  const id = new Headers(init?.headers).get("x-bench-body")
  const body = id === null ? undefined : pending.get(id)
  if (id === null || body === undefined) throw new Error(`no benchmark body for request ${String(id)}`)
  pending.delete(id)
  return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } })
}

const openAiClient = new OpenAI({
  apiKey: "bench",
  baseURL: "http://bench.invalid/v1",
  maxRetries: 0,
  fetch: benchFetch
})

const openAiTools = tools.map((name) => ({
  type: "function" as const,
  function: { name, parameters: { type: "object", properties: {} } }
}))

const openai: Contender = {
  name: "openai",
  providers: ["openai-chat"],
  run: async (body, _provider, onText) => {
    const stream = openAiClient.chat.completions.stream(
      {
        model: "gpt-4o",
        messages: [{ role: "user", content: "go" }],
        tools: openAiTools,
        stream_options: { include_usage: true }
      },
      { headers: register(body) }
    )
    if (onText !== undefined) stream.on("content", (delta) => onText(delta))
    const completion = await stream.finalChatCompletion()
    const message = completion.choices[0]!.message
    return {
      text: message.content ?? "",
      toolCalls: (message.tool_calls ?? []).map((call) => {
        if (call.type !== "function") throw new Error(`unexpected tool call type ${call.type}`)
        return { id: call.id, name: call.function.name, arguments: JSON.parse(call.function.arguments) }
      })
    }
  }
}

const vercelProvider = createOpenAI({ apiKey: "bench", baseURL: "http://bench.invalid/v1", fetch: benchFetch })

const vercelTools: ToolSet = Object.fromEntries(
  tools.map((name) => [name, tool({ description: name, inputSchema: jsonSchema({ type: "object" }) })])
)

const vercelAi: Contender = {
  name: "vercel-ai",
  providers: ["openai-chat"],
  run: async (body, _provider, onText) => {
    const result = streamText({
      model: vercelProvider.chat("gpt-4o"),
      prompt: "go",
      tools: vercelTools,
      maxRetries: 0,
      headers: register(body)
    })
    let text = ""
    const toolCalls: Array<ResultCall> = []
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") {
        text += part.text
        onText?.(part.text)
      } else if (part.type === "tool-call") {
        toolCalls.push({ id: part.toolCallId, name: part.toolName, arguments: part.input })
      } else if (part.type === "error") {
        throw part.error
      }
    }
    return { text, toolCalls }
  }
}

const anthropicClient = new AnthropicClient({
  apiKey: "bench",
  baseURL: "http://bench.invalid",
  maxRetries: 0,
  fetch: benchFetch
})

const anthropicTools = tools.map((name) => ({ name, input_schema: { type: "object" as const, properties: {} } }))

const anthropicSdk: Contender = {
  name: "anthropic-sdk",
  providers: ["anthropic"],
  run: async (body, _provider, onText) => {
    const stream = anthropicClient.messages.stream(
      {
        model: "claude-sonnet-4-6",
        max_tokens: 64000,
        messages: [{ role: "user", content: "go" }],
        tools: anthropicTools
      },
      { headers: register(body) }
    )
    if (onText !== undefined) stream.on("text", (delta) => onText(delta))
    const message = await stream.finalMessage()
    let text = ""
    const toolCalls: Array<ResultCall> = []
    for (const block of message.content) {
      if (block.type === "text") text += block.text
      else if (block.type === "tool_use") toolCalls.push({ id: block.id, name: block.name, arguments: block.input })
    }
    return { text, toolCalls }
  }
}

/** Every contender, the floor first. */
export const contenders: ReadonlyArray<Contender> = [floor, toolgate, openai, vercelAi, anthropicSdk]
