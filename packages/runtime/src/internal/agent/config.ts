/**
 * The options of an agent turn, checked against their rules and resolved with their defaults
 * (the rules are on `Agent.RunOptions` and `Agent.JournalOptions`). A broken rule is
 * `InvalidAgentOptions` naming the option, before anything runs.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Agent from "../../Agent.js"
import * as IdempotencyStore from "../../IdempotencyStore.js"
import { render } from "../storeRules.js"

/** @internal */
export interface Config {
  readonly maxSteps: number
  readonly deadlineMs: number
  readonly leaseMs: number
  readonly heartbeatMs: number
  readonly waitMs: number
  /** The polling schedule of a wait (bounded per wait by the time it may take). */
  readonly wait: Schedule.Schedule<unknown, unknown>
  readonly retentionMs: number
}

/** @internal */
export const defaults = {
  maxSteps: 8,
  deadlineMs: 600_000,
  leaseMs: 30_000,
  waitMs: 60_000
} as const

const finite = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n)

/** @internal */
export const configure = (
  options: Pick<Agent.RunOptions<never>, "maxSteps" | "deadlineMs" | "journal">
): Result.Result<Config, Agent.InvalidAgentOptions> => {
  const journal = options.journal ?? {}
  const broken = (option: Agent.InvalidAgentOptions["option"], value: unknown, rule: string) =>
    Result.fail(new Agent.InvalidAgentOptions({ option, value: render(value), rule }))
  const maxSteps = options.maxSteps ?? defaults.maxSteps
  if (!(Number.isInteger(maxSteps) && maxSteps >= 1 && maxSteps <= 1_000)) {
    return broken("maxSteps", maxSteps, "an integer from 1 to 1000")
  }
  const deadlineMs = options.deadlineMs ?? defaults.deadlineMs
  if (!(typeof deadlineMs === "number" && deadlineMs > 0)) {
    return broken("deadlineMs", deadlineMs, "a number of ms > 0 (Infinity for none)")
  }
  const leaseMs = journal.leaseMs ?? defaults.leaseMs
  if (!(finite(leaseMs) && leaseMs >= 100)) return broken("leaseMs", leaseMs, "a finite number of ms ≥ 100")
  const heartbeatMs = journal.heartbeatMs ?? leaseMs / 3
  if (!(finite(heartbeatMs) && heartbeatMs >= 10 && heartbeatMs <= leaseMs / 2)) {
    return broken("heartbeatMs", heartbeatMs, `a number of ms from 10 to half the lease (${leaseMs / 2})`)
  }
  const waitMs = journal.waitMs ?? defaults.waitMs
  if (!(finite(waitMs) && waitMs >= 0)) return broken("waitMs", waitMs, "a finite number of ms ≥ 0")
  const retentionMs = journal.retentionMs ?? IdempotencyStore.defaultRetentionMs
  if (!(finite(retentionMs) && retentionMs > 0)) {
    return broken("retentionMs", retentionMs, "a finite number of ms > 0")
  }
  return Result.succeed({
    maxSteps,
    deadlineMs,
    leaseMs,
    heartbeatMs,
    waitMs,
    wait: journal.wait ??
      Schedule.jittered(Schedule.min([Schedule.exponential(Duration.millis(10), 1.5), Schedule.spaced("250 millis")])),
    retentionMs
  })
}
