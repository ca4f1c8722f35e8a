/**
 * Formatting for the benchmark report: numbers, plain-text tables for the terminal and Markdown
 * tables for `bench/RESULTS.md`.
 */
import { readFileSync } from "node:fs"
import * as os from "node:os"
import { fileURLToPath } from "node:url"

/** A number with a fixed count of decimals and thousands separators. */
export const fmt = (x: number, digits: number): string =>
  x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** Milliseconds with three decimals below 10 ms, one above. */
export const fmtMs = (ms: number): string => fmt(ms, Math.abs(ms) < 10 ? 3 : 1)

const isNumeric = (cell: string): boolean => /^-?[\d.,]+( %)?$|^n\/a$|^\d+\/\d+$|^$/.test(cell)

/** A Markdown table; columns whose cells are all numbers are right-aligned. */
export const markdownTable = (head: ReadonlyArray<string>, body: ReadonlyArray<ReadonlyArray<string>>): string => {
  const numeric = head.map((_, i) => body.every((row) => isNumeric(row[i] ?? "")))
  return [
    `| ${head.join(" | ")} |`,
    `| ${numeric.map((n) => (n ? "---:" : "---")).join(" | ")} |`,
    ...body.map((row) => `| ${row.join(" | ")} |`)
  ].join("\n")
}

/** A plain-text table for the terminal; numbers right-aligned. */
export const textTable = (head: ReadonlyArray<string>, body: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] ?? "").length)))
  const line = (row: ReadonlyArray<string>) =>
    row.map((cell, i) => (isNumeric(cell) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join("  ")
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].map((l) => l.trimEnd()).join("\n")
}

/** Any value as a table cell. */
export const cell = (value: unknown): string =>
  typeof value === "number"
    ? fmt(value, Number.isInteger(value) ? 0 : 2)
    : typeof value === "string"
    ? value
    : JSON.stringify(value)

/** The installed version of a package, read from the workspace's `node_modules`. */
export const packageVersion = (name: string): string => {
  const path = fileURLToPath(new URL(`../../node_modules/${name}/package.json`, import.meta.url))
  return (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version
}

/** The machine, as Markdown list items. */
export const machine = (loadBefore: ReadonlyArray<number>, loadAfter: ReadonlyArray<number>): string => {
  const cpus = os.cpus()
  const load = (xs: ReadonlyArray<number>) => xs.map((x) => fmt(x, 2)).join(" / ")
  return [
    `- CPU: ${cpus[0]?.model ?? "unknown"}, ${cpus.length} cores (${os.availableParallelism()} available to Node)`,
    `- Memory: ${fmt(os.totalmem() / 2 ** 30, 1)} GiB; OS: ${os.type()} ${os.release()} ${os.arch()}`,
    `- Node ${process.version} (V8 ${process.versions.v8}), flags: ${process.execArgv.join(" ") || "none"}`,
    `- Load average (1/5/15 min) at the start: ${load(loadBefore)}; after the stream benchmarks: ${load(loadAfter)}`
  ].join("\n")
}
