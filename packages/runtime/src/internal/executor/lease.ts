/**
 * Lease supervision: handler code runs in its own fiber while a watchdog fiber extends the lease
 * every `heartbeatMs` and, at the handler's deadline or when a heartbeat is fenced off, interrupts
 * the handler (aborting its `signal`) and reports why. Time is the executor's clock (effect's
 * `Clock`: `TestClock` drives it); the lease itself expires on the store's clock, which is why a
 * heartbeat comes at most every half lease.
 *
 * @internal
 */
import { Cause, Clock, type Context, Data, Effect, Exit, Fiber } from "effect"
import type { LeaseLost } from "../../ExecutionError.js"
import type * as IdempotencyStore from "../../IdempotencyStore.js"
import type { Entry, LiveContext } from "./config.js"

/** The handler's deadline passed (an internal signal; it becomes `ExecutionTimeout`). @internal */
export class HandlerTimedOut extends Data.TaggedError("HandlerTimedOut")<{}> {}

/**
 * Extends the lease every `heartbeatMs`; fails with `HandlerTimedOut` at the deadline, or with
 * `LeaseLost` when a heartbeat is fenced off. An unreachable store is retried at the next beat
 * (the lease may lapse meanwhile, and then the next beat is fenced off).
 */
const watchdog = (
  store: IdempotencyStore.Service,
  entry: Entry,
  lease: IdempotencyStore.Lease,
  deadline: number
): Effect.Effect<never, LeaseLost | HandlerTimedOut> =>
  Effect.gen(function*() {
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      if (now >= deadline) return yield* new HandlerTimedOut()
      const wait = Math.min(entry.heartbeatMs, deadline - now)
      yield* Effect.sleep(wait)
      if (wait === entry.heartbeatMs) {
        yield* store.heartbeat(lease, { leaseMs: entry.leaseMs }).pipe(
          Effect.catchTag("StoreUnavailable", () => Effect.void),
          // the lease was validated at construction (≥ 100 ms); the store cannot refuse it
          Effect.catchTag("InvalidStoreRequest", Effect.die)
        )
      }
    }
  })

/**
 * Runs handler code (`effect`, given the handlers' `services` when there are any) in its own
 * fiber, aborting the context's signal when it is interrupted. While it runs, the watchdog
 * extends the lease and, at `deadline` (ms on the executor's clock) or when the lease is lost,
 * interrupts the handler and fails with the reason. A handler that finishes without suspending
 * (it had nothing to wait for) is done before a heartbeat or a timeout could matter, so no
 * watchdog is started for it.
 *
 * @internal
 */
export const supervised = <A>(
  store: IdempotencyStore.Service,
  services: Context.Context<unknown> | undefined,
  entry: Entry,
  lease: IdempotencyStore.Lease,
  context: LiveContext,
  effect: Effect.Effect<A, unknown, unknown>,
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
      let stopped: LeaseLost | HandlerTimedOut | undefined
      const dog = watchdog(store, entry, lease, deadline).pipe(
        // the caller awaits the handler's end, so the watchdog only signals the interruption
        Effect.catch((reason) => Effect.sync(() => ((stopped = reason), handler.interruptUnsafe())))
      )
      return Effect.flatMap(Effect.forkChild(dog), (dogFiber) =>
        Fiber.await(handler).pipe(
          // the caller was interrupted: interrupt the handler and wait for it (its signal aborts)
          Effect.onInterrupt(() => Fiber.interrupt(handler)),
          // nobody waits for the watchdog's end: it is asleep or mid-heartbeat, and a beat fenced
          // off after the handler ended changes nothing
          Effect.ensuring(Effect.sync(() => dogFiber.interruptUnsafe())),
          // the handler's own outcome wins; the watchdog's reason explains an interruption
          Effect.flatMap((exit): Effect.Effect<A, unknown> =>
            stopped !== undefined && Exit.isFailure(exit) && Cause.hasInterrupts(exit.cause)
              ? Effect.fail(stopped)
              : exit
          )
        ))
    }
  )
