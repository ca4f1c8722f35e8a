/**
 * A fake LLM provider: an HTTP server on 127.0.0.1 (a free port) that answers every POST with a
 * streamed SSE body, for tests and for the `npm start` demo. Built on `node:http`, so that a
 * fault is exactly the one asked for (a socket destroyed after a given byte, a stall with the
 * socket kept open).
 *
 * Each request is answered with the {@link Answer} a caller-supplied plan returns for it. The
 * plan sees the request body and its attempt number: requests with the same key (by default the
 * raw body text, which a retry repeats) are attempts 1, 2, 3, … An answer names:
 *
 * - a {@link Source}: the bytes of a captured body ({@link fixture}, {@link bytes}), or a stream
 *   generated per response from a {@link Scenario} in OpenAI Chat Completions
 *   ({@link openAiChat}) or Anthropic Messages ({@link anthropic}) format. Generated streams
 *   split text into word-sized deltas and arguments into deltas of 3 to 12 characters, and give
 *   every response fresh ids (`call_` + 24 characters, `toolu_01` + 22), so a retried request
 *   naturally gets fresh tool-call ids;
 * - its form ({@link Form}): a stream (the default), one whole JSON body (a generated source's
 *   `chat.completion` or `message`), or whichever the request asked for (`asked`: `stream: true`
 *   in the body, or Gemini's `streamGenerateContent` in the path, is a stream);
 * - how it is written: bytes per write (`chunkBytes`, a size or a `[min, max]` range; default
 *   one write per SSE event of a generated stream, the whole body for captured bytes and JSON
 *   answers), the pause between writes (`paceMs`) and before the response head
 *   (`headersDelayMs`);
 * - an optional {@link Fault}, `StreamRejected` among them: a server that refuses to stream
 *   (HTTP 400 naming `stream`) and answers the same request without `stream` normally.
 *
 * The server counts requests, connections, open sockets (to assert that a client leaked none)
 * and the outcome of every request.
 *
 * Multi-step agent turns: {@link stepOf} reads which step a request is from the tool results it
 * carries, and {@link steps} makes a plan that answers each step of a script.
 *
 * (One concept, the server with its answer plan, faults and records, documented type by type:
 * that is why the module is longer than most; the bodies it writes are in `SseScript` and
 * `internal/providerBodies`, reading a request for its tool results in `internal/resultGroups`.)
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { readFileSync } from "node:fs"
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"
import { basename } from "node:path"
import * as Bodies from "./internal/providerBodies.js"
import { resultGroups } from "./internal/resultGroups.js"
import * as LoopbackServer from "./LoopbackServer.js"
import * as Random from "./Random.js"

/**
 * One tool call to generate. A string `arguments` is sent as it is (to generate malformed
 * arguments); an object is sent as its JSON.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolCallScenario {
  readonly name: string
  readonly arguments: Readonly<Record<string, unknown>> | string
}

/**
 * What a generated response says: text first, then the tool calls in order.
 *
 * @since 0.1.0
 * @category models
 */
export interface Scenario {
  readonly text?: string | undefined
  readonly toolCalls?: ReadonlyArray<ToolCallScenario> | undefined
  /**
   * The raw finish reason. Default: `tool_calls` or `stop` (OpenAI), `tool_use` or `end_turn`
   * (Anthropic), by whether there are tool calls.
   */
  readonly finishReason?: string | undefined
  /** Default: the request's `model`, else a plausible model name. */
  readonly model?: string | undefined
}

/**
 * The shape of the JSON error body a provider sends with a 4xx/5xx.
 *
 * @since 0.1.0
 * @category models
 */
export type ErrorStyle = "openai" | "anthropic" | "gemini"

/**
 * Where a response body comes from.
 *
 * @since 0.1.0
 * @category models
 */
export type Source =
  | { readonly _tag: "Bytes"; readonly bytes: Uint8Array; readonly style: ErrorStyle }
  | { readonly _tag: "OpenAiChat"; readonly scenario: Scenario }
  | { readonly _tag: "Anthropic"; readonly scenario: Scenario }

/**
 * A captured body, replayed byte for byte. `style` picks the error body of a `Status` fault.
 *
 * @since 0.1.0
 * @category sources
 */
export const bytes = (body: Uint8Array | string, style: ErrorStyle = "openai"): Source => ({
  _tag: "Bytes",
  bytes: typeof body === "string" ? new TextEncoder().encode(body) : body,
  style
})

/**
 * A fixture file's bytes (read now), replayed byte for byte; the error style follows the file
 * name's provider prefix (`anthropic__…`, `gemini__…`, else OpenAI).
 *
 * @since 0.1.0
 * @category sources
 */
export const fixture = (path: string): Source => {
  const name = basename(path)
  const style: ErrorStyle = name.startsWith("anthropic") ? "anthropic" : name.startsWith("gemini") ? "gemini" : "openai"
  return bytes(new Uint8Array(readFileSync(path)), style)
}

/**
 * An OpenAI Chat Completions stream generated per response: a role chunk, text deltas, for each
 * call a chunk with its id, name and empty arguments then its argument deltas, the finish chunk,
 * a usage chunk when the request asked for it (`stream_options.include_usage`), `data: [DONE]`.
 *
 * @since 0.1.0
 * @category sources
 */
export const openAiChat = (scenario: Scenario): Source => ({ _tag: "OpenAiChat", scenario })

/**
 * An Anthropic Messages stream generated per response: `message_start`, a text block, a `ping`,
 * one `tool_use` block per call (its `input_json_delta`s starting with an empty one, as the API
 * sends), `message_delta` with the stop reason and usage, `message_stop`.
 *
 * @since 0.1.0
 * @category sources
 */
export const anthropic = (scenario: Scenario): Source => ({ _tag: "Anthropic", scenario })

/**
 * Where a `Drop`, `Truncate` or `Stall` cuts a body: after that many bytes, or after that fraction
 * (0 to 1) of the body's bytes (a generated body's size depends on its ids and splits: a fraction
 * lands in the same part of it, such as the middle of its calls' arguments).
 *
 * @since 0.1.0
 * @category models
 */
export type CutPoint = number | { readonly fraction: number }

/**
 * A fault injected into one response.
 *
 * - `Reset`: the socket is destroyed before the response head (the client sees no response).
 * - `Drop`: the socket is destroyed after `afterBytes` body bytes (a cut chunked body).
 * - `Truncate`: the body ends cleanly after `afterBytes` bytes (a proxy that closed early).
 * - `Stall`: writing stops after `afterBytes` body bytes; the socket stays open until the client
 *   closes it or the server stops.
 * - `Status`: the status (429, 500, 503, …) with a provider-style JSON error body (or `body`),
 *   `Retry-After` from `retryAfter` (a number of seconds or a string such as an HTTP-date), and
 *   any extra `headers`; no stream.
 * - `Duplicate`: the whole body twice in one response (a second lifecycle spliced after the
 *   first, same ids).
 * - `StreamRejected`: a request that asks for a stream ({@link asksForStream}) is answered
 *   with HTTP 400 and the provider-style error that names `stream` (OpenAI's real answer for a
 *   model that does not stream, or `body`); a request that does not ask for one is answered
 *   normally, as if there were no fault.
 *
 * @since 0.1.0
 * @category models
 */
export type Fault =
  | { readonly _tag: "Reset" }
  | { readonly _tag: "Drop"; readonly afterBytes: CutPoint }
  | { readonly _tag: "Truncate"; readonly afterBytes: CutPoint }
  | { readonly _tag: "Stall"; readonly afterBytes: CutPoint }
  | {
    readonly _tag: "Status"
    readonly status: number
    readonly retryAfter?: number | string | undefined
    readonly body?: string | undefined
    readonly headers?: Readonly<Record<string, string>> | undefined
  }
  | { readonly _tag: "Duplicate" }
  | { readonly _tag: "StreamRejected"; readonly body?: string | undefined }

/**
 * The form of an answer: `stream` (SSE; the default), `json` (one whole JSON body, labelled
 * `application/json`), or `asked`: `json` when the request did not ask for a stream, else
 * `stream`.
 *
 * @since 0.1.0
 * @category models
 */
export type Form = "stream" | "json" | "asked"

/**
 * How to answer one request.
 *
 * @since 0.1.0
 * @category models
 */
export interface Answer {
  readonly source: Source
  readonly fault?: Fault | undefined
  /** Default `stream`. */
  readonly form?: Form | undefined
  /** Bytes per write: a size, or a `[min, max]` range drawn per write. Default: see the module doc. */
  readonly chunkBytes?: number | readonly [number, number] | undefined
  /** Milliseconds between two writes. Default: the server's `paceMs`, else 0. */
  readonly paceMs?: number | undefined
  /** Milliseconds before the response head; `Infinity`: never (a first-byte stall). Default 0. */
  readonly headersDelayMs?: number | undefined
  /**
   * The `content-type` of a 200 answer; `null` sends none (many servers omit it). Default
   * `text/event-stream; charset=utf-8` for a stream, `application/json` for a JSON answer.
   */
  readonly contentType?: string | null | undefined
  /**
   * Send exactly the bytes of the previous response to the same key (same ids): the same
   * request answered twice. Without a previous response, the source is used.
   */
  readonly repeatPrevious?: boolean | undefined
}

/**
 * A request as the plan sees it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Request {
  /** Identifies "the same request" across attempts (see `Options.requestKey`). */
  readonly key: string
  /** 1 for the first request with this key, 2 for the next, … */
  readonly attempt: number
  /** 1-based arrival number on this server. */
  readonly seq: number
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The parsed JSON body. */
  readonly body: unknown
  readonly rawBody: string
}

/**
 * Whether a request asks for a stream: `stream: true` in its body, or Gemini's
 * `streamGenerateContent` in its path.
 *
 * @since 0.1.0
 * @category models
 */
export const asksForStream = (request: { readonly path: string; readonly body: unknown }): boolean =>
  request.path.includes(":streamGenerateContent") ||
  (typeof request.body === "object" && request.body !== null &&
    (request.body as { stream?: unknown }).stream === true)

/**
 * What became of a request: `pending` (still being answered), `completed` (the whole body
 * written and ended; a `Duplicate` included), `dropped`, `truncated`, `stalled`, `reset` and
 * `status` (its fault was applied), `client-closed` (the client went away first: a timeout, an
 * abort), `rejected` (not a POST with a JSON body: 405 or 400).
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome =
  | "pending"
  | "completed"
  | "dropped"
  | "truncated"
  | "stalled"
  | "reset"
  | "status"
  | "client-closed"
  | "rejected"

/**
 * The record of one request.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestRecord {
  readonly seq: number
  readonly key: string
  readonly attempt: number
  readonly path: string
  readonly fault: Fault["_tag"] | null
  /** The status sent, `null` when no head was sent. */
  readonly status: number | null
  /** Body bytes written. */
  readonly bytesWritten: number
  readonly outcome: Outcome
  /** The tool-call ids of the body sent (generated sources only). */
  readonly toolCallIds: ReadonlyArray<string>
  /** Whether the request asked for a stream ({@link asksForStream}). */
  readonly streaming: boolean
  /** The form of the body sent: `stream` or `json`; `null` when no body was sent. */
  readonly form: "stream" | "json" | null
}

/**
 * A snapshot of the server's counters.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stats {
  readonly requests: number
  /** Connections accepted since the start. */
  readonly connections: number
  /** Sockets open now (keep-alive connections a client still holds count). */
  readonly openSockets: number
  readonly outcomes: Readonly<Record<Outcome, number>>
  readonly log: ReadonlyArray<RequestRecord>
}

/**
 * Server options.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The answer to every request, or a function choosing it per request. */
  readonly plan: Answer | ((request: Request) => Answer)
  /** Default: the raw body text. */
  readonly requestKey?: ((request: Omit<Request, "key" | "attempt" | "seq">) => string) | undefined
  /** Seed of the generator of ids and splits; default random. */
  readonly seed?: number | undefined
  /** Default milliseconds between writes. */
  readonly paceMs?: number | undefined
}

/**
 * A running fake provider.
 *
 * @since 0.1.0
 * @category models
 */
export interface Server {
  /** `http://127.0.0.1:PORT`: POST to any path. */
  readonly url: string
  readonly stats: Effect.Effect<Stats>
  /**
   * Waits (real time, polling) until at most `count` sockets are open or `timeoutMs` (default
   * 2000) has passed; gives the number open then.
   */
  readonly awaitOpenSockets: (count: number, timeoutMs?: number) => Effect.Effect<number>
}

/**
 * How many tool results a request body carries (in any of the four providers' request formats).
 *
 * @since 0.1.0
 * @category multi-step turns
 */
export const toolResultsOf = (body: unknown): number => resultGroups(body).reduce((n, g) => n + g, 0)

/**
 * Which step of a multi-step agent turn a request is: 1 for the first model request, then one more
 * for each step whose tool results the request sends back (a run of OpenAI `tool` messages, of
 * Responses `function_call_output` items, an Anthropic user message of `tool_result` blocks, a
 * Gemini content of `functionResponse` parts). A plan scripts a turn with it:
 *
 * ```ts
 * FakeProvider.make({ plan: (request) => ({ source: FakeProvider.openAiChat(script[FakeProvider.stepOf(request.body) - 1]) }) })
 * ```
 *
 * @since 0.1.0
 * @category multi-step turns
 */
export const stepOf = (body: unknown): number => resultGroups(body).length + 1

/**
 * A plan answering each step of a multi-step turn from `steps` (by {@link stepOf}; a request past
 * the last step gets the last), generated in `format`, with `options` applied to every answer.
 *
 * @since 0.1.0
 * @category multi-step turns
 */
export const steps = (
  script: ReadonlyArray<Scenario> | ((request: Request) => ReadonlyArray<Scenario>),
  options: {
    readonly format?: "openai-chat" | "anthropic" | undefined
    readonly answer?: Omit<Answer, "source"> | ((request: Request, step: number) => Omit<Answer, "source">) | undefined
  } = {}
) =>
(request: Request): Answer => {
  const all = typeof script === "function" ? script(request) : script
  const step = stepOf(request.body)
  const scenario = all[Math.min(step, all.length) - 1] ?? {}
  const extra = typeof options.answer === "function" ? options.answer(request, step) : options.answer
  return {
    ...extra,
    source: options.format === "anthropic" ? anthropic(scenario) : openAiChat(scenario)
  }
}

const sendJson = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(body)
}

const emptyOutcomes = (): Record<Outcome, number> => ({
  pending: 0,
  completed: 0,
  dropped: 0,
  truncated: 0,
  stalled: 0,
  reset: 0,
  status: 0,
  "client-closed": 0,
  rejected: 0
})

/**
 * Starts a fake provider on 127.0.0.1 (a free port); it stops, destroying every open socket,
 * when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Server, never, Scope.Scope> =>
  Effect.gen(function*() {
    const random = Random.make(options.seed ?? Math.floor(Math.random() * 2 ** 32))
    const attempts = new Map<string, number>()
    const previous = new Map<string, { writes: Array<Uint8Array>; toolCallIds: ReadonlyArray<string> }>()
    const log: Array<{ -readonly [K in keyof RequestRecord]: RequestRecord[K] }> = []
    // The server's timers, set when it starts (before any request arrives).
    let later: LoopbackServer.Timers["later"] = () => undefined

    const answer = (req: IncomingMessage, res: ServerResponse, request: Request, record: typeof log[number]) => {
      let chosen: Answer
      try {
        chosen = typeof options.plan === "function" ? options.plan(request) : options.plan
      } catch (error) {
        record.outcome = "status"
        record.status = 500
        sendJson(res, 500, JSON.stringify({ error: { message: `fake provider plan threw: ${String(error)}` } }))
        return
      }
      const fault = chosen.fault?._tag === "StreamRejected" && !record.streaming ? undefined : chosen.fault
      record.fault = fault?._tag ?? null
      res.on("close", () => {
        if (record.outcome === "pending") record.outcome = "client-closed"
      })
      const respond = () => {
        if (res.destroyed) return
        if (fault?._tag === "Reset") {
          record.outcome = "reset"
          req.socket.destroy()
          return
        }
        if (fault?._tag === "StreamRejected") {
          record.outcome = "status"
          record.status = 400
          sendJson(res, 400, fault.body ?? Bodies.streamRejectedBody(Bodies.styleOf(chosen.source)))
          return
        }
        if (fault?._tag === "Status") {
          const headers: Record<string, string> = { ...fault.headers }
          if (fault.retryAfter !== undefined) headers["retry-after"] = String(fault.retryAfter)
          record.outcome = "status"
          record.status = fault.status
          sendJson(
            res,
            fault.status,
            fault.body ?? Bodies.errorBody(Bodies.styleOf(chosen.source), fault.status, random),
            headers
          )
          return
        }
        const form = chosen.form === "asked" ? (record.streaming ? "stream" : "json") : chosen.form ?? "stream"
        record.form = form
        const rendered = chosen.repeatPrevious === true && previous.has(request.key)
          ? previous.get(request.key)!
          : form === "json"
          ? Bodies.renderJson(chosen.source, request.body, random)
          : Bodies.render(chosen.source, request.body, random)
        previous.set(request.key, rendered)
        record.toolCallIds = rendered.toolCallIds
        let writes = fault?._tag === "Duplicate" ? [...rendered.writes, ...rendered.writes] : rendered.writes
        const chunkBytes = chosen.chunkBytes
        if (chunkBytes !== undefined) writes = Bodies.rechunk(writes, chunkBytes, random)
        const cut = fault?._tag === "Drop" || fault?._tag === "Truncate" || fault?._tag === "Stall"
          ? fault.afterBytes
          : undefined
        const limit = typeof cut === "object"
          ? Math.round(cut.fraction * writes.reduce((n, w) => n + w.length, 0))
          : cut
        if (limit !== undefined) writes = Bodies.limitWrites(writes, limit)
        const pace = chosen.paceMs ?? options.paceMs ?? 0
        record.status = 200
        const contentType = chosen.contentType === undefined
          ? form === "json" ? "application/json" : "text/event-stream; charset=utf-8"
          : chosen.contentType
        res.writeHead(200, {
          ...(contentType === null ? {} : { "content-type": contentType }),
          "cache-control": "no-cache",
          "x-request-id": `req_${random.chars(Random.alphanumeric, 24)}`
        })
        res.flushHeaders()
        const finish = () => {
          if (res.destroyed) return
          switch (fault?._tag) {
            case "Drop":
              record.outcome = "dropped"
              res.socket?.destroy()
              return
            case "Stall":
              record.outcome = "stalled"
              return
            case "Truncate":
              record.outcome = "truncated"
              res.end()
              return
            default:
              record.outcome = "completed"
              res.end()
          }
        }
        const write = (i: number) => {
          if (res.destroyed) return
          if (i >= writes.length) {
            finish()
            return
          }
          const piece = writes[i]!
          res.write(piece, () => {
            record.bytesWritten += piece.length
            if (pace > 0) later(pace, () => write(i + 1))
            else setImmediate(() => write(i + 1))
          })
        }
        write(0)
      }
      const delay = chosen.headersDelayMs ?? 0
      if (delay === Infinity) record.outcome = "stalled"
      else if (delay > 0) later(delay, respond)
      else respond()
    }

    const server = yield* LoopbackServer.make((timers) => {
      later = timers.later
      return (req, res) => {
        const seq = log.length + 1
        const record: typeof log[number] = {
          seq,
          key: "",
          attempt: 0,
          path: req.url ?? "/",
          fault: null,
          status: null,
          bytesWritten: 0,
          outcome: "pending",
          toolCallIds: [],
          streaming: false,
          form: null
        }
        log.push(record)
        if (req.method !== "POST") {
          record.outcome = "rejected"
          record.status = 405
          sendJson(res, 405, JSON.stringify({ error: { message: "only POST is supported" } }), { allow: "POST" })
          return
        }
        LoopbackServer.readBody(req, (rawBody) => {
          let body: unknown
          try {
            body = JSON.parse(rawBody)
          } catch {
            record.outcome = "rejected"
            record.status = 400
            sendJson(
              res,
              400,
              JSON.stringify({ error: { message: "the request body is not JSON", type: "invalid_request_error" } })
            )
            return
          }
          const base = { path: record.path, headers: req.headers, body, rawBody }
          const key = options.requestKey?.(base) ?? rawBody
          const attempt = (attempts.get(key) ?? 0) + 1
          attempts.set(key, attempt)
          record.key = key
          record.attempt = attempt
          record.streaming = asksForStream(base)
          answer(req, res, { ...base, key, attempt, seq }, record)
        })
      }
    })

    const stats = Effect.sync((): Stats => {
      const outcomes = emptyOutcomes()
      for (const record of log) outcomes[record.outcome]++
      return {
        requests: log.length,
        connections: server.connections(),
        openSockets: server.openSockets(),
        outcomes,
        log: log.map((record) => ({ ...record }))
      }
    })

    return { url: server.url, stats, awaitOpenSockets: server.awaitOpenSockets }
  })

/**
 * The fake provider as a service, for tests that share one server across a suite.
 *
 * @since 0.1.0
 * @category services
 */
export class FakeProvider extends Context.Service<FakeProvider, Server>()("@toolgate/testing/FakeProvider") {
  /**
   * A layer that starts the server with `options` and stops it when the layer is released.
   *
   * @since 0.1.0
   */
  static readonly layer = (options: Options): Layer.Layer<FakeProvider> => Layer.effect(FakeProvider, make(options))
}
