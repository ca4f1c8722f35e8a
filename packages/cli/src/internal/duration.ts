/**
 * Durations as flags take them: a number and a unit, `500ms`, `30s`, `10m`, `2h`, `7d` (or
 * effect's spelled-out form, `30 seconds`), as milliseconds.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

const compact = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/

const unitMs: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** The milliseconds a duration flag's text names, or `undefined` when it names none. @internal */
export const parseMs = (text: string): number | undefined => {
  const trimmed = text.trim()
  const m = compact.exec(trimmed)
  if (m !== null) return Number(m[1]) * unitMs[m[2]]
  const spelled = Duration.fromInput(trimmed as Duration.Input)
  if (Option.isNone(spelled) || !/^\d/.test(trimmed)) return undefined
  const ms = Duration.toMillis(spelled.value)
  return Number.isFinite(ms) ? ms : undefined
}
