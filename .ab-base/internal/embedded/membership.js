/**
 * A process's part in an embedded data directory: the owner (it holds the directory's lock, runs
 * PGlite on it and serves the session on a Unix socket) or a member (it connects to the owner's
 * socket). Every connection the process makes goes through {@link Membership.connect}, which
 * finds the session each time: its own when it owns the directory, the owner's socket otherwise,
 * and, when nobody holds the lock (the owner ended, or was killed), it takes the lock itself and
 * becomes the owner. So the death of an owner strands nobody: the next member that needs a
 * connection takes over, and the others connect to it.
 *
 * Order of an owner's start: lock, listen on the socket (replacing a stale socket file, which
 * only the lock holder may touch), publish `toolgate-owner.json`, open PGlite (connections wait
 * for it). Order of its end: serve on until the members' connections are gone or
 * {@link drainMs} passed (members that end too, on the same SIGTERM, finish their last writes),
 * stop listening and tell every connection left that the owner is shutting down (SQLSTATE 57P01,
 * which the store retries), close PGlite, remove the record, release the lock. PGlite is
 * therefore closed before anyone else can take the lock. A process whose layer closes while it
 * is still opening PGlite to take over does not wait for it: the open finishes (or the process
 * exits, which is as safe as a SIGKILL) and closes it.
 *
 * @internal
 */
import { PGlite } from "@electric-sql/pglite";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { Duplex, duplexPair } from "node:stream";
import * as DirectoryLock from "./directoryLock.js";
import * as SessionServer from "./sessionServer.js";
/** @internal */
export const memory = "memory://";
/** How long an ending owner serves its members' last writes, ms. @internal */
export const drainMs = 500;
/** Why a process could not reach the session of a directory another process owns. @internal */
export class Unreachable extends Error {
    pid;
    reason;
    constructor(pid, reason) {
        super(reason);
        this.pid = pid;
        this.reason = reason;
    }
}
/** Where the owner of `dataDir` listens: a socket in the directory, or under the temp dir when that path is too long. */
const endpointFor = (dataDir) => {
    const digest = createHash("sha256").update(dataDir).digest("hex").slice(0, 24);
    if (process.platform === "win32")
        return `\\\\.\\pipe\\toolgate-${digest}`;
    const inside = path.join(dataDir, ".s.toolgate");
    // sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included
    return Buffer.byteLength(inside) <= 100 ? inside : path.join(os.tmpdir(), `toolgate-${digest}.sock`);
};
const sleep = (ms, signal) => new Promise((resolve) => {
    if (signal.aborted)
        return resolve();
    const timer = setTimeout(done, ms);
    function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
    }
    signal.addEventListener("abort", done, { once: true });
});
/** Connects to a socket: the connected socket, or the error code that refused it. */
const dial = (endpoint, signal) => new Promise((resolve) => {
    const socket = net.connect({ path: endpoint });
    const settle = (result) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", aborted);
        socket.off("connect", connected);
        socket.off("error", failed);
        resolve(result);
    };
    const connected = () => settle(socket);
    const failed = (error) => settle(error.code ?? error.message);
    const aborted = () => {
        socket.destroy();
        settle("aborted");
    };
    const timer = setTimeout(() => {
        socket.destroy();
        settle("ETIMEDOUT");
    }, 2_000);
    socket.once("connect", connected);
    socket.once("error", failed);
    signal.addEventListener("abort", aborted, { once: true });
});
/**
 * A stream handed to the client at once, joined to the session once it is found: writes wait
 * until then (the client's startup message is its first write).
 */
class Joined extends Duplex {
    target;
    pending = [];
    ended = false;
    abort = new AbortController();
    constructor(find) {
        super();
        find(this.abort.signal).then((target) => {
            if (this.destroyed)
                return void target.destroy();
            this.target = target;
            target.on("data", (chunk) => {
                if (!this.push(chunk))
                    target.pause();
            });
            target.on("end", () => this.push(null));
            target.on("error", (error) => this.destroy(error));
            target.on("close", () => this.destroy());
            for (const { callback, chunk } of this.pending)
                target.write(chunk, callback);
            this.pending = [];
            if (this.ended)
                target.end();
        }, (error) => this.destroy(error instanceof Error ? error : new Error(String(error))));
    }
    _write(chunk, _encoding, callback) {
        if (this.target !== undefined)
            this.target.write(chunk, callback);
        else
            this.pending.push({ chunk, callback });
    }
    _read() {
        this.target?.resume();
    }
    _final(callback) {
        if (this.target !== undefined)
            this.target.end();
        else
            this.ended = true;
        callback();
    }
    _destroy(error, callback) {
        this.abort.abort();
        this.target?.destroy();
        const pending = this.pending;
        this.pending = [];
        for (const p of pending)
            p.callback(error ?? new Error("connection closed"));
        callback(error);
    }
}
/** @internal */
export const make = (options) => {
    const { dataDir } = options;
    const inMemory = dataDir === memory;
    let owned;
    /** Settles when a start as owner that is under way has finished. */
    let starting;
    let closed = false;
    const closing = new AbortController();
    /** Takes ownership with a lock already held: listen, publish, open PGlite. */
    const own = async (lock) => {
        const server = SessionServer.make({ holdTimeoutMs: options.holdTimeoutMs, ownerLabel: `pid ${process.pid}` });
        try {
            if (!inMemory) {
                const endpoint = endpointFor(dataDir);
                await server.listen(endpoint);
                DirectoryLock.writeOwner(dataDir, { pid: process.pid, endpoint, since: new Date().toISOString(), version: 1 });
            }
        }
        catch (error) {
            await server.close();
            lock?.release();
            throw error;
        }
        const opened = PGlite.create({ dataDir });
        const mine = { lock, server, opened, settled: false };
        owned = mine;
        opened.then((db) => {
            mine.settled = true;
            if (closed)
                return void release(mine);
            server.open(db);
        }, (error) => {
            mine.settled = true;
            server.fail(`the embedded store cannot open ${dataDir}: ${error instanceof Error ? error.message : String(error)}`);
            if (closed)
                void release(mine);
        });
    };
    /** Ends an ownership: drain, stop serving, close PGlite, remove the record, release the lock. */
    const release = async (current) => {
        await current.server.drain(drainMs);
        await current.server.close();
        const db = await current.opened.catch(() => undefined);
        try {
            if (db !== undefined && !db.closed)
                await db.close();
        }
        finally {
            if (!inMemory)
                DirectoryLock.removeOwner(dataDir);
            current.lock?.release();
        }
    };
    /** A connection inside this process; either side closing closes the other (a pair does not). */
    const self = () => {
        const [client, served] = duplexPair();
        client.once("close", () => served.destroy());
        served.once("close", () => client.destroy());
        owned.server.attach(served);
        return client;
    };
    /**
     * Finds the session: this process's own, the owner's socket, or ownership taken when the lock
     * is free. Gives up with {@link Unreachable} once `graceMs` passed with the lock held elsewhere
     * and its socket refusing (no limit when `graceMs` is undefined: the caller's timeout applies).
     */
    const find = async (signal, graceMs) => {
        const deadline = graceMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + graceMs;
        let backoff = 20;
        let refusal = "no owner record";
        for (;;) {
            if (closed)
                throw new Error("the embedded store is closed");
            if (signal.aborted)
                throw new Error("aborted");
            if (starting !== undefined)
                await starting;
            if (owned !== undefined)
                return self();
            const lock = inMemory ? undefined : DirectoryLock.tryAcquire(dataDir);
            if (lock !== undefined || inMemory) {
                starting = own(lock).finally(() => {
                    starting = undefined;
                });
                await starting;
                if (closed)
                    throw new Error("the embedded store is closed");
                continue;
            }
            const record = DirectoryLock.readOwner(dataDir);
            if (record !== undefined) {
                const dialed = await dial(record.endpoint, signal);
                if (typeof dialed !== "string")
                    return dialed;
                refusal = `its socket ${record.endpoint} refused the connection (${dialed})`;
            }
            if (Date.now() >= deadline)
                throw new Unreachable(record?.pid ?? null, refusal);
            await sleep(backoff, signal);
            backoff = Math.min(250, Math.round(backoff * 1.5));
        }
    };
    const connect = () => new Joined((signal) => find(AbortSignal.any([signal, closing.signal])));
    const reach = async (graceMs) => {
        const stream = await find(closing.signal, graceMs);
        stream.destroy();
        if (owned !== undefined)
            await owned.opened;
    };
    const close = async () => {
        if (closed)
            return;
        closed = true;
        closing.abort();
        // a takeover that is still listening finishes first (it is quick); one opening PGlite is
        // released by its own continuation once PGlite is open
        if (starting !== undefined)
            await starting.catch(() => undefined);
        const current = owned;
        owned = undefined;
        if (current === undefined)
            return;
        if (current.settled)
            await release(current);
    };
    return { connect, reach, role: () => (owned !== undefined ? "owner" : "member"), close };
};
/** Makes `dataDir` absolute and existing (symlinks resolved), or returns {@link memory}. @internal */
export const resolveDataDir = (dataDir) => {
    if (dataDir === memory)
        return memory;
    fs.mkdirSync(dataDir, { recursive: true });
    return fs.realpathSync(dataDir);
};
//# sourceMappingURL=membership.js.map