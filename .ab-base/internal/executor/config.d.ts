/**
 * The executor's configuration, resolved and validated once at construction: the options and
 * every handler's overrides checked against their rules (`InvalidExecutorOptions` for the first
 * one broken), then one `Entry` per tool with its effective timeout, lease, heartbeat, attempts
 * and JSON codecs. Also the per-execution state (`Run`) and the handler context the other
 * executor modules share.
 *
 * @internal
 */
import { KeyPolicy, type ToolCall } from "@toolgate/core";
import { Context, Duration, type Exit, Metric, Result, Schedule, Schema } from "effect";
import type { Tool, Toolkit } from "effect/ai";
import { InvalidExecutorOptions } from "../../ExecutionError.js";
import type * as IdempotencyStore from "../../IdempotencyStore.js";
import { type Lease, type Recovery } from "../../IdempotencyStore.js";
import type * as ToolExecutor from "../../ToolExecutor.js";
import type { Handler, HandlerContext } from "../../ToolHandler.js";
/** The shortest lease: below it a store round trip plus a heartbeat does not fit in one lease. @internal */
export declare const minLeaseMs = 100;
/** The shortest heartbeat interval: more often is store load, not safety. @internal */
export declare const minHeartbeatMs = 10;
/** One tool's effective configuration. @internal */
export interface Entry {
    readonly name: string;
    readonly handler: Handler<Tool.Any, unknown>;
    /** The key policy: the handler's, else the tool's annotation, else none (version-1 keys). */
    readonly policy: KeyPolicy.KeyPolicy | undefined;
    readonly recovery: Recovery;
    readonly timeoutMs: number;
    readonly leaseMs: number;
    readonly heartbeatMs: number;
    readonly maxAttempts: number;
    readonly encodeSuccess: (u: unknown) => Exit.Exit<unknown, Schema.SchemaError>;
    readonly decodeSuccess: (u: unknown) => Exit.Exit<unknown, Schema.SchemaError>;
    readonly encodeFailure: (u: unknown) => Exit.Exit<unknown, Schema.SchemaError>;
    readonly decodeFailure: (u: unknown) => Exit.Exit<unknown, Schema.SchemaError>;
    readonly duration: Metric.Metric<Duration.Duration, Metric.HistogramState>;
}
/** The executor-wide configuration. @internal */
export interface Config {
    readonly entries: ReadonlyMap<string, Entry>;
    readonly retentionMs: number;
    /** The executor's limit of a stored result or failure, ≤ the store's 256 KiB. */
    readonly maxBytes: number;
    readonly waitSchedule: Schedule.Schedule<unknown, unknown>;
    readonly storeRetry: Schedule.Schedule<unknown, unknown>;
    readonly concurrency: number;
}
/** What the executor's modules share. @internal */
export interface Env {
    readonly store: IdempotencyStore.Service;
    readonly config: Config;
    /** The handlers' own services, captured at construction (`undefined`: none). */
    readonly services: Context.Context<unknown> | undefined;
}
/** The state of one execution, shared by the executor's steps (one object, no closures per call). @internal */
export interface Run {
    readonly call: ToolCall.ValidatedToolCall;
    readonly entry: Entry;
    readonly key: string;
    readonly fingerprint: string;
    /** The arguments' canonical JSON text (what the record keeps; `null` when over the store's limit). */
    readonly arguments: string | null;
    readonly tenant: string;
    readonly owner: string;
    /** The executor clock's reading when the execution began (its first claim), ms. */
    started: number;
    /** How long the handler ran (executor clock, ms; `undefined`: it did not run). */
    handlerMs: number | undefined;
    waited: boolean;
    /** A running handler was interrupted by the caller and the record parked `unknown`. */
    parkedOnInterrupt: boolean;
}
/** The handler context; the AbortController is created only when a handler reads `signal`. @internal */
export declare class LiveContext implements HandlerContext {
    readonly key: string;
    readonly downstreamKey: string;
    readonly fence: bigint;
    readonly attempt: number;
    readonly generation: number;
    readonly takeover: boolean;
    readonly toolCallId: string | null;
    private controller;
    private aborted;
    constructor(run: Run, lease: Lease);
    get signal(): AbortSignal;
    /** Aborts the signal, including one first read after the interruption. */
    abort(): void;
}
/**
 * Resolves the options and the handlers of a toolkit into a {@link Config}, or the first rule
 * broken. The rules are documented on `ToolExecutor.Options`.
 *
 * @internal
 */
export declare const configure: (toolkit: Toolkit.Toolkit<Record<string, Tool.Any>>, handlers: Record<string, Handler<Tool.Any, unknown> | undefined>, options: ToolExecutor.Options) => Result.Result<Config, InvalidExecutorOptions>;
//# sourceMappingURL=config.d.ts.map