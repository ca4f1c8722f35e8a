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
import { Effect, Exit } from "effect";
/** @internal */
export interface Options<Req, A, E> {
    /** Statements of this kind in flight before callers wait (≥ 1). */
    readonly inFlight: number;
    /** Requests in one statement at most. */
    readonly maxBatch: number;
    /** A request alone: its single statement. */
    readonly one: (request: Req) => Effect.Effect<A, E>;
    /** Several requests (2 or more) in one statement: an answer per request, in their order. */
    readonly many: (requests: ReadonlyArray<Req>) => Effect.Effect<ReadonlyArray<Exit.Exit<A, E>>>;
}
/**
 * A group-committing sender: `send(request)` answers as `one(request)` would, sharing the
 * statement with the requests that wait beside it.
 *
 * @internal
 */
export declare const make: <Req, A, E>(options: Options<Req, A, E>) => {
    send: (request: Req) => Effect.Effect<A, E>;
};
//# sourceMappingURL=groupCommit.d.ts.map