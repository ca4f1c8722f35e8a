/**
 * Lease supervision: handler code runs in its own fiber while one timer per executor (the
 * `Watch`) extends the leases of all running handlers every `heartbeatMs` and, at a handler's
 * deadline or when its heartbeat is fenced off, interrupts it (aborting its `signal`) and reports
 * why. A running handler costs an entry in the watch, not a fiber and a timer of its own. Time is
 * the executor's clock (effect's `Clock` of the fiber that starts the timer: `TestClock` drives
 * it); the lease itself expires on the store's clock, which is why a heartbeat comes at most
 * every half lease.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type { LeaseLost } from "../../ExecutionError.js"
import type * as IdempotencyStore from "../../IdempotencyStore.js"
import type { Entry, LiveContext } from "./config.js"

/** The handler's deadline passed (an internal signal; it becomes `ExecutionTimeout`). @internal */
export class HandlerTimedOut extends Data.TaggedError("HandlerTimedOut")<{}> {}

/** One running handler under the watch. */
interface Watched {
  readonly entry: Entry
  readonly lease: IdempotencyStore.Lease
  readonly deadline: number
  readonly handler: Fiber.Fiber<unknown, unknown>
  /** ms on the executor's clock of the next heartbeat. */
  nextBeat: number
  /** Why the watch interrupted the handler. */
  stopped: LeaseLost | HandlerTimedOut | undefined
}

/**
 * The supervision of an executor's running handlers: one timer fiber, running while any handler
 * runs, that wakes at the earliest heartbeat or deadline due, heartbeats every lease due (each in
 * its own short fiber, so a slow store delays no timeout) and interrupts every handler past its
 * deadline or whose heartbeat was fenced off. An unreachable store is retried at the next beat
 * (the lease may lapse meanwhile, and then the next beat is fenced off).
 *
 * @internal
 */
export const makeWatch = (store: IdempotencyStore.Service, services: Context.Context<unknown> | undefined) => {
  const watched = new Set<Watched>()
  /** The running timer fiber (none while nothing is watched), and when it wakes next. */
  let timer: Fiber.Fiber<void> | undefined
  let wakeAt = Infinity

  /** Ends a handler's watch; the timer stops with the last one (no timer outlives the handlers). */
  const unwatch = (w: Watched) => {
    if (!watched.delete(w) || watched.size > 0 || timer === undefined) return
    const idle = timer
    timer = undefined
    wakeAt = Infinity
    idle.interruptUnsafe()
  }

  const stop = (w: Watched, reason: LeaseLost | HandlerTimedOut) => {
    if (!watched.has(w)) return
    w.stopped = reason
    unwatch(w)
    w.handler.interruptUnsafe()
  }

  /**
   * One heartbeat, in a root span of its own (`ToolExecutor.heartbeat`, with the call's key hash and
   * tool): the timer fiber was forked by whichever call started it, so without `root` every beat
   * would be parented to that call's span, whatever call it extends.
   */
  const beat = (w: Watched) =>
    store.heartbeat(w.lease, { leaseMs: w.entry.leaseMs }).pipe(
      Effect.catchTag("StoreUnavailable", () => Effect.void),
      Effect.catchTag("LeaseLost", (lost) => Effect.sync(() => stop(w, lost))),
      // the lease was validated at construction (≥ 100 ms); the store cannot refuse it
      Effect.catchTag("InvalidStoreRequest", Effect.die),
      Effect.withSpan("ToolExecutor.heartbeat", {
        root: true,
        attributes: { "toolgate.key": w.lease.key, "toolgate.tool": w.entry.name }
      }, { captureStackTrace: false })
    )

  /** Beats and stops what is due at `now`; the next time anything is due (`Infinity`: nothing runs). */
  const tick = (now: number): { readonly next: number; readonly due: ReadonlyArray<Watched> } => {
    let next = Infinity
    const due: Array<Watched> = []
    for (const w of watched) {
      if (now >= w.deadline) {
        stop(w, new HandlerTimedOut())
        continue
      }
      if (now >= w.nextBeat) {
        w.nextBeat = now + w.entry.heartbeatMs
        due.push(w)
      }
      next = Math.min(next, w.nextBeat, w.deadline)
    }
    return { next, due }
  }

  const loop = (self: { fiber: Fiber.Fiber<void> | undefined }): Effect.Effect<void> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (timer !== self.fiber) return Effect.void
      // the last handler to time out stopped this timer: `timer` is checked again below
      const { due, next } = tick(now)
      if (timer !== self.fiber || next === Infinity) return Effect.void
      wakeAt = next
      const beats = due.length === 0
        ? Effect.void
        : Effect.forEach(due, (w) => Effect.forkDetach(beat(w)), { discard: true })
      return Effect.andThen(beats, Effect.andThen(Effect.sleep(next - now), Effect.suspend(() => loop(self))))
    })

  /** Starts a timer that wakes at `at` (the one running wakes later, or none runs). */
  const startTimer = (at: number): Effect.Effect<void> => {
    timer?.interruptUnsafe()
    wakeAt = at
    const self: { fiber: Fiber.Fiber<void> | undefined } = { fiber: undefined }
    return Effect.map(Effect.forkDetach(Effect.suspend(() => loop(self))), (fiber) => {
      self.fiber = fiber
      timer = fiber
    })
  }

  /**
   * Runs handler code (`effect`, given the handlers' `services` when there are any) in its own
   * fiber, aborting the context's signal when it is interrupted. While it runs, the watch extends
   * the lease and, at `deadline` (ms on the executor's clock) or when the lease is lost,
   * interrupts the handler and fails with the reason. A handler that finishes without suspending
   * (it had nothing to wait for) is done before a heartbeat or a timeout could matter, so it is
   * never watched.
   */
  const supervised = <A>(
    entry: Entry,
    lease: IdempotencyStore.Lease,
    context: LiveContext,
    effect: Effect.Effect<A, unknown, unknown>,
    started: number,
    deadline: number
  ): Effect.Effect<A, unknown> =>
    Effect.flatMap(
      Effect.forkChild(
        (services === undefined ? effect : Effect.provideContext(effect, services)).pipe(
          Effect.onInterrupt(() => Effect.sync(() => context.abort()))
        ) as Effect.Effect<A, unknown>,
        { startImmediately: true }
      ),
      (handler) => {
        const done = handler.pollUnsafe()
        if (done !== undefined) return done
        const w: Watched = {
          entry,
          lease,
          deadline,
          handler,
          nextBeat: started + entry.heartbeatMs,
          stopped: undefined
        }
        watched.add(w)
        const due = Math.min(w.nextBeat, deadline)
        const watching = timer === undefined || due < wakeAt ? startTimer(due) : Effect.void
        return Effect.andThen(
          watching,
          Fiber.await(handler).pipe(
            // the caller was interrupted: interrupt the handler and wait for it (its signal aborts)
            Effect.onInterrupt(() => Fiber.interrupt(handler)),
            // nobody waits for a beat in flight: one fenced off after the handler ended changes nothing
            Effect.ensuring(Effect.sync(() => unwatch(w))),
            // the handler's own outcome wins; the watch's reason explains an interruption
            Effect.flatMap((exit): Effect.Effect<A, unknown> =>
              w.stopped !== undefined && Exit.isFailure(exit) && Cause.hasInterrupts(exit.cause)
                ? Effect.fail(w.stopped)
                : exit as Exit.Exit<A, unknown>
            )
          )
        )
      }
    )

  return { supervised }
}
