/**
 * Worker processes for the real-process tests: a `node` child running a script of `test/process/`
 * with one JSON argument, whose stdout is read as JSON lines.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The repository root. */
export const root = fileURLToPath(new URL("../..", import.meta.url))

/** A running worker. */
export interface Worker {
  readonly child: ChildProcess
  /** Every stdout line so far. */
  readonly lines: Array<string>
  /** The JSON lines with an `event` member so far. */
  readonly events: () => Array<Record<string, unknown> & { readonly event: string }>
  /** Settles with the exit code (`null` when a signal ended it) and the signal. */
  readonly exit: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  /** The first line (already printed or to come) that satisfies `predicate`; rejects if the worker exits first. */
  readonly line: (predicate: (line: string) => boolean) => Promise<string>
  /** The first JSON event named `event`. */
  readonly event: (event: string) => Promise<Record<string, unknown>>
  /** What the worker wrote on stderr so far. */
  readonly stderr: () => string
}

/** Starts `test/process/<script>` with `config` as its argument. */
export const start = (script: string, config: Record<string, unknown>): Worker =>
  spawnNode([path.join(root, "test/process", script), JSON.stringify(config)])

/** Starts the built `toolgate` CLI (`packages/cli/bin/toolgate.js`) with `args`. */
export const toolgate = (args: ReadonlyArray<string>): Worker =>
  spawnNode([path.join(root, "packages/cli/bin/toolgate.js"), ...args])

/** Starts the Node that runs the tests on `argv`, its stdout read as lines. */
const spawnNode = (argv: ReadonlyArray<string>): Worker => {
  const child = spawn(process.execPath, argv, {
    cwd: root,
    stdio: ["pipe", "pipe", "pipe"]
  })
  const lines: Array<string> = []
  const waiters: Array<{ predicate: (line: string) => boolean; resolve: (line: string) => void }> = []
  let buffer = ""
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk
    let nl = buffer.indexOf("\n")
    while (nl >= 0) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      lines.push(line)
      for (const w of waiters.filter((x) => x.predicate(line))) w.resolve(line)
      nl = buffer.indexOf("\n")
    }
  })
  let stderr = ""
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk
  })
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal }))
  )
  const line = (predicate: (line: string) => boolean) =>
    new Promise<string>((resolve, reject) => {
      const found = lines.find(predicate)
      if (found !== undefined) return resolve(found)
      waiters.push({ predicate, resolve })
      void exit.then(({ code, signal }) =>
        reject(new Error(`worker ${child.pid} exited (${code ?? signal}) before the line; stderr: ${stderr}`))
      )
    })
  const parse = (l: string) => {
    try {
      const value = JSON.parse(l) as unknown
      return typeof value === "object" && value !== null && "event" in value
        ? value as Record<string, unknown> & { event: string }
        : undefined
    } catch {
      return undefined
    }
  }
  return {
    child,
    lines,
    events: () => lines.flatMap((l) => parse(l) ?? []),
    exit,
    line,
    event: (event) => line((l) => parse(l)?.event === event).then((l) => parse(l)!),
    stderr: () => stderr
  }
}
