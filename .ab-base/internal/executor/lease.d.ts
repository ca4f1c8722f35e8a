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
import { Cause, type Context, Effect } from "effect";
import type * as IdempotencyStore from "../../IdempotencyStore.js";
import type { Entry, LiveContext } from "./config.js";
declare const HandlerTimedOut_base: new <A extends Record<string, any> = {}>(args: import("effect/Types").VoidIfEmpty<{ readonly [P in keyof A as P extends "_tag" ? never : P]: A[P]; }>) => Cause.YieldableError & {
    readonly _tag: "HandlerTimedOut";
} & Readonly<A>;
/** The handler's deadline passed (an internal signal; it becomes `ExecutionTimeout`). @internal */
export declare class HandlerTimedOut extends HandlerTimedOut_base<{}> {
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
export declare const makeWatch: (store: IdempotencyStore.Service, services: Context.Context<unknown> | undefined) => {
    supervised: <A>(entry: Entry, lease: IdempotencyStore.Lease, context: LiveContext, effect: Effect.Effect<A, unknown, unknown>, started: number, deadline: number) => Effect.Effect<A, unknown>;
};
export {};
//# sourceMappingURL=lease.d.ts.map