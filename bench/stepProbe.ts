/**
 * Timing an agent step's parts in the bench, not in the library (`bench/agentStep.ts`): a probe
 * that stamps `performance.now()` (and the wire's round-trip count) around calls of the services
 * the agent loop gets from its context, and the step's parts computed from those spans.
 */
import { Effect } from "effect"

/** One timed call of a wrapped service: its name, start and end (ms, `performance.now()`), round trips on the wire. */
export interface Span {
  readonly name: string
  readonly start: number
  readonly end: number
  readonly trips: number
}

/** Collects the spans and marks of the step in flight. */
export class Probe {
  spans: Array<Span> = []
  /** When the model stream handed on the event that ended the body (the finish: the call's release). */
  released = 0
  /** Round trips on the wire so far (the relay's count; none without it). */
  trips: () => number = () => 0

  /** `effect`, timed as a span named `name`. */
  time<A, E, R>(name: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.suspend(() => {
      const start = performance.now()
      const trips = this.trips()
      return Effect.onExit(effect, () =>
        Effect.sync(() => {
          this.spans.push({ name, start, end: performance.now(), trips: this.trips() - trips })
        }))
    })
  }

  reset(): void {
    this.spans = []
    this.released = 0
  }
}

/** `service` with every method that returns an Effect timed as `prefix.method`. */
export const timed = <S extends object>(prefix: string, service: S, probe: Probe): S => {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(service)) {
    out[name] = typeof value !== "function" ? value : (...args: Array<unknown>) => {
      const result: unknown = value.apply(service, args)
      return Effect.isEffect(result) ? probe.time(`${prefix}.${name}`, result) : result
    }
  }
  return out as S
}

/**
 * The parts of one step in ms (see `partsOf`); `cpu` is the process's CPU time over the step (ms);
 * `trips` the round trips on the wire of some parts and of the whole step (0 when not counted).
 */
export interface StepParts {
  readonly journalClaim: number
  readonly firstByte: number
  readonly stream: number
  readonly journalRecord: number
  readonly claim: number
  readonly handler: number
  readonly complete: number
  readonly rest: number
  readonly total: number
  readonly cpu: number
  readonly trips: {
    readonly journalClaim: number
    readonly journalRecord: number
    readonly claim: number
    readonly complete: number
    readonly total: number
  }
}

const sumOf = (spans: ReadonlyArray<Span>, match: (name: string) => boolean, of: (s: Span) => number) =>
  spans.filter((s) => match(s.name)).reduce((n, s) => n + of(s), 0)

const ms = (s: Span) => s.end - s.start
const tripsOf = (s: Span) => s.trips

/**
 * The parts of the step whose spans `probe` holds, given its `total` and `cpu` ms and the round
 * trips counted across it: the journal's `claim` and `record`, the store methods named with
 * `claim` and `complete` (a batched method counts too), the handler, the model request up to its
 * response head (`http`), the stream from that head to the release mark, and the rest of the total.
 * Throws when the model request was not observed.
 */
export const partsOf = (probe: Probe, total: number, cpu: number, trips: number): StepParts => {
  const spans = probe.spans
  const http = spans.find((s) => s.name === "http")
  if (http === undefined || probe.released === 0) throw new Error("agent step: the model request was not observed")
  const journalClaim = (n: string) => n === "journal.claim"
  const journalRecord = (n: string) => n === "journal.record"
  const claim = (n: string) => n.startsWith("store.") && /claim/i.test(n)
  const complete = (n: string) => n.startsWith("store.") && /complete/i.test(n)
  const parts = {
    journalClaim: sumOf(spans, journalClaim, ms),
    firstByte: ms(http),
    stream: probe.released - http.end,
    journalRecord: sumOf(spans, journalRecord, ms),
    claim: sumOf(spans, claim, ms),
    handler: sumOf(spans, (n) => n === "handler", ms),
    complete: sumOf(spans, complete, ms)
  }
  const listed = Object.values(parts).reduce((n, x) => n + x, 0)
  return {
    ...parts,
    rest: total - listed,
    total,
    cpu,
    trips: {
      journalClaim: sumOf(spans, journalClaim, tripsOf),
      journalRecord: sumOf(spans, journalRecord, tripsOf),
      claim: sumOf(spans, claim, tripsOf),
      complete: sumOf(spans, complete, tripsOf),
      total: trips
    }
  }
}

/** The `p` quantile (0 to 1) of `xs` by the nearest-rank method: the smallest value with at least `p` of them at or below it. */
export const percentile = (xs: ReadonlyArray<number>, p: number): number => {
  const sorted = xs.toSorted((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!
}
