/**
 * Runs the built `toolgate` CLI (`packages/cli/bin/toolgate.js`; `npm test` builds it first) as a
 * child process on the Node that runs the tests, and gives its exit code and output.
 */
import { execFile } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** The repository root. */
export const root = fileURLToPath(new URL("../..", import.meta.url))

/** The CLI's entry point. */
export const bin = join(root, "packages/cli/bin/toolgate.js")

/** What a run of the CLI gave. */
export interface Result {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `toolgate ...args`. `cwd` defaults to the repository root; `env` is added to this
 * process's environment; `timeoutMs` kills the child when it runs longer.
 */
export const toolgate = (
  args: ReadonlyArray<string>,
  options: {
    readonly cwd?: string | undefined
    readonly env?: Readonly<Record<string, string>> | undefined
    readonly timeoutMs?: number | undefined
  } = {}
): Promise<Result> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { cwd: options.cwd ?? root, env: { ...process.env, ...options.env }, timeout: options.timeoutMs ?? 0 },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
      }
    )
  })
