/**
 * A fake follow-up receiver (a Slack webhook, an ads conversion import) on 127.0.0.1: it takes
 * `POST`s with an `Idempotency-Key` header, counts the requests and the applications of each key,
 * and can answer with a fault chosen per request (a status such as 503, a stall, or "applied, then
 * 500": the effect happened and its answer says it did not).
 *
 * With `dedupe` (the default) a key already applied is answered 200 and not applied again, as a
 * receiver that honours idempotency keys does; without it, every accepted request applies, so the
 * duplicates a sender causes are counted (`duplicates`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as LoopbackServer from "./LoopbackServer.js"

/**
 * What the receiver does with one request: answer `Ok` (apply, 200); answer `status` without
 * applying; `Stall` for `ms` then answer 200 without applying (a request the sender times out
 * on: `ms` longer than its timeout); `Slow` (apply, answer 200 after `ms`: a sender killed
 * meanwhile never learns it was applied); `AppliedThenFail` (apply, then answer `status`).
 *
 * @since 0.1.0
 * @category models
 */
export type Fault =
  | { readonly _tag: "Ok" }
  | { readonly _tag: "Status"; readonly status: number }
  | { readonly _tag: "Stall"; readonly ms: number }
  | { readonly _tag: "Slow"; readonly ms: number }
  | { readonly _tag: "AppliedThenFail"; readonly status: number }

/**
 * A request as the fault plan sees it: its key (`null`: no header), its path, and which request of
 * this key it is (1 for the first).
 *
 * @since 0.1.0
 * @category models
 */
export interface Request {
  readonly key: string | null
  readonly path: string
  readonly nth: number
  readonly body: string
}

/**
 * Options: `dedupe` (default `true`), `fault` (default: every request `Ok`), `identity`: what an
 * application is counted by (default: its key), e.g. the business event a body names, so senders
 * that use different keys (or none) are counted alike.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly dedupe?: boolean | undefined
  readonly fault?: ((request: Request) => Fault) | undefined
  readonly identity?: ((request: Request) => string) | undefined
}

/**
 * A running receiver.
 *
 * - `requests()`: requests received; `requestsOf(key)`: of one key; `awaitRequests(n)`: waits
 *   (real time, polling every 5 ms) until `n` requests were received.
 * - `applied()`: applications by key (or `identity`; with `dedupe`, at most 1 each); `bodies()`:
 *   the body of each one's first application.
 * - `duplicates()`: applications beyond the first of their key or identity (0 with `dedupe`).
 *
 * @since 0.1.0
 * @category models
 */
export interface FakeReceiver extends LoopbackServer.LoopbackServer {
  readonly requests: () => number
  readonly requestsOf: (key: string) => number
  readonly awaitRequests: (count: number) => Effect.Effect<void>
  readonly applied: () => ReadonlyMap<string, number>
  readonly bodies: () => ReadonlyMap<string, string>
  readonly duplicates: () => number
}

/**
 * Starts a receiver; it stops when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<FakeReceiver, never, Scope.Scope> =>
  Effect.gen(function*() {
    const dedupe = options.dedupe ?? true
    const seen = new Map<string, number>()
    const applied = new Map<string, number>()
    const bodies = new Map<string, string>()
    let requests = 0
    let duplicates = 0
    const apply = (key: string | null, body: string, request: Request): void => {
      const id = options.identity?.(request) ?? key ?? `(no key #${requests})`
      if (dedupe && applied.has(id)) return
      const before = applied.get(id) ?? 0
      if (before > 0) duplicates++
      else bodies.set(id, body)
      applied.set(id, before + 1)
    }
    const server = yield* LoopbackServer.make((timers) => (req, res) => {
      LoopbackServer.readBody(req, (body) => {
        requests++
        const header = req.headers["idempotency-key"]
        const key = typeof header === "string" ? header : null
        const nth = (seen.get(key ?? "") ?? 0) + 1
        if (key !== null) seen.set(key, nth)
        const request: Request = { key, path: req.url ?? "/", nth, body }
        const fault = options.fault?.(request) ?? { _tag: "Ok" }
        const answer = (status: number) => {
          res.writeHead(status, { "content-type": "application/json" })
          res.end(status < 300 ? `{"ok":true}` : `{"ok":false}`)
        }
        switch (fault._tag) {
          case "Ok":
            apply(key, body, request)
            return answer(200)
          case "Status":
            return answer(fault.status)
          case "Stall":
            return timers.later(fault.ms, () => {
              if (!res.destroyed) answer(200)
            })
          case "Slow":
            apply(key, body, request)
            return timers.later(fault.ms, () => {
              if (!res.destroyed) answer(200)
            })
          case "AppliedThenFail":
            apply(key, body, request)
            return answer(fault.status)
        }
      })
    })
    return {
      ...server,
      requests: () => requests,
      requestsOf: (key) => seen.get(key) ?? 0,
      awaitRequests: (count) =>
        Effect.callback<void>((resume) => {
          let timer: ReturnType<typeof setTimeout> | undefined
          const check = () => {
            if (requests >= count) resume(Effect.void)
            else timer = setTimeout(check, 5)
          }
          check()
          return Effect.sync(() => clearTimeout(timer))
        }),
      applied: () => new Map(applied),
      bodies: () => new Map(bodies),
      duplicates: () => duplicates
    }
  })
