/**
 * Group commit: the writes of one kind (the SQL store's claims, or its completes) that fibers of this process make while
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
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"

/** A caller's request and where its answer goes. */
interface Waiting<Req, A, E> {
  readonly request: Req
  readonly context: Context.Context<never>
  /** When it started waiting, ms on its caller's clock. */
  readonly since: number
  readonly resume: (exit: Exit.Exit<A, E>) => void
  sent: boolean
}

/** @internal */
export interface Options<Req, A, E> {
  /** Statements of this kind in flight before callers wait (≥ 1). */
  readonly inFlight: number
  /** Requests in one statement at most. */
  readonly maxBatch: number
  /**
   * How long a request waits at most (ms, on effect's `Clock`): the ones not sent by then go at
   * once, in a statement of their own outside the `inFlight` bound, so statements that do not answer
   * (blocked on a lock that another transaction holds) do not hold back the requests behind them.
   * One timer per sender runs while anything waits. `undefined` or `Infinity`: they wait as long.
   */
  readonly maxWaitMs?: number | undefined
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
  const { inFlight, maxBatch, many, maxWaitMs, one } = options
  let running = 0
  let queue: Array<Waiting<Req, A, E>> = []

  const finish = (batch: ReadonlyArray<Waiting<Req, A, E>>, exits: ReadonlyArray<Exit.Exit<A, E>>) => {
    // answers that do not pair with the requests (a bug of `many`) are every caller's defect, not a hang
    const paired = exits.length === batch.length
    const mismatch = paired
      ? undefined
      : Exit.die(new Error(`group commit: ${exits.length} answers for ${batch.length} requests`))
    for (let i = 0; i < batch.length; i++) batch[i].resume(mismatch ?? exits[i])
  }

  /** The one timer of `maxWaitMs` (none while nothing waits), and whether `maxWaitMs` bounds waiting. */
  let timer: Fiber.Fiber<void> | undefined
  const waitMs = maxWaitMs ?? Infinity
  const bounded = Number.isFinite(waitMs)

  /** Sends `batch` in a fiber of its own, in a slot its caller took; the slot is given back when it ends, however it ends. */
  const start = (batch: ReadonlyArray<Waiting<Req, A, E>>) => {
    for (const w of batch) w.sent = true
    // suspended: a defect thrown while `one` or `many` builds its statement is the statement's
    // defect (answered below, the slot given back), not a throw out of `pump` that strands the batch
    const run: Effect.Effect<ReadonlyArray<Exit.Exit<A, E>>> = batch.length === 1
      ? Effect.map(Effect.exit(Effect.suspend(() => one(batch[0].request))), (exit) => [exit])
      : Effect.suspend(() => many(batch.map((w) => w.request)))
    Effect.runForkWith(batch[0].context)(
      run.pipe(
        // a defect (or an interruption) of the statement is every caller's
        Effect.onExit((exit) =>
          Effect.sync(() => {
            if (Exit.isSuccess(exit)) finish(batch, exit.value)
            else finish(batch, batch.map(() => exit as Exit.Exit<never>))
            release()
          })
        )
      )
    )
  }

  /** A statement ended: its slot is free for what waits; with nothing out and nothing waiting, no timer runs. */
  const release = () => {
    running--
    pump()
    if (running === 0 && queue.length === 0 && timer !== undefined) {
      const idle = timer
      timer = undefined
      idle.interruptUnsafe()
    }
  }

  /** Sends what waits while fewer than `inFlight` statements are out. */
  const pump = () => {
    while (running < inFlight && queue.length > 0) {
      const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch)
      queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch)
      running++
      start(batch)
    }
  }

  /**
   * The timer fired at `now`: what has waited `maxWaitMs` goes at once, in statements of its own
   * outside the `inFlight` bound (the statements out may be waiting for a lock another transaction
   * holds); the timer is set again for the oldest request left.
   */
  const expire = (now: number) => {
    timer = undefined
    let due = 0
    while (due < queue.length && now - queue[due].since >= waitMs) due++
    if (due > 0) {
      const expired = queue.slice(0, due)
      queue = queue.slice(due)
      for (let i = 0; i < expired.length; i += maxBatch) {
        running++
        start(expired.slice(i, i + maxBatch))
      }
    }
    if (queue.length > 0) arm(queue[0].context, queue[0].since + waitMs - now)
  }

  /** Starts the timer (on the clock of `context`) to fire in `delayMs`. */
  const arm = (context: Context.Context<never>, delayMs: number) => {
    timer = Effect.runForkWith(context)(
      Effect.andThen(
        Effect.sleep(Math.max(0, delayMs)),
        Effect.clockWith((clock) => Effect.sync(() => expire(clock.currentTimeMillisUnsafe())))
      )
    )
  }

  /**
   * Fewer statements out than `inFlight` and nobody waiting: the caller's own fiber sends it (no hop).
   * The slot is taken and its release registered without a point of interruption between them (the
   * caller may be interrupted at any yield), and `one` is built inside, so a throw gives it back too.
   */
  const alone = (request: Req, restore: <X, Y, Z>(effect: Effect.Effect<X, Y, Z>) => Effect.Effect<X, Y, Z>) => {
    running++
    return Effect.onExit(restore(Effect.suspend(() => one(request))), () => Effect.sync(release))
  }

  const send = (request: Req): Effect.Effect<A, E> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() =>
        running < inFlight && queue.length === 0 ? alone(request, restore) : restore(waitFor(request))
      )
    )

  const waitFor = (request: Req): Effect.Effect<A, E> =>
    Effect.clockWith((clock) =>
      Effect.contextWith((context: Context.Context<never>) =>
        Effect.callback<A, E>((resume) => {
          const waiting: Waiting<Req, A, E> = {
            request,
            context,
            since: clock.currentTimeMillisUnsafe(),
            resume,
            sent: false
          }
          queue.push(waiting)
          pump()
          if (bounded && timer === undefined && !waiting.sent) arm(context, waitMs)
          return Effect.sync(() => {
            if (!waiting.sent) queue = queue.filter((w) => w !== waiting)
          })
        })
      )
    )

  return { send }
}
