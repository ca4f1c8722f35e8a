/**
 * Group commit: the writes of one kind (the SQL store's claims) that fibers of this process make while
 * `inFlight` statements of that kind are already on their way to the database wait, and go together
 * as one statement when one of those answers ("natural batching": nothing waits while fewer are
 * in flight, so a lone caller pays no delay, and a busy process sends fewer, larger statements —
 * fewer round trips, commits and WAL flushes per call). Each caller gets its own answer (`many`
 * answers per request, in order); a caller interrupted while it waits is taken out of the queue and
 * never sent; one interrupted after its statement left gets nothing, as with a statement of its own.
 *
 * A request that goes at once runs in its caller's fiber; a statement of requests that waited runs
 * in a fiber of its own, forked with the context of the first caller in it (its tracer and current
 * span, its clock); the store's services are captured at construction.
 *
 * @internal
 */
import { type Context, Effect, Exit } from "effect"

/** A caller's request and where its answer goes. */
interface Waiting<Req, A, E> {
  readonly request: Req
  readonly context: Context.Context<never>
  readonly resume: (exit: Exit.Exit<A, E>) => void
  sent: boolean
}

/** @internal */
export interface Options<Req, A, E> {
  /** Statements of this kind in flight before callers wait (≥ 1). */
  readonly inFlight: number
  /** Requests in one statement at most. */
  readonly maxBatch: number
  /** A request alone: its single statement. */
  readonly one: (request: Req) => Effect.Effect<A, E>
  /** Several requests (2 or more) in one statement: an answer per request, in their order. */
  readonly many: (requests: ReadonlyArray<Req>) => Effect.Effect<ReadonlyArray<Exit.Exit<A, E>>>
}

/**
 * A group-committing sender: `send(request)` answers as `one(request)` would, sharing the
 * statement with the requests that wait beside it.
 *
 * @internal
 */
export const make = <Req, A, E>(options: Options<Req, A, E>) => {
  const { inFlight, maxBatch, many, one } = options
  let running = 0
  let queue: Array<Waiting<Req, A, E>> = []

  /** A statement ended: its slot is free for what waits. */
  const release = () => {
    running--
    pump()
  }

  /** Sends what waits while fewer than `inFlight` statements are out. */
  const pump = () => {
    while (running < inFlight && queue.length > 0) {
      const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch)
      queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch)
      for (const w of batch) w.sent = true
      running++
      // built inside the fiber: a `one` or `many` that throws is that statement's defect, not the pump's
      const run: Effect.Effect<ReadonlyArray<Exit.Exit<A, E>>> = Effect.suspend(() =>
        batch.length === 1
          ? Effect.map(Effect.exit(one(batch[0].request)), (exit) => [exit])
          : many(batch.map((w) => w.request))
      )
      Effect.runForkWith(batch[0].context)(
        run.pipe(
          // a defect (or an interruption) of the statement is every caller's
          Effect.onExit((exit) =>
            Effect.sync(() => {
              for (let i = 0; i < batch.length; i++) {
                batch[i].resume(
                  Exit.isFailure(exit)
                    ? exit as Exit.Exit<never>
                    : exit.value[i] ?? Exit.die(new Error("GroupCommit: the statement gave no answer for a request"))
                )
              }
              release()
            })
          )
        )
      )
    }
  }

  /**
   * Sends `request`: at once from the caller's fiber while fewer than `inFlight` statements are out
   * and nobody waits (no other fiber, no scheduler hop); else it waits for a slot. The slot is
   * taken and its release installed without a gap an interruption could fall into.
   */
  const send = (request: Req): Effect.Effect<A, E> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        if (running >= inFlight || queue.length > 0) return restore(waitFor(request))
        running++
        return Effect.onExit(restore(Effect.suspend(() => one(request))), () => Effect.sync(release))
      })
    )

  const waitFor = (request: Req): Effect.Effect<A, E> =>
    Effect.contextWith((context: Context.Context<never>) =>
      Effect.callback<A, E>((resume) => {
        const waiting: Waiting<Req, A, E> = { request, context, resume: (exit) => resume(exit), sent: false }
        queue.push(waiting)
        pump()
        return Effect.sync(() => {
          if (!waiting.sent) queue = queue.filter((w) => w !== waiting)
        })
      })
    )

  return { send }
}
