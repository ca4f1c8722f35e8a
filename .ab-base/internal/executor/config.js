/**
 * The executor's configuration, resolved and validated once at construction: the options and
 * every handler's overrides checked against their rules (`InvalidExecutorOptions` for the first
 * one broken), then one `Entry` per tool with its effective timeout, lease, heartbeat, attempts
 * and JSON codecs. Also the per-execution state (`Run`) and the handler context the other
 * executor modules share.
 *
 * @internal
 */
import { IdempotencyKey, KeyPolicy } from "@toolgate/core";
import { Context, Duration, Metric, Result, Schedule, Schema } from "effect";
import { InvalidExecutorOptions } from "../../ExecutionError.js";
import * as ExecutionMetrics from "../../ExecutionMetrics.js";
import { defaultRetentionMs, maxResultBytes } from "../../IdempotencyStore.js";
/** The shortest lease: below it a store round trip plus a heartbeat does not fit in one lease. @internal */
export const minLeaseMs = 100;
/** The shortest heartbeat interval: more often is store load, not safety. @internal */
export const minHeartbeatMs = 10;
/** The handler context; the AbortController is created only when a handler reads `signal`. @internal */
export class LiveContext {
    key;
    downstreamKey;
    fence;
    attempt;
    generation;
    takeover;
    toolCallId;
    controller = undefined;
    aborted = false;
    constructor(run, lease) {
        this.key = run.key;
        this.downstreamKey = IdempotencyKey.downstreamKey(run.key, lease.generation);
        this.fence = lease.fence;
        this.attempt = lease.attempt;
        this.generation = lease.generation;
        this.takeover = lease.kind === "Takeover";
        this.toolCallId = run.call.id;
    }
    get signal() {
        if (this.controller === undefined) {
            this.controller = new AbortController();
            if (this.aborted)
                this.controller.abort();
        }
        return this.controller.signal;
    }
    /** Aborts the signal, including one first read after the interruption. */
    abort() {
        this.aborted = true;
        this.controller?.abort();
    }
}
const render = (value) => {
    const text = typeof value === "number" || value === undefined ? String(value) : JSON.stringify(value) ?? "?";
    return text.length <= 40 ? text : `${text.slice(0, 39)}…`;
};
const isNumber = (u) => typeof u === "number" && !Number.isNaN(u);
const atLeast = (minimum, unit) => ({
    rule: `a finite number ≥ ${minimum}${unit}`,
    holds: (n) => Number.isFinite(n) && n >= minimum
});
const integerFrom = (minimum) => ({
    rule: `an integer ≥ ${minimum}`,
    holds: (n) => Number.isSafeInteger(n) && n >= minimum
});
const rules = {
    leaseMs: atLeast(minLeaseMs, " ms"),
    timeoutMs: { rule: "a number of ms > 0 (Infinity: no timeout)", holds: (n) => n > 0 },
    retentionMs: { rule: "a finite number of ms > 0", holds: (n) => Number.isFinite(n) && n > 0 },
    maxAttempts: {
        rule: "an integer from 1 to 2147483647",
        holds: (n) => Number.isInteger(n) && n >= 1 && n <= 2_147_483_647
    },
    maxResultBytes: integerFrom(1),
    waitMs: atLeast(0, " ms"),
    storeRetries: integerFrom(0),
    concurrency: integerFrom(1)
};
const jsonCodec = (schema) => Schema.toCodecJson(schema);
/**
 * Resolves the options and the handlers of a toolkit into a {@link Config}, or the first rule
 * broken. The rules are documented on `ToolExecutor.Options`.
 *
 * @internal
 */
export const configure = (toolkit, handlers, options) => {
    const invalid = (option, tool, value, rule) => Result.fail(new InvalidExecutorOptions({ option, tool, value: render(value), rule }));
    /** The value when given and valid, the default when not given, or the error. */
    const check = (option, value, fallback, tool = null) => value === undefined
        ? Result.succeed(fallback)
        : isNumber(value) && rules[option].holds(value)
            ? Result.succeed(value)
            : invalid(option, tool, value, rules[option].rule);
    return Result.gen(function* () {
        const leaseMs = yield* check("leaseMs", options.leaseMs, 30_000);
        const timeoutMs = yield* check("timeoutMs", options.timeoutMs, 60_000);
        const retentionMs = yield* check("retentionMs", options.retentionMs, defaultRetentionMs);
        const maxAttempts = yield* check("maxAttempts", options.maxAttempts, 3);
        const maxBytes = yield* check("maxResultBytes", options.maxResultBytes, maxResultBytes);
        const waitMs = yield* check("waitMs", options.waitMs, 10_000);
        const storeRetries = yield* check("storeRetries", options.storeRetries, 3);
        const concurrency = yield* check("concurrency", options.concurrency, 8);
        const heartbeat = options.heartbeatMs;
        if (heartbeat !== undefined && !(isNumber(heartbeat) && Number.isFinite(heartbeat) && heartbeat >= minHeartbeatMs)) {
            return yield* invalid("heartbeatMs", null, heartbeat, `a finite number ≥ ${minHeartbeatMs} ms`);
        }
        const entries = new Map();
        for (const name of Object.keys(toolkit.tools)) {
            const tool = toolkit.tools[name];
            const handler = handlers[name];
            if (handler === undefined || typeof handler.run !== "function") {
                return yield* invalid("handlers", name, handler, "a handler with a run function");
            }
            const recovery = handler.recovery ?? "manual";
            if (recovery === "reconcile" && typeof handler.probe !== "function") {
                return yield* invalid("probe", name, handler.probe, "a function when recovery is reconcile");
            }
            let policy = Context.get(tool.annotations, IdempotencyKey.Policy);
            if (handler.keyPolicy !== undefined) {
                const made = KeyPolicy.make(handler.keyPolicy, name);
                if (Result.isFailure(made)) {
                    return yield* invalid("keyPolicy", name, handler.keyPolicy, `a key policy: ${made.failure.message}`);
                }
                policy = made.success;
            }
            const handlerLease = yield* check("leaseMs", handler.leaseMs, leaseMs, name);
            const heartbeatMs = heartbeat ?? Math.floor(handlerLease / 3);
            if (heartbeatMs > handlerLease / 2) {
                // one failed beat must leave time for another before the lease lapses
                return yield* invalid("heartbeatMs", name, heartbeatMs, `at most half the lease (${handlerLease} ms)`);
            }
            entries.set(name, {
                name,
                handler,
                policy,
                recovery,
                timeoutMs: yield* check("timeoutMs", handler.timeoutMs, timeoutMs, name),
                leaseMs: handlerLease,
                heartbeatMs,
                maxAttempts: yield* check("maxAttempts", handler.maxAttempts, maxAttempts, name),
                encodeSuccess: Schema.encodeUnknownExit(jsonCodec(tool.successSchema)),
                decodeSuccess: Schema.decodeUnknownExit(jsonCodec(tool.successSchema)),
                encodeFailure: Schema.encodeUnknownExit(jsonCodec(tool.failureSchema)),
                decodeFailure: Schema.decodeUnknownExit(jsonCodec(tool.failureSchema)),
                duration: Metric.withAttributes(ExecutionMetrics.handlerDuration, { tool: name })
            });
        }
        return {
            entries,
            retentionMs,
            maxBytes: Math.min(maxBytes, maxResultBytes),
            waitSchedule: (options.wait ??
                Schedule.jittered(Schedule.min([Schedule.exponential("10 millis", 1.5), Schedule.spaced("250 millis")])))
                .pipe(Schedule.upTo({ duration: Duration.millis(waitMs) })),
            storeRetry: Schedule.exponential("50 millis", 2).pipe(Schedule.upTo({ times: storeRetries })),
            concurrency
        };
    });
};
//# sourceMappingURL=config.js.map