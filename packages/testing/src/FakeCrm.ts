/**
 * A fake CRM: an HTTP server on 127.0.0.1 (a free port) that applies mutations and keeps the
 * books on them, for tests and for the `npm start` demo. It is the witness of exactly-once
 * execution: it counts every mutation it applies, keyed by (lead, action), and how many were
 * duplicates. Built on `node:http`, so that a fault is exactly the one asked for.
 *
 * Protocol:
 *
 * - `POST <any path>` with a JSON object body `{ "lead": string, "action": string, ... }` (or
 *   `lead_id` for `lead`, as a tool's own parameters name it) applies one mutation and answers `200 {"id": "mut_000001", "lead", "action", "status":
 *   "applied"}`. Without an `action` member, the last path segment is the action
 *   (`POST /tools/create_task`). A body that is not such an object is `400`, not applied.
 * - `Idempotency-Key` (IETF draft-ietf-httpapi-idempotency-key-header): the first request with a
 *   key is applied and its response stored; a repeat with the same key and the same body gets the
 *   stored response again with `idempotent-replayed: true` and is not a new mutation; the same key
 *   with a different body is `422`; a repeat while the first is still being processed is `409`.
 *   A `FailBefore` fault releases the key (nothing was done); every other outcome is stored, the
 *   ambiguous ones included: a retry after a dropped answer learns the first result.
 * - `GET <any path>` answers the current {@link Stats} as JSON.
 *
 * Faults, chosen per request by a caller-supplied plan:
 *
 * - `FailBefore`: not applied; `503` (or `status`) with a JSON error and optional `Retry-After`.
 * - `ApplyThenDrop`: applied, then the socket is destroyed before any answer: the client cannot
 *   know whether it was applied (an ambiguous outcome).
 * - `ApplyThenStall`: applied, then no answer; the socket stays open until the client gives up
 *   (a client timeout: ambiguous too).
 * - `Reject`: not applied; a terminal `409` or `422` (or any `status`) with a JSON error.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"
import * as LoopbackServer from "./LoopbackServer.js"

/**
 * A fault injected into one mutation request.
 *
 * @since 0.1.0
 * @category models
 */
export type Fault =
  | { readonly _tag: "FailBefore"; readonly status?: number | undefined; readonly retryAfter?: number | undefined }
  | { readonly _tag: "ApplyThenDrop" }
  | { readonly _tag: "ApplyThenStall" }
  | { readonly _tag: "Reject"; readonly status: number; readonly message?: string | undefined }

/**
 * A mutation request as the plan sees it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Request {
  readonly lead: string
  readonly action: string
  readonly body: Readonly<Record<string, unknown>>
  readonly idempotencyKey: string | null
  /** 1 for the first request for this (lead, action), 2 for the next, … (replays included). */
  readonly attempt: number
  readonly path: string
  readonly headers: IncomingHttpHeaders
}

/**
 * One applied mutation.
 *
 * @since 0.1.0
 * @category models
 */
export interface Mutation {
  /** `mut_000001`, … in order of application. */
  readonly id: string
  readonly lead: string
  readonly action: string
  readonly body: Readonly<Record<string, unknown>>
  readonly idempotencyKey: string | null
  /** Whether the client got an answer (`false` for `ApplyThenDrop` and `ApplyThenStall`). */
  readonly answered: boolean
}

/**
 * A snapshot of the CRM's books.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stats {
  /** Every request received, GETs excluded. */
  readonly requests: number
  /** Mutations applied. */
  readonly mutations: number
  /** Mutations applied to a (lead, action) that had already been applied: Σ max(0, count − 1). */
  readonly duplicates: number
  /** Applied mutations per (lead, action), keyed `lead/action`. */
  readonly byKey: Readonly<Record<string, number>>
  /** Repeats answered from the idempotency store (not applied again). */
  readonly replayed: number
  /** `FailBefore` answers (not applied). */
  readonly failedBefore: number
  /** `Reject` answers, key conflicts (`409`, `422`) and bad requests (`400`) (not applied). */
  readonly rejected: number
  /** Applied without an answer reaching the client (`ApplyThenDrop`, `ApplyThenStall`). */
  readonly ambiguous: number
  /** Sockets open now. */
  readonly openSockets: number
  readonly log: ReadonlyArray<Mutation>
}

/**
 * Server options.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Chooses a fault per request; default none. Not consulted for idempotent replays. */
  readonly plan?: ((request: Request) => Fault | undefined) | undefined
  /** Milliseconds a mutation takes before it is applied (to widen races); default 0. */
  readonly latencyMs?: number | undefined
}

/**
 * A running fake CRM.
 *
 * @since 0.1.0
 * @category models
 */
export interface Server {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string
  readonly stats: Effect.Effect<Stats>
  /**
   * Waits (real time, polling) until at most `count` sockets are open or `timeoutMs` (default
   * 2000) has passed; gives the number open then.
   */
  readonly awaitOpenSockets: (count: number, timeoutMs?: number) => Effect.Effect<number>
}

interface Stored {
  readonly fingerprint: string
  /** `undefined` while the first request is being processed. */
  response: { readonly status: number; readonly body: string } | undefined
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = typeof body === "string" ? body : JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(text)
  return text
}

const errorBody = (code: string, message: string) => ({ error: { code, message } })

/**
 * A tools-file entry (`toolgate run --tools`, `toolgate worker --tools`) for a tool this CRM
 * performs: an OpenAI Chat function whose arguments are `properties` (name → JSON type, all
 * required), with `"webhook": "<crmUrl>/tools/<name>"`; `extra` adds members beside `"function"`
 * (an `"idempotency"` policy).
 *
 * @since 0.1.0
 * @category tools files
 */
export const toolDefinition = (
  crmUrl: string,
  name: string,
  properties: Readonly<Record<string, "string" | "number">>,
  extra: Readonly<Record<string, unknown>> = {}
) => ({
  type: "function",
  function: {
    name,
    parameters: {
      type: "object",
      properties: Object.fromEntries(Object.entries(properties).map(([k, type]) => [k, { type }])),
      required: Object.keys(properties)
    }
  },
  webhook: `${crmUrl}/tools/${name}`,
  ...extra
})

/**
 * Starts a fake CRM on 127.0.0.1 (a free port); it stops, destroying every open socket, when
 * the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Server, never, Scope.Scope> =>
  Effect.gen(function*() {
    const attempts = new Map<string, number>()
    const byKey = new Map<string, number>()
    const keys = new Map<string, Stored>()
    const log: Array<{ -readonly [K in keyof Mutation]: Mutation[K] }> = []
    const counters = { requests: 0, replayed: 0, failedBefore: 0, rejected: 0, ambiguous: 0 }
    // Set once the server is up; the snapshot and the handlers only run after that.
    let server: LoopbackServer.LoopbackServer

    const snapshot = (): Stats => {
      let duplicates = 0
      for (const count of byKey.values()) duplicates += Math.max(0, count - 1)
      return {
        ...counters,
        mutations: log.length,
        duplicates,
        byKey: Object.fromEntries(byKey),
        openSockets: server.openSockets(),
        log: log.map((m) => ({ ...m }))
      }
    }

    const apply = (request: Request) => {
      const pair = `${request.lead}/${request.action}`
      byKey.set(pair, (byKey.get(pair) ?? 0) + 1)
      const mutation = {
        id: `mut_${String(log.length + 1).padStart(6, "0")}`,
        lead: request.lead,
        action: request.action,
        body: request.body,
        idempotencyKey: request.idempotencyKey,
        answered: true
      }
      log.push(mutation)
      return mutation
    }

    const handle = (res: ServerResponse, request: Request, stored: Stored | undefined) => {
      const fault = options.plan?.(request)
      const store = (status: number, body: string) => {
        if (stored !== undefined) stored.response = { status, body }
      }
      if (fault?._tag === "FailBefore") {
        counters.failedBefore++
        if (request.idempotencyKey !== null) keys.delete(request.idempotencyKey)
        json(
          res,
          fault.status ?? 503,
          errorBody("unavailable", "the CRM is temporarily unavailable; nothing was applied"),
          fault.retryAfter === undefined ? {} : { "retry-after": String(fault.retryAfter) }
        )
        return
      }
      if (fault?._tag === "Reject") {
        counters.rejected++
        const code = fault.status === 409 ? "conflict" : fault.status === 422 ? "unprocessable" : "rejected"
        store(
          fault.status,
          json(res, fault.status, errorBody(code, fault.message ?? `the CRM rejected ${request.action}`))
        )
        return
      }
      const mutation = apply(request)
      const body = JSON.stringify({ id: mutation.id, lead: request.lead, action: request.action, status: "applied" })
      store(200, body)
      if (fault?._tag === "ApplyThenDrop") {
        counters.ambiguous++
        mutation.answered = false
        res.socket?.destroy()
        return
      }
      if (fault?._tag === "ApplyThenStall") {
        counters.ambiguous++
        mutation.answered = false
        return
      }
      json(res, 200, body)
    }

    const listener = (later: LoopbackServer.Timers["later"]) => (req: IncomingMessage, res: ServerResponse) => {
      if (req.method === "GET") {
        json(res, 200, snapshot())
        return
      }
      counters.requests++
      LoopbackServer.readBody(req, (rawBody) => {
        let body: unknown
        try {
          body = JSON.parse(rawBody)
        } catch {
          body = undefined
        }
        const path = req.url ?? "/"
        const record = typeof body === "object" && body !== null && !Array.isArray(body)
          ? body as Record<string, unknown>
          : undefined
        const action = typeof record?.action === "string"
          ? record.action
          : path.split("?")[0]!.split("/").filter((s) => s !== "").pop()
        const lead = typeof record?.lead === "string"
          ? record.lead
          : typeof record?.lead_id === "string"
          ? record.lead_id
          : undefined
        if (record === undefined || lead === undefined || action === undefined) {
          counters.rejected++
          json(res, 400, errorBody("bad_request", "expected a JSON object with a string `lead` and an `action`"))
          return
        }
        const pair = `${lead}/${action}`
        const attempt = (attempts.get(pair) ?? 0) + 1
        attempts.set(pair, attempt)
        const header = req.headers["idempotency-key"]
        const idempotencyKey = typeof header === "string" && header !== "" ? header : null
        const request: Request = {
          lead,
          action,
          body: record,
          idempotencyKey,
          attempt,
          path,
          headers: req.headers
        }
        let stored: Stored | undefined
        if (idempotencyKey !== null) {
          const fingerprint = `${path}\n${JSON.stringify(record)}`
          const known = keys.get(idempotencyKey)
          if (known !== undefined) {
            if (known.fingerprint !== fingerprint) {
              counters.rejected++
              json(
                res,
                422,
                errorBody("idempotency_key_reused", "this Idempotency-Key was used with a different request")
              )
            } else if (known.response === undefined) {
              counters.rejected++
              json(
                res,
                409,
                errorBody("idempotency_key_in_use", "a request with this Idempotency-Key is being processed")
              )
            } else {
              counters.replayed++
              json(res, known.response.status, known.response.body, { "idempotent-replayed": "true" })
            }
            return
          }
          stored = { fingerprint, response: undefined }
          keys.set(idempotencyKey, stored)
        }
        const latency = options.latencyMs ?? 0
        if (latency > 0) later(latency, () => handle(res, request, stored))
        else handle(res, request, stored)
      })
    }
    server = yield* LoopbackServer.make(({ later }) => listener(later))

    return { url: server.url, stats: Effect.sync(snapshot), awaitOpenSockets: server.awaitOpenSockets }
  })

/**
 * The fake CRM as a service, for tests that share one server across a suite.
 *
 * @since 0.1.0
 * @category services
 */
export class FakeCrm extends Context.Service<FakeCrm, Server>()("@toolgate/testing/FakeCrm") {
  /**
   * A layer that starts the server with `options` and stops it when the layer is released.
   *
   * @since 0.1.0
   */
  static readonly layer = (options?: Options): Layer.Layer<FakeCrm> => Layer.effect(FakeCrm, make(options))
}
