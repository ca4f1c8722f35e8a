/**
 * How the stream benchmarks measure: correctness against the generator's ground truth, time per
 * stream, time from the first byte to the first text delta, and heap held per stream in flight.
 */
import { isDeepStrictEqual } from "node:util"
import type { Contender, Result } from "./contenders.js"
import { type GeneratedStream, readableStream } from "./generator.js"

/**
 * Fails loudly unless a contender's result equals the ground truth: the whole text, and every
 * tool call's id, name and parsed arguments, in order.
 */
export const check = (contender: Contender, input: GeneratedStream, result: Result): void => {
  const where = `${contender.name} on ${input.provider}/${input.size}`
  if (result.text !== input.expected.text) {
    throw new Error(`${where}: wrong text (${result.text.length} chars, expected ${input.expected.text.length})`)
  }
  const expected = input.expected.toolCalls
  if (result.toolCalls.length !== expected.length) {
    throw new Error(`${where}: ${result.toolCalls.length} tool calls, expected ${expected.length}`)
  }
  for (let i = 0; i < expected.length; i++) {
    const got = result.toolCalls[i]!
    const want = expected[i]!
    if (got.id !== want.id || got.name !== want.name) {
      throw new Error(`${where}: call ${i} is ${got.id}/${got.name}, expected ${want.id}/${want.name}`)
    }
    if (!isDeepStrictEqual(got.arguments, want.arguments)) {
      throw new Error(`${where}: call ${i} (${want.id}) has wrong arguments`)
    }
  }
}

/** The time one stream took, in milliseconds. */
export interface Timing {
  /** Wall time. */
  readonly ms: number
  /**
   * CPU time of the whole process over the same span (`process.cpuUsage`, user and system, every
   * thread: the GC's helper threads count). Time the process spent waiting for a core that other
   * work on the machine held does not count, so on a shared machine it varies less than `ms`.
   */
  readonly cpuMs: number
}

/** Runs one stream, checks its result and returns its {@link Timing}. */
export const timeOne = async (contender: Contender, input: GeneratedStream): Promise<Timing> => {
  const body = readableStream(input.reads)
  const start = performance.now()
  const cpu = process.cpuUsage()
  const result = await contender.run(body, input.provider)
  const used = process.cpuUsage(cpu)
  const ms = performance.now() - start
  check(contender, input, result)
  return { ms, cpuMs: (used.user + used.system) / 1000 }
}

const gc: (() => void) | undefined = (globalThis as { gc?: () => void }).gc

/** Whether the process runs with `--expose-gc` (memory figures need it). */
export const canCollect = gc !== undefined

/** A full collection when `--expose-gc` is on; a no-op otherwise. */
const collect = (): void => gc?.()

/** Waits for a macrotask turn, so every promise chain that can make progress has made it. */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0))

const deferred = () => {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

/** One first-text measurement. */
export interface FirstText {
  /** Milliseconds from handing out the first read to the first text delta reaching the caller. */
  readonly ms: number
  /** Whether the delta arrived while the second read was still held back. */
  readonly beforeNextRead: boolean
}

/** How long the second read is held back before the delta counts as "waited for more bytes". */
const holdMs = 1000

/**
 * Time from the first byte to the first text delta: the body hands out its first read (which
 * holds whole text events) and then holds the second read back until the caller has seen text,
 * or for {@link holdMs}. A contender that needs a later byte before forwarding text shows up as
 * `beforeNextRead: false`. The rest of the body then flows and the result is checked.
 */
export const firstText = async (contender: Contender, input: GeneratedStream): Promise<FirstText> => {
  const gate = deferred()
  let start = 0
  let ms = -1
  let beforeNextRead = false
  let released = false
  const body = readableStream(input.reads, {
    gate: { at: 1, wait: () => gate.promise },
    onRead: (read) => {
      if (read === 0) start = performance.now()
      else if (read === 1) released = true
    }
  })
  const timer = setTimeout(gate.resolve, holdMs)
  const result = await contender.run(body, input.provider, () => {
    if (ms >= 0) return
    ms = performance.now() - start
    beforeNextRead = !released
    gate.resolve()
  })
  clearTimeout(timer)
  check(contender, input, result)
  if (ms < 0) throw new Error(`${contender.name} on ${input.provider}/${input.size}: no text delta reached the caller`)
  return { ms, beforeNextRead }
}

/**
 * Heap held by one stream in flight, in bytes: `streams` concurrent streams are fed every read but
 * the last; once all of them wait for it (plus a macrotask turn, so no queued work is left), two
 * full collections and `heapUsed`. The baseline is the larger of the collected heap before the
 * streams started and after they finished and were dropped (so one-time allocations such as newly
 * compiled code do not count). The inputs' bytes exist throughout and are not counted. Needs
 * `--expose-gc`; `undefined` without it.
 */
export const heapPerStream = async (
  contender: Contender,
  input: GeneratedStream,
  streams: number
): Promise<number | undefined> => {
  if (!canCollect) return undefined
  const heap = () => {
    collect()
    collect()
    return process.memoryUsage().heapUsed
  }
  const release = deferred()
  const allWaiting = deferred()
  let waiting = 0
  const last = input.reads.length - 1
  const before = heap()
  let runs: Array<Promise<Result>> | undefined = []
  for (let i = 0; i < streams; i++) {
    const body = readableStream(input.reads, {
      gate: {
        at: last,
        wait: () => {
          if (++waiting === streams) allWaiting.resolve()
          return release.promise
        }
      }
    })
    runs.push(contender.run(body, input.provider))
  }
  await allWaiting.promise
  await settle()
  await settle()
  const during = heap()
  release.resolve()
  for (const result of await Promise.all(runs)) check(contender, input, result)
  runs = undefined
  await settle()
  const after = heap()
  return Math.max(0, during - Math.max(before, after)) / streams
}

/** The median of a non-empty sample. */
export const median = (xs: ReadonlyArray<number>): number => {
  const sorted = xs.toSorted((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
