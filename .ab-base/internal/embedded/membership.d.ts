import { Duplex } from "node:stream";
/** @internal */
export declare const memory = "memory://";
/** How long an ending owner serves its members' last writes, ms. @internal */
export declare const drainMs = 500;
/** @internal */
export interface Options {
    /** An absolute, existing directory, or {@link memory}. */
    readonly dataDir: string;
    readonly holdTimeoutMs: number;
}
/** Why a process could not reach the session of a directory another process owns. @internal */
export declare class Unreachable extends Error {
    readonly pid: number | null;
    readonly reason: string;
    constructor(pid: number | null, reason: string);
}
/** @internal */
export interface Membership {
    /** A connection to the session, found (or taken over) when the stream is created. */
    readonly connect: () => Duplex;
    /**
     * Settles once this process can reach the session: it owns the directory (and PGlite is open),
     * or the owner accepted a connection. Rejects with {@link Unreachable} when another process
     * holds the lock and its socket refuses connections for `graceMs`.
     */
    readonly reach: (graceMs: number) => Promise<void>;
    /** `owner` while this process holds the directory. */
    readonly role: () => "owner" | "member";
    /** Ends what this process runs (its ownership included); idempotent. */
    readonly close: () => Promise<void>;
}
/** @internal */
export declare const make: (options: Options) => Membership;
/** Makes `dataDir` absolute and existing (symlinks resolved), or returns {@link memory}. @internal */
export declare const resolveDataDir: (dataDir: string) => string;
//# sourceMappingURL=membership.d.ts.map