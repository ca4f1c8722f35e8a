/**
 * The exclusive lock on an embedded data directory, and the record its holder publishes.
 *
 * The lock is an exclusive SQLite transaction (`node:sqlite`, in Node since 22.13) held open on
 * `<dataDir>/toolgate-owner.lock` for as long as the process owns the directory. SQLite takes it
 * with the operating system's own record locks (`fcntl` on POSIX systems, `LockFileEx` on
 * Windows), which the kernel releases when the process ends, however it ends: a SIGKILLed owner
 * leaves no stale lock to recover, a reused pid cannot look alive, and the lock holds across
 * containers that share the directory through a volume (one kernel). Node has no `flock`, and the
 * alternatives are worse: a pid file needs a liveness guess and a stale-lock takeover that two
 * waiters can both win; an mtime-refreshed lock directory (`proper-lockfile`) goes stale while
 * PGlite blocks the event loop (initdb takes seconds), so a live owner can lose it; a native
 * addon may not build.
 *
 * Only the holder writes `<dataDir>/toolgate-owner.json` (`{ pid, endpoint, since, version }`,
 * replaced by a rename so that a reader never sees half of it) and removes it before it lets the
 * lock go; a reader treats what it reads as a hint (the endpoint to try), never as ownership.
 *
 * @internal
 */
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
let sqlite;
/**
 * Loads `node:sqlite` once. Node 22 prints an ExperimentalWarning when it is first loaded; the
 * lock is an implementation detail of this module, so that one warning is kept off the user's
 * stderr (every other warning passes).
 */
const loadSqlite = () => {
    if (sqlite !== undefined)
        return sqlite;
    const emitWarning = process.emitWarning;
    process.emitWarning = function (warning, ...rest) {
        const text = typeof warning === "string" ? warning : warning.message;
        if (text.startsWith("SQLite is an experimental feature"))
            return;
        return emitWarning.call(process, warning, ...rest);
    };
    try {
        sqlite = createRequire(import.meta.url)("node:sqlite");
    }
    finally {
        process.emitWarning = emitWarning;
    }
    return sqlite;
};
/** The lock file of a data directory. @internal */
export const lockFile = (dataDir) => path.join(dataDir, "toolgate-owner.lock");
/** The owner record of a data directory. @internal */
export const ownerFile = (dataDir) => path.join(dataDir, "toolgate-owner.json");
const isBusy = (error) => {
    const e = error;
    // SQLITE_BUSY (5) and SQLITE_LOCKED (6)
    return e.errcode === 5 || e.errcode === 6 || (typeof e.message === "string" && /locked|busy/i.test(e.message));
};
/**
 * Takes the directory's lock without waiting: the lock, or `undefined` when another process (or
 * another owner in this process) holds it. Throws on anything else (an unwritable directory,
 * `node:sqlite` missing on Node < 22.13).
 *
 * @internal
 */
export const tryAcquire = (dataDir) => {
    const { DatabaseSync } = loadSqlite();
    const db = new DatabaseSync(lockFile(dataDir), { timeout: 0 });
    try {
        // EXCLUSIVE locking mode keeps the lock after the statement; the open transaction holds it.
        db.exec("PRAGMA locking_mode = EXCLUSIVE");
        db.exec("BEGIN EXCLUSIVE");
    }
    catch (error) {
        db.close();
        if (isBusy(error))
            return undefined;
        throw error;
    }
    let held = true;
    return {
        release: () => {
            if (!held)
                return;
            held = false;
            db.close();
        }
    };
};
/** Publishes the holder's record (write to a private file, then rename over). @internal */
export const writeOwner = (dataDir, record) => {
    const target = ownerFile(dataDir);
    const scratch = `${target}.${process.pid}.tmp`;
    fs.writeFileSync(scratch, `${JSON.stringify(record)}\n`);
    fs.renameSync(scratch, target);
};
/** Removes the holder's record; only the holder calls it, before releasing the lock. @internal */
export const removeOwner = (dataDir) => {
    fs.rmSync(ownerFile(dataDir), { force: true });
};
/** The published record, or `undefined` when there is none (or it cannot be read). @internal */
export const readOwner = (dataDir) => {
    try {
        const parsed = JSON.parse(fs.readFileSync(ownerFile(dataDir), "utf8"));
        return typeof parsed.pid === "number" && typeof parsed.endpoint === "string"
            ? { pid: parsed.pid, endpoint: parsed.endpoint, since: String(parsed.since), version: 1 }
            : undefined;
    }
    catch {
        return undefined;
    }
};
//# sourceMappingURL=directoryLock.js.map