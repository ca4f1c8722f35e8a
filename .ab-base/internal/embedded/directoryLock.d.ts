/** The lock file of a data directory. @internal */
export declare const lockFile: (dataDir: string) => string;
/** The owner record of a data directory. @internal */
export declare const ownerFile: (dataDir: string) => string;
/** What the owner publishes: who it is and where it serves the session. @internal */
export interface OwnerRecord {
    readonly pid: number;
    /** A Unix socket path (a named pipe on Windows). */
    readonly endpoint: string;
    /** ISO time ownership was taken. */
    readonly since: string;
    readonly version: 1;
}
/** A held lock. @internal */
export interface Lock {
    /** Lets the lock go (idempotent). */
    readonly release: () => void;
}
/**
 * Takes the directory's lock without waiting: the lock, or `undefined` when another process (or
 * another owner in this process) holds it. Throws on anything else (an unwritable directory,
 * `node:sqlite` missing on Node < 22.13).
 *
 * @internal
 */
export declare const tryAcquire: (dataDir: string) => Lock | undefined;
/** Publishes the holder's record (write to a private file, then rename over). @internal */
export declare const writeOwner: (dataDir: string, record: OwnerRecord) => void;
/** Removes the holder's record; only the holder calls it, before releasing the lock. @internal */
export declare const removeOwner: (dataDir: string) => void;
/** The published record, or `undefined` when there is none (or it cannot be read). @internal */
export declare const readOwner: (dataDir: string) => OwnerRecord | undefined;
//# sourceMappingURL=directoryLock.d.ts.map