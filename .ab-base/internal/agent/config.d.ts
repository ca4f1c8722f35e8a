/**
 * The options of an agent turn, checked against their rules and resolved with their defaults
 * (the rules are on `Agent.RunOptions` and `Agent.JournalOptions`). A broken rule is
 * `InvalidAgentOptions` naming the option, before anything runs.
 *
 * @internal
 */
import { Result, Schedule } from "effect";
import * as Agent from "../../Agent.js";
/** @internal */
export interface Config {
    readonly maxSteps: number;
    readonly deadlineMs: number;
    readonly leaseMs: number;
    readonly heartbeatMs: number;
    readonly waitMs: number;
    /** The polling schedule of a wait (bounded per wait by the time it may take). */
    readonly wait: Schedule.Schedule<unknown, unknown>;
    readonly retentionMs: number;
}
/** @internal */
export declare const defaults: {
    readonly maxSteps: 8;
    readonly deadlineMs: 600000;
    readonly leaseMs: 30000;
    readonly waitMs: 60000;
};
/** @internal */
export declare const configure: (options: Pick<Agent.RunOptions<never>, "maxSteps" | "deadlineMs" | "journal">) => Result.Result<Config, Agent.InvalidAgentOptions>;
//# sourceMappingURL=config.d.ts.map