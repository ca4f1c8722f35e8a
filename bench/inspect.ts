/**
 * The `toolgate inspect` benchmark: one generated capture of hundreds of megabytes
 * (`writeCapture` in `bench/generator.ts`, written to a temporary directory in pieces) through the
 * built CLI as a child process, as a user runs it: `toolgate inspect FILE --provider openai-chat
 * --json`. Measured: the wall time from spawning the process to its exit, and its peak resident
 * set size (`process.resourceUsage().maxRSS`, the kernel's high-water mark, written by a module
 * the child preloads with `--import` when it exits; nothing in the CLI itself). The JSON it
 * prints is checked against the capture's ground truth (every call's id, name and arguments).
 * Target (issue 9): a 500 MB capture stays under 300 MB of RSS. Each capture is inspected
 * `runs` times: the table gives the median time and the largest peak (the peak varies by a few
 * tens of MB from run to run, with the heap sizes V8 picks). The same two figures for
 * `toolgate --version` give the start-up share of both.
 *
 * Run: `npx tsc -b && npx tsc -b bench && node bench/dist/inspect.js [MB...]` (default 50 and
 * 500, 3 runs each), or through `bench/main.ts` (the same; 50 MB once with `--quick`).
 */
import { spawn } from "node:child_process"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { writeCapture } from "./generator.js"
import { fmt, markdownTable, textTable } from "./report.js"

/** One row of the table. */
export interface Row {
  readonly "capture MB": number
  readonly "tool calls": number
  readonly "SSE events": number
  readonly "arguments MB": number
  readonly runs: number
  readonly "inspect s": number
  readonly "MB/s": number
  readonly "peak RSS MB": number
  readonly target: string
}

/** What `toolgate --version` costs: the start-up share of every row. */
export interface StartUp {
  readonly seconds: number
  readonly peakRssMB: number
}

/** The peak RSS target, in MB (10^6 bytes; issue 9: under 300 MB for a 500 MB capture). */
const targetMB = 300

const bin = fileURLToPath(new URL("../../packages/cli/bin/toolgate.js", import.meta.url))

/** Spawns the CLI with `args`; its stdout, exit code, wall time (ms) and peak RSS (KiB). */
const toolgate = (args: ReadonlyArray<string>, dir: string) =>
  new Promise<{ stdout: string; code: number | null; ms: number; maxRssKiB: number }>((resolve, reject) => {
    const probe = join(dir, "max-rss.mjs")
    const out = join(dir, "max-rss.txt")
    writeFileSync(
      probe,
      `import { writeFileSync } from "node:fs"\n` +
        `process.on("exit", () => writeFileSync(${JSON.stringify(out)}, String(process.resourceUsage().maxRSS)))\n`
    )
    const started = performance.now()
    const child = spawn(
      process.execPath,
      ["--import", pathToFileURL(probe).href, bin, ...args],
      { stdio: ["ignore", "pipe", "inherit"] }
    )
    const chunks: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk))
    child.on("error", reject)
    child.on("close", (code) => {
      const ms = performance.now() - started
      resolve({
        stdout: Buffer.concat(chunks).toString("utf8"),
        code,
        ms,
        maxRssKiB: Number(readFileSync(out, "utf8"))
      })
    })
  })

const mb = (bytes: number) => Math.round(bytes / 1e5) / 10

/** Runs `toolgate --version` once: the start-up time and peak RSS every inspection includes. */
export const measureStartUp = async (): Promise<StartUp> => {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-bench-inspect-"))
  try {
    const run = await toolgate(["--version"], dir)
    if (run.code !== 0) throw new Error(`toolgate --version exited ${run.code}`)
    return { seconds: Math.round(run.ms / 100) / 10, peakRssMB: mb(run.maxRssKiB * 1024) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Generates a capture of `megabytes` (10^6 bytes; calls of 256 KiB of arguments) in a temporary
 * directory, inspects it `runs` times, checks every result and gives the row (median time, largest
 * peak RSS). Throws when a result is wrong.
 */
export const runInspectBenchmark = async (megabytes: number, runs: number): Promise<Row> => {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-bench-inspect-"))
  try {
    const file = join(dir, "capture.sse")
    const fd = openSync(file, "w")
    const capture = writeCapture("openai-chat", { bytes: megabytes * 1e6, argumentBytes: 256 * 1024 }, (piece) => {
      writeSync(fd, piece)
    })
    closeSync(fd)
    const times: Array<number> = []
    let peakKiB = 0
    for (let attempt = 0; attempt < runs; attempt++) {
      const run = await toolgate(["inspect", file, "--provider", "openai-chat", "--json"], dir)
      const got = JSON.parse(run.stdout) as {
        outcome: string
        finishReason: string | null
        text: string
        toolCalls: ReadonlyArray<{ id: string; name: string; arguments: unknown }>
      }
      const wrong = run.code !== 0 || got.outcome !== "complete" || got.finishReason !== capture.finishReason ||
        got.text !== capture.text || got.toolCalls.length !== capture.toolCalls.length ||
        got.toolCalls.some((call, i) => {
          const expected = capture.toolCalls[i]!
          return call.id !== expected.id || call.name !== expected.name ||
            JSON.stringify(call.arguments) !== expected.argumentsText
        })
      if (wrong) throw new Error(`toolgate inspect gave a wrong result (exit ${run.code}): ${run.stdout.slice(0, 300)}`)
      times.push(run.ms)
      peakKiB = Math.max(peakKiB, run.maxRssKiB)
    }
    const ms = times.toSorted((a, b) => a - b)[Math.floor(times.length / 2)]!
    const peakMB = mb(peakKiB * 1024)
    return {
      "capture MB": mb(capture.bytes),
      "tool calls": capture.toolCalls.length,
      "SSE events": capture.events,
      "arguments MB": mb(capture.toolCalls.reduce((n, call) => n + Buffer.byteLength(call.argumentsText), 0)),
      runs,
      "inspect s": Math.round(ms / 100) / 10,
      "MB/s": Math.round(capture.bytes / 1e3 / ms),
      "peak RSS MB": peakMB,
      target: `< ${targetMB} MB RSS: ${peakMB < targetMB ? "met" : "missed"}`
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The rows as a terminal table and as the `bench/RESULTS.md` section (heading, method, table,
 * start-up line); `took` is the wall time of the whole measurement, generation included.
 */
export const inspectSection = (
  rows: ReadonlyArray<Row>,
  startUp: StartUp,
  took: string
): { readonly text: string; readonly markdown: string } => {
  const keys = Object.keys(rows[0]!) as Array<keyof Row>
  const cells = rows.map((row) =>
    keys.map((key) => {
      const value = row[key]
      return typeof value === "number" ? fmt(value, Number.isInteger(value) ? 0 : 1) : value
    })
  )
  const startUpLine = `Start-up alone (\`toolgate --version\`, measured the same way): ${
    fmt(startUp.seconds, 1)
  } s and ${fmt(startUp.peakRssMB, 1)} MB peak RSS.`
  const markdown = `## \`toolgate inspect\` on a large capture

\`bench/inspect.ts\` writes one OpenAI Chat capture per size with \`writeCapture\` (\`bench/generator.ts\`: the
inputs' shape, with as many calls of ~256 KiB of arguments as the size takes) to a temporary directory and runs
the built CLI on it as a child process, as a user would: \`toolgate inspect FILE --provider openai-chat --json\`.
**inspect s** is the median wall time from spawning the process to its exit (start-up included), **MB/s** the
capture's bytes over it, **peak RSS MB** the largest of the runs' \`process.resourceUsage().maxRSS\` (the kernel's
high-water mark, written by a module preloaded with \`--import\` as the child exits), in 10^6 bytes. Every run's
printed JSON is checked against the capture's ground truth (text, finish reason, every call's id, name and
arguments); a wrong result aborts the run. Target (issue 9): under 300 MB for the 500 MB capture. With the
generation, ${took}.

${markdownTable(keys, cells)}

${startUpLine}`
  return { text: `${textTable(keys, cells)}\n${startUpLine}`, markdown }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const sizes = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [50, 500]
  const began = performance.now()
  const startUp = await measureStartUp()
  const rows: Array<Row> = []
  for (const megabytes of sizes) rows.push(await runInspectBenchmark(megabytes, 3))
  const report = inspectSection(rows, startUp, `${((performance.now() - began) / 1000).toFixed(1)} s`)
  console.log(`${report.text}\n\n${report.markdown}`)
}
