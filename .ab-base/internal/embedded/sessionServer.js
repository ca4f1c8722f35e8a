import * as fs from "node:fs";
import * as net from "node:net";
const sslRequest = 80877103;
const gssRequest = 80877104;
const cancelRequest = 80877102;
const protocol3 = 196608;
/** PostgreSQL refuses messages over 1 GiB; anything longer is not a client we speak to. */
const maxMessageBytes = 1 << 30;
const Z = 0x5a;
const idle = 0x49;
const message = (type, body) => {
    const out = Buffer.allocUnsafe(5 + body.length);
    out.write(type, 0, "latin1");
    out.writeInt32BE(4 + body.length, 1);
    body.copy(out, 5);
    return out;
};
const cstring = (text) => Buffer.concat([Buffer.from(text, "utf8"), Buffer.alloc(1)]);
const syncMessage = message("S", Buffer.alloc(0));
const queryMessage = (sql) => message("Q", cstring(sql));
const closeStatement = (name) => message("C", Buffer.concat([Buffer.from("S"), cstring(name)]));
/** A FATAL `ErrorResponse` with SQLSTATE `code`. */
const fatal = (code, text) => message("E", Buffer.concat([
    Buffer.from("S"),
    cstring("FATAL"),
    Buffer.from("V"),
    cstring("FATAL"),
    Buffer.from("C"),
    cstring(code),
    Buffer.from("M"),
    cstring(text),
    Buffer.alloc(1)
]));
/**
 * Follows the message framing of the backend's output across chunks and remembers the last
 * message: its type and the first byte of its body (a `ReadyForQuery`'s status).
 */
class OutputFrames {
    header = Buffer.alloc(5);
    filled = 0;
    remaining = 0;
    wantFirst = false;
    lastType = 0;
    lastFirst = -1;
    any = false;
    reset() {
        this.filled = 0;
        this.remaining = 0;
        this.wantFirst = false;
        this.lastType = 0;
        this.lastFirst = -1;
        this.any = false;
    }
    feed(chunk) {
        this.any = this.any || chunk.length > 0;
        let i = 0;
        while (i < chunk.length) {
            if (this.remaining > 0) {
                if (this.wantFirst) {
                    this.lastFirst = chunk[i];
                    this.wantFirst = false;
                }
                const n = Math.min(this.remaining, chunk.length - i);
                i += n;
                this.remaining -= n;
                continue;
            }
            this.header[this.filled++] = chunk[i++];
            if (this.filled === 5) {
                this.filled = 0;
                this.lastType = this.header[0];
                this.lastFirst = -1;
                this.remaining = this.header.readInt32BE(1) - 4;
                this.wantFirst = this.remaining > 0;
            }
        }
    }
    /** The output ended with a whole `ReadyForQuery` whose status is idle. */
    get endsIdle() {
        return this.filled === 0 && this.remaining === 0 && this.lastType === Z && this.lastFirst === idle;
    }
}
/** @internal */
export const make = (options) => {
    const connections = new Set();
    /** Called when the last connection goes. */
    let onEmpty;
    const queue = [];
    const frames = new OutputFrames();
    let db;
    let failure;
    let closing = false;
    let holder;
    /** Settles when the exchange running on the session ends. */
    let running;
    let listener;
    const refuse = (stream, code, text) => {
        if (!stream.destroyed)
            stream.end(fatal(code, text));
        setTimeout(() => stream.destroy(), 100).unref();
    };
    const clearHold = (c) => {
        if (c.holdTimer !== undefined)
            clearTimeout(c.holdTimer);
        c.holdTimer = undefined;
    };
    /** The next complete message in `c`'s buffer (without taking it), or `undefined`. */
    const nextLength = (c) => {
        const b = c.buffer;
        if (c.startup) {
            if (b.length < 8)
                return undefined;
            const length = b.readInt32BE(0);
            if (length < 8 || length > maxMessageBytes)
                return -1;
            return b.length >= length ? length : undefined;
        }
        if (b.length < 5)
            return undefined;
        const length = b.readInt32BE(1);
        if (length < 4 || length > maxMessageBytes)
            return -1;
        return b.length >= 1 + length ? 1 + length : undefined;
    };
    const take = (c, length) => {
        const out = c.buffer.subarray(0, length);
        c.buffer = c.buffer.subarray(length);
        return out;
    };
    /** Handles what needs no session (SSL and GSS negotiation, cancel, terminate, garbage). */
    const preview = (c) => {
        for (;;) {
            const length = nextLength(c);
            if (length === undefined)
                return "none";
            if (length === -1) {
                drop(c, "08P01", "invalid message length");
                return "handled";
            }
            if (c.startup) {
                const code = c.buffer.readInt32BE(4);
                if (code === sslRequest || code === gssRequest) {
                    take(c, length);
                    c.stream.write(Buffer.from("N"));
                    continue;
                }
                if (code === cancelRequest) {
                    // PGlite has no backend to signal; the statement runs to its end
                    take(c, length);
                    drop(c, undefined, undefined);
                    return "handled";
                }
                if (code !== protocol3) {
                    drop(c, "08P01", `unsupported frontend protocol ${code >>> 16}.${code & 0xffff}`);
                    return "handled";
                }
                return "session";
            }
            if (c.buffer[0] === 0x58) {
                // Terminate: the session outlives the connection
                take(c, length);
                drop(c, undefined, undefined);
                return "handled";
            }
            return "session";
        }
    };
    const enqueue = (c) => {
        if (c.queued || c.closed || holder === c)
            return;
        c.queued = true;
        queue.push({ _tag: "Connection", connection: c });
    };
    const onData = (c) => (chunk) => {
        if (c.closed)
            return;
        c.buffer = c.buffer.length === 0 ? chunk : Buffer.concat([c.buffer, chunk]);
        clearHold(c);
        if (preview(c) === "session") {
            enqueue(c);
            pump();
        }
    };
    /** Tracks the statements a connection prepares and closes (for the cleanup when it leaves). */
    const observe = (c, msg) => {
        const type = msg[0];
        if (type === 0x50) {
            const end = msg.indexOf(0, 5);
            if (end > 5)
                c.statements.add(msg.toString("utf8", 5, end));
        }
        else if (type === 0x43 && msg[5] === 0x53) {
            const end = msg.indexOf(0, 6);
            if (end > 6)
                c.statements.delete(msg.toString("utf8", 6, end));
        }
    };
    const exec = async (session, msg, write) => {
        frames.reset();
        await session.runExclusive(() => session.execProtocolRawStream(msg, {
            onRawData: (chunk) => {
                frames.feed(chunk);
                write(chunk);
            }
        }));
    };
    /** What a connection that went away left open, to end before anyone else gets the session. */
    const leftovers = (c, held) => {
        const messages = [];
        if (held && !c.atBoundary)
            messages.push(syncMessage);
        for (const name of c.statements)
            messages.push(closeStatement(name));
        if (c.statements.size > 0)
            messages.push(syncMessage);
        return messages;
    };
    /** A connection goes away: close it, and schedule the cleanup of what it left in the session. */
    function drop(c, code, text) {
        if (c.closed)
            return;
        c.closed = true;
        clearHold(c);
        connections.delete(c);
        if (connections.size === 0)
            onEmpty?.();
        if (code !== undefined && text !== undefined)
            refuse(c.stream, code, text);
        else
            c.stream.destroy();
        const held = holder === c;
        if (held)
            holder = undefined;
        if (!closing && db !== undefined) {
            const messages = leftovers(c, held);
            // the holder's cleanup goes first: nobody may see the session it left mid-exchange
            if (messages.length > 0) {
                const turn = { _tag: "Cleanup", messages };
                if (held)
                    queue.unshift(turn);
                else
                    queue.push(turn);
            }
        }
        pump();
    }
    const runCleanup = async (session, messages) => {
        for (const msg of messages)
            await exec(session, msg, () => undefined);
        if (session.isInTransaction()) {
            await exec(session, queryMessage("ROLLBACK"), () => undefined);
        }
    };
    /** Runs one turn's next message (or a cleanup) on the session. */
    const step = async (session) => {
        if (holder === undefined) {
            const turn = queue.shift();
            if (turn === undefined)
                return;
            if (turn._tag === "Cleanup")
                return runCleanup(session, turn.messages);
            const c = turn.connection;
            c.queued = false;
            if (c.closed || nextLength(c) === undefined)
                return;
            holder = c;
        }
        const c = holder;
        const length = nextLength(c);
        if (length === undefined || length === -1)
            return;
        const msg = take(c, length);
        if (c.startup)
            c.startup = false;
        else
            observe(c, msg);
        try {
            await exec(session, msg, (chunk) => {
                if (!c.closed)
                    c.stream.write(Buffer.from(chunk));
            });
        }
        catch (error) {
            drop(c, "XX000", `the embedded session failed: ${error instanceof Error ? error.message : String(error)}`);
            return;
        }
        if (frames.any)
            c.atBoundary = frames.endsIdle;
        if (c.closed)
            return;
        if (c.atBoundary) {
            holder = undefined;
            if (preview(c) === "session")
                enqueue(c);
        }
        else if (preview(c) !== "session" && !c.closed) {
            // mid-exchange and nothing more to run: the holder waits for this connection alone
            c.holdTimer = setTimeout(() => drop(c, "25P03", `held the embedded session idle for more than ${options.holdTimeoutMs} ms`), options.holdTimeoutMs);
            c.holdTimer.unref();
        }
    };
    /** Runs turns until there is nothing runnable; one at a time. */
    function pump() {
        if (running !== undefined || db === undefined || closing)
            return;
        const session = db;
        // `closing` is set by `close` while a step is awaited
        const runnable = () => !closing &&
            (holder !== undefined ? nextLength(holder) !== undefined && nextLength(holder) !== -1 : queue.length > 0);
        if (!runnable())
            return;
        running = (async () => {
            try {
                while (runnable())
                    await step(session);
            }
            finally {
                running = undefined;
            }
            pump();
        })();
    }
    const attach = (stream) => {
        if (closing)
            return refuse(stream, "57P01", `the embedded store's owner (${options.ownerLabel}) is shutting down`);
        if (failure !== undefined)
            return refuse(stream, "58000", failure);
        const c = {
            stream,
            buffer: Buffer.alloc(0),
            startup: true,
            atBoundary: true,
            statements: new Set(),
            queued: false,
            closed: false,
            holdTimer: undefined
        };
        connections.add(c);
        stream.on("data", onData(c));
        stream.on("error", () => drop(c, undefined, undefined));
        stream.on("close", () => drop(c, undefined, undefined));
        stream.on("end", () => drop(c, undefined, undefined));
    };
    const listen = (endpoint) => new Promise((resolve, reject) => {
        if (process.platform !== "win32")
            fs.rmSync(endpoint, { force: true });
        const server = net.createServer({ pauseOnConnect: false }, (socket) => attach(socket));
        server.once("error", reject);
        server.listen(endpoint, () => {
            server.off("error", reject);
            server.on("error", () => undefined);
            listener = server;
            resolve();
        });
    });
    const open = (session) => {
        db = session;
        pump();
    };
    const fail = (reason) => {
        failure = reason;
        for (const c of connections)
            drop(c, "58000", reason);
    };
    const drain = (ms) => new Promise((resolve) => {
        if (connections.size === 0)
            return resolve();
        const timer = setTimeout(done, ms);
        function done() {
            clearTimeout(timer);
            onEmpty = undefined;
            resolve();
        }
        onEmpty = done;
    });
    const close = async () => {
        closing = true;
        const server = listener;
        listener = undefined;
        const stopped = server === undefined
            ? Promise.resolve()
            : new Promise((resolve) => server.close(() => resolve()));
        for (const c of connections) {
            drop(c, "57P01", `the embedded store's owner (${options.ownerLabel}) is shutting down`);
        }
        queue.length = 0;
        // new connections stop at once; the sockets already refused close on their own
        void stopped;
        if (running !== undefined)
            await running;
    };
    return { attach, listen, open, fail, drain, close };
};
//# sourceMappingURL=sessionServer.js.map