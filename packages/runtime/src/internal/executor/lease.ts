/**
 * Lease supervision: handler code runs in its own fiber while one alarm per executor (the
 * `Watch`) extends the leases of all running handlers every `heartbeatMs` and, at a handler's
 * deadline or when its heartbeat is fenced off, interrupts it (aborting its `signal`) and reports
 * why. A running handler costs an entry in the watch, not a fiber and a timer of its own. Time is
 * the executor's clock (effect's `Clock` of the fiber that runs the handler: `TestClock` drives
 * it); the lease itself expires on the store's clock, which is why a heartbeat comes at most
 * every half lease.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type { LeaseLost } from "../../ExecutionError.js"
import type * as IdempotencyStore from "../../IdempotencyStore.js"
import type { Entry, LiveContext } from "./config.js"

/**
 * The class of effect's own clock (`Clock.Clock`'s default): on it the alarm is a plain timer, on
 * any other (`TestClock`, a caller's own) a fiber sleeping on that clock.
 */
const LiveClock = Clock.Clock.defaultValue().constructor

/** The longest delay a Node timer takes (longer ones fire at once); a later alarm rings early and is set again. */
const maxTimerMs = 2 ** 31 - 1

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
 * The supervision of an executor's running handlers: one alarm, set while any handler runs, that
 * rings at the earliest heartbeat or deadline due, heartbeats every lease due (each in its own
 * short fiber, so a slow store delays no timeout) and interrupts every handler past its deadline
 * or whose heartbeat was fenced off. An unreachable store is retried at the next beat (the lease
 * may lapse meanwhile, and then the next beat is fenced off). On effect's own clock the alarm is
 * one Node timer (set and cleared in well under a microsecond, where a timer fiber per busy
 * period cost about 10 µs of CPU per call run one at a time); on any other clock it is a fiber
 * sleeping on that clock. Either keeps the process alive only while a handler is watched.
 *
 * @internal
 */
export const makeWatch = (store: IdempotencyStore.Service, services: Context.Context<unknown> | undefined) => {
  const watched = new Set<Watched>()
  /** When the alarm rings (`Infinity`: none is set), and how to take it back. */
  let wakeAt = Infinity
  let cancel: (() => void) | undefined

  const disarm = () => {
    wakeAt = Infinity
    if (cancel === undefined) return
    const taken = cancel
    cancel = undefined
    taken()
  }

  /** Ends a handler's watch; the alarm is taken back with the last one (none outlives the handlers). */
  const unwatch = (w: Watched) => {
    if (watched.delete(w) && watched.size === 0) disarm()
  }

  const stop = (w: Watched, reason: LeaseLost | HandlerTimedOut) => {
    if (!watched.has(w)) return
    w.stopped = reason
    unwatch(w)
    w.handler.interruptUnsafe()
  }

  /**
   * One heartbeat, in a root span of its own (`ToolExecutor.heartbeat`, with the call's key hash and
   * tool): the alarm was set by whichever call found none, so without `root` every beat would be
   * parented to that call's span, whatever call it extends.
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

  /**
   * The alarm rang at `now` (ms on `clock`): stops what is past its deadline, sets the alarm again
   * for what comes next, then beats what is due (each beat a fiber with the context of the call
   * that set the alarm). The alarm is set before the beats start because a beat may end its call
   * there and then (a store that answers at once, a fenced-off lease), and the caller's next call
   * may set an earlier alarm of its own, which must stand.
   */
  const ring = (now: number, clock: Clock.Clock, context: Context.Context<never>) => {
    cancel = undefined
    wakeAt = Infinity
    const { due, next } = tick(now)
    // (`wakeAt` is back to Infinity unless a call that `tick` stopped was followed by one that set its own)
    if (next < wakeAt && watched.size > 0) arm(next, now, clock, context)
    // a store whose heartbeat throws fails its beat, never the alarm
    for (const w of due) Effect.runForkWith(context)(Effect.suspend(() => beat(w)))
  }

  /** Sets the alarm to ring at `at` (ms on `clock`, whose reading is `now`), in place of any set. */
  const arm = (at: number, now: number, clock: Clock.Clock, context: Context.Context<never>) => {
    disarm()
    wakeAt = at
    if (clock instanceof LiveClock) {
      const handle = setTimeout(() => ring(Date.now(), clock, context), Math.min(Math.max(0, at - now), maxTimerMs))
      cancel = () => clearTimeout(handle)
      return
    }
    // A clock may end a sleep at once (`TestClock`, a delay ≤ 0): the alarm then rang, and maybe set
    // the next one, before the fiber is returned here; this fiber is over and must not replace it.
    let rang = false
    const fiber = Effect.runForkWith(context)(
      Effect.andThen(
        clock.sleep(Duration.millis(Math.max(0, at - now))),
        Effect.sync(() => {
          rang = true
          ring(clock.currentTimeMillisUnsafe(), clock, context)
        })
      )
    )
    if (!rang) cancel = () => fiber.interruptUnsafe()
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
        return Effect.withFiber((fiber) => {
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
          if (due < wakeAt) {
            const clock = fiber.getRef(Clock.Clock)
            arm(due, clock.currentTimeMillisUnsafe(), clock, fiber.context)
          }
          return Fiber.await(handler).pipe(
            // The wait ends: the watch ends (nobody waits for a beat in flight: one fenced off after
            // the handler ended changes nothing). It ends by interruption only when the caller was
            // interrupted: then the handler is interrupted and waited for first (its signal aborts).
            Effect.onExit((awaited) =>
              Exit.isFailure(awaited)
                ? Effect.ensuring(Fiber.interrupt(handler), Effect.sync(() => unwatch(w)))
                : Effect.sync(() => unwatch(w))
            ),
            // the handler's own outcome wins; the watch's reason explains an interruption
            Effect.flatMap((exit): Effect.Effect<A, unknown> =>
              w.stopped !== undefined && Exit.isFailure(exit) && Cause.hasInterrupts(exit.cause)
                ? Effect.fail(w.stopped)
                : exit as Exit.Exit<A, unknown>
            )
          )
        })
      }
    )

  return { supervised }
}
