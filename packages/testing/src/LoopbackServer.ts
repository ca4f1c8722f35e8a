/**
 * The lifecycle the fake servers share: a `node:http` server on 127.0.0.1 (a free port) that
 * counts its connections and open sockets, runs delayed work that stops with the server, and
 * closes every socket when its scope ends, so a test can assert that a client leaked none.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { createServer, type IncomingMessage, type RequestListener } from "node:http"
import type { Socket } from "node:net"

/**
 * What a request handler gets from the server it runs in.
 *
 * - `later(ms, f)`: runs `f` after `ms` milliseconds, unless the server has stopped by then.
 *
 * @since 0.1.0
 * @category models
 */
export interface Timers {
  readonly later: (ms: number, f: () => void) => void
}

/**
 * A running loopback server.
 *
 * - `url`: `http://127.0.0.1:PORT`.
 * - `openSockets()`: sockets open now; `connections()`: connections accepted since the start.
 * - `awaitOpenSockets(count, timeoutMs = 2000)`: waits (real time, polling every 5 ms) until at
 *   most `count` sockets are open or the time is up; gives the number open then.
 *
 * @since 0.1.0
 * @category models
 */
export interface LoopbackServer extends Timers {
  readonly url: string
  readonly openSockets: () => number
  readonly connections: () => number
  readonly awaitOpenSockets: (count: number, timeoutMs?: number) => Effect.Effect<number>
}

/**
 * Starts a server whose request listener `build` makes from the server's {@link Timers}. When the
 * scope closes, pending delayed work is cancelled and every open socket is destroyed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (build: (timers: Timers) => RequestListener): Effect.Effect<LoopbackServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const sockets = new Set<Socket>()
    const pending = new Set<ReturnType<typeof setTimeout>>()
    let connections = 0
    let stopped = false
    const later = (ms: number, f: () => void) => {
      if (stopped) return
      const timer = setTimeout(() => {
        pending.delete(timer)
        f()
      }, ms)
      pending.add(timer)
    }
    const server = createServer(build({ later }))
    server.on("connection", (socket: Socket) => {
      connections++
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    const port = yield* Effect.acquireRelease(
      Effect.callback<number>((resume) => {
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0))
        })
      }),
      () =>
        Effect.callback<void>((resume) => {
          stopped = true
          for (const timer of pending) clearTimeout(timer)
          pending.clear()
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
          for (const socket of sockets) socket.destroy()
        })
    )
    const awaitOpenSockets = (count: number, timeoutMs = 2000) =>
      Effect.callback<number>((resume) => {
        const deadline = Date.now() + timeoutMs
        let timer: ReturnType<typeof setTimeout> | undefined
        const check = () => {
          if (sockets.size <= count || Date.now() >= deadline) resume(Effect.succeed(sockets.size))
          else timer = setTimeout(check, 5)
        }
        check()
        return Effect.sync(() => clearTimeout(timer))
      })
    return {
      url: `http://127.0.0.1:${port}`,
      later,
      openSockets: () => sockets.size,
      connections: () => connections,
      awaitOpenSockets
    }
  })

/**
 * Reads a request's whole body as UTF-8 text, then calls `onBody` with it.
 *
 * @since 0.1.0
 * @category requests
 */
export const readBody = (req: IncomingMessage, onBody: (text: string) => void): void => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => onBody(Buffer.concat(chunks).toString("utf8")))
}
