/**
 * Aligned calendar windows on a time zone's wall clock, for window-scoped keys: parsing a window
 * size (`minute`, `hour`, `day` or an ISO 8601 duration that divides a day), checking an IANA
 * zone name, and the window an instant falls in, named by its start on the zone's wall clock
 * (`2024-10-27T02:00:00.000`). The zone's offsets (and so its DST transitions) come from
 * effect's `DateTime`, which reads them from the platform's time-zone database (`Intl`).
 *
 * The rule: a window is a range of wall-clock time in the zone, `[start, start + size)`, its
 * starts at local midnight and every `size` after it. An instant belongs to the window its
 * wall-clock reading falls in. So on a fall-back night the repeated hour's two passes share one
 * window (an `hour` window then spans two real hours), and a wall-clock time skipped by a
 * spring-forward jump has no instant at all (its window is shorter, or empty). A day window is a
 * local calendar date (23, 24 or 25 real hours).
 *
 * @internal
 */
import * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"

/** Milliseconds in a wall-clock day. */
const dayMs = 86_400_000

/** A window size: its length on the wall clock and its canonical ISO 8601 form. @internal */
export interface Size {
  readonly ms: number
  readonly iso: string
}

const named: Readonly<Record<string, number>> = { minute: 60_000, hour: 3_600_000, day: dayMs }

/** `PnD`, `PTnHnMnS` and their combinations, in whole units. */
const isoDuration = /^P(?:(\d{1,3})D)?(?:T(?:(\d{1,3})H)?(?:(\d{1,5})M)?(?:(\d{1,6})S)?)?$/

/** The canonical ISO 8601 form of a size in ms (whole seconds, at most a day). @internal */
export const isoOf = (ms: number): string => {
  if (ms === dayMs) return "P1D"
  const h = Math.floor(ms / 3_600_000)
  const m = Math.floor((ms % 3_600_000) / 60_000)
  const s = Math.floor((ms % 60_000) / 1000)
  return `PT${h > 0 ? `${h}H` : ""}${m > 0 ? `${m}M` : ""}${s > 0 ? `${s}S` : ""}`
}

/**
 * Parses a window size: `minute`, `hour`, `day`, or an ISO 8601 duration of days, hours, minutes
 * and seconds (`PT15M`, `PT2H`, `P1D`) whose length divides a day (windows start at local
 * midnight, so every day has the same windows) and is at least a second. The reason otherwise.
 *
 * @internal
 */
export const parseSize = (text: string): Size | string => {
  const byName = named[text]
  if (byName !== undefined) return { ms: byName, iso: isoOf(byName) }
  const m = isoDuration.exec(text)
  if (m === null || text === "P" || text.endsWith("T")) {
    return `${JSON.stringify(text)} is not minute, hour, day or an ISO 8601 duration such as PT15M, PT1H or P1D`
  }
  const [d, h, min, s] = m.slice(1).map((part) => part === undefined ? 0 : Number(part))
  const ms = ((d * 24 + h) * 60 + min) * 60_000 + s * 1000
  if (ms < 1000) return `${text} is shorter than a second`
  if (ms > dayMs || dayMs % ms !== 0) {
    return `${text} does not divide a day evenly (windows start at local midnight): use one that does, such as PT15M, PT2H or P1D`
  }
  return { ms, iso: isoOf(ms) }
}

/**
 * Checks an IANA time-zone name against the platform's database (through `DateTime`); the
 * reason it is refused otherwise. The name must be written as the database spells it
 * (`Europe/Berlin`, not `europe/berlin`), because the name is part of every key: two spellings
 * of one zone would key apart.
 *
 * @internal
 */
export const checkZone = (name: string): DateTime.TimeZone.Named | string => {
  const zone = DateTime.zoneMakeNamed(name)
  if (Option.isNone(zone)) {
    return `${
      JSON.stringify(name)
    } is not an IANA time-zone name known here (e.g. Europe/Berlin, America/New_York, UTC)`
  }
  const resolved = DateTime.zoneToString(zone.value)
  if (resolved !== name && resolved.toLowerCase() === name.toLowerCase()) {
    return `write the time zone as ${resolved}, not ${name} (the name is part of every key)`
  }
  return zone.value
}

const pad = (n: number, width: number): string => String(n).padStart(width, "0")

/**
 * The start of the window of `size` that `instant` falls in, on `zone`'s wall clock, as
 * `YYYY-MM-DDTHH:mm:ss.sss` (no offset: it is a wall-clock reading of the zone). `undefined`
 * when the instant is not a date of years 1 to 9999.
 *
 * @internal
 */
export const startOf = (instant: DateTime.DateTime, size: Size, zone: DateTime.TimeZone.Named): string | undefined => {
  const zoned = DateTime.setZone(instant, zone)
  const p = DateTime.toParts(zoned)
  if (!(p.year >= 1 && p.year <= 9999)) return undefined
  const ofDay = ((p.hour * 60 + p.minute) * 60 + p.second) * 1000 + p.millisecond
  const start = ofDay - (ofDay % size.ms)
  const h = Math.floor(start / 3_600_000)
  const m = Math.floor((start % 3_600_000) / 60_000)
  const s = Math.floor((start % 60_000) / 1000)
  return `${pad(p.year, 4)}-${pad(p.month, 2)}-${pad(p.day, 2)}T${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}.${
    pad(start % 1000, 3)
  }`
}
