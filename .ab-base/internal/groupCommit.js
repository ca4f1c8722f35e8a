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
/**
 * A group-committing sender: `send(request)` answers as `one(request)` would, sharing the
 * statement with the requests that wait beside it.
 *
 * @internal
 */
export const make = (options) => {
    const { inFlight, maxBatch, many, one } = options;
    let running = 0;
    let queue = [];
    const finish = (batch, exits) => {
        for (let i = 0; i < batch.length; i++)
            batch[i].resume(exits[i]);
    };
    /** Sends what waits while fewer than `inFlight` statements are out. */
    const pump = () => {
        while (running < inFlight && queue.length > 0) {
            const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
            queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch);
            for (const w of batch)
                w.sent = true;
            running++;
            const run = batch.length === 1
                ? Effect.map(Effect.exit(one(batch[0].request)), (exit) => [exit])
                : many(batch.map((w) => w.request));
            Effect.runForkWith(batch[0].context)(run.pipe(
            // a defect (or an interruption) of the statement is every caller's
            Effect.onExit((exit) => Effect.sync(() => {
                running--;
                if (Exit.isSuccess(exit))
                    finish(batch, exit.value);
                else
                    finish(batch, batch.map(() => exit));
                pump();
            }))));
        }
    };
    /** Fewer statements out than `inFlight` and nobody waiting: the caller's own fiber sends it (no hop). */
    const alone = (request) => {
        running++;
        return Effect.onExit(one(request), () => Effect.sync(() => {
            running--;
            pump();
        }));
    };
    const send = (request) => Effect.suspend(() => running < inFlight && queue.length === 0 ? alone(request) : waitFor(request));
    const waitFor = (request) => Effect.contextWith((context) => Effect.callback((resume) => {
        const waiting = { request, context, resume: (exit) => resume(exit), sent: false };
        queue.push(waiting);
        pump();
        return Effect.sync(() => {
            if (!waiting.sent)
                queue = queue.filter((w) => w !== waiting);
        });
    }));
    return { send };
};
//# sourceMappingURL=groupCommit.js.map