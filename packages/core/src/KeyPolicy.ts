/**
 * A tool's key policy: what makes two calls of the tool "the same mutation" when the caller is
 * a language model, which rephrases free text on every retry but not the business identity.
 *
 * - `keyFields`: paths into the arguments that identify the mutation (`lead_id`, `email`,
 *   `deal.id`, `items[*].sku`). The intent key hashes their values. A declared field missing
 *   from a call is {@link MissingKeyField}, never a key on nothing. Default: every argument except
 *   the free-text ones.
 * - `freeText`: paths to text the model writes in its own words (a task title, a note). They are
 *   left out of the key and out of the match: a call that repeats the key with other free text
 *   replays the recorded outcome, and the replay reports what differed ({@link Changes}).
 *   Everything else must match for a replay to be honoured; a call that differs anywhere else
 *   (an `amount`) under the same key is `IdempotencyKeyReused`, with the differing paths, and
 *   never runs. Why the default is "everything except the declared free text" and not a list of
 *   fields that must match: a field added to the tool later, or forgotten in the list, is then
 *   compared rather than silently ignored, so the mistake a policy can make is a refused replay
 *   (loud), never a wrong one.
 * - `window` (optional): key the action by an aligned calendar window instead of the turn:
 *   `{ "size": "hour", "timeZone": "Europe/Berlin" }` keys it by tenant + tool + key fields +
 *   the calendar hour in Berlin, across turns: two form submissions of one lead within the hour
 *   make one task. The window is taken from the **event time the caller supplies**
 *   (`IdempotencyKey.Scope.eventTime`: when the lead's form was received), never from the clock
 *   at execution: a retry of the event at 11:00:00.1 of an event received at 10:59:59.9 carries
 *   10:59:59.9 and lands in the 10:00 window with its first attempt. Two different events either
 *   side of a boundary are in two windows: windows are aligned, not sliding. Sizes: `minute`,
 *   `hour`, `day`, or an ISO 8601 duration that divides a day (`PT15M`, `PT2H`, `P1D`); windows
 *   start at local midnight of `timeZone`, an IANA name, written as the time-zone database spells
 *   it. A window is wall-clock time of the zone: an hour window in `Asia/Kathmandu` starts at :15
 *   UTC; on a fall-back night both passes of the repeated hour fall in one window, and a skipped
 *   hour has none; a day window is the local date (23 to 25 real hours). Offsets come from
 *   effect's `DateTime`, i.e. the platform's time-zone database.
 *
 * The JSON form (a tools file's `"idempotency"` member) and the library's are the same
 * {@link Input}; {@link make} checks it. Where it comes from in the library: the
 * `IdempotencyKey.Policy` annotation on a tool, or a handler's `keyPolicy` option of
 * `ToolExecutor`.
 *
 * (Why one long module: the policy, its JSON form, its check and its use in a key are one concept;
 * the calendar arithmetic is `internal/calendarWindow`, the paths `internal/argumentPath`.)
 *
 * @since 0.1.0
 */
import type * as DateTime from "effect/DateTime"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as ArgumentPath from "./internal/argumentPath.js"
import * as CalendarWindow from "./internal/calendarWindow.js"

/**
 * A key policy as written: the `"idempotency"` member of a tool in a tools file, or the
 * library's plain object. Paths are the text form (`lead_id`, `contact.email`, `items[0]`,
 * `items[*].sku`, `["odd.name"]`); free-text paths end with a member name.
 *
 * @since 0.1.0
 * @category models
 */
export interface Input {
  readonly keyFields?: ReadonlyArray<string> | undefined
  readonly freeText?: ReadonlyArray<string> | undefined
  readonly window?: { readonly size: string; readonly timeZone: string } | undefined
}

/**
 * A window scope, checked: its size (ms on the wall clock, and its canonical ISO 8601 form) and
 * its zone.
 *
 * @since 0.1.0
 * @category models
 */
export interface Window {
  readonly size: string
  readonly sizeMs: number
  readonly timeZone: string
  readonly zone: DateTime.TimeZone.Named
}

const TypeId = "~@toolgate/core/KeyPolicy"

/**
 * A checked key policy (see the module docs). `input` is the policy in its canonical written form
 * (paths in their canonical text, sizes as ISO 8601), for display and for JSON.
 *
 * @since 0.1.0
 * @category models
 */
export interface KeyPolicy {
  readonly [TypeId]: typeof TypeId
  readonly keyFields: ReadonlyArray<string> | undefined
  readonly freeText: ReadonlyArray<string>
  readonly window: Window | undefined
  readonly input: Input
  /** @internal */
  readonly keyPaths: ReadonlyArray<ArgumentPath.Path> | undefined
  /** @internal */
  readonly freePaths: ReadonlyArray<ArgumentPath.Path>
}

/**
 * Whether a value is a checked {@link KeyPolicy}.
 *
 * @since 0.1.0
 * @category guards
 */
export const isKeyPolicy = (u: unknown): u is KeyPolicy => typeof u === "object" && u !== null && TypeId in u

/**
 * A key policy that cannot be used: `field` names the member (`keyFields[1]`, `window.size`) and
 * `reason` what is wrong with it; `tool` is the tool's name when known.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidKeyPolicy extends Schema.TaggedError<InvalidKeyPolicy>()("InvalidKeyPolicy", {
  tool: Schema.NullOr(Schema.String),
  field: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.tool === null ? "" : `tool ${this.tool}: `}idempotency${
      this.field === "" ? "" : `.${this.field}`
    }: ${this.reason}`
  }
}

/**
 * A call lacks a field its tool's key policy declares as a key field (the member is absent, an
 * index is past the end, or the path steps into a scalar), so its intent key cannot be derived.
 * Nothing was claimed or run. `path` is where the call stops matching the declared path.
 *
 * @since 0.1.0
 * @category errors
 */
export class MissingKeyField extends Schema.TaggedError<MissingKeyField>()("MissingKeyField", {
  toolName: Schema.String,
  /** The declared key field. */
  keyField: Schema.String,
  /** The first step of it the call does not have. */
  path: Schema.String
}) {
  override get message(): string {
    return `tool ${JSON.stringify(this.toolName)}: the call has no ${this.path}${
      this.path === this.keyField ? "" : ` (of key field ${this.keyField})`
    }, which its key policy declares as a key field; nothing was run`
  }
}

/**
 * A tool whose key policy is window-scoped was called without a usable event time in its scope
 * (`IdempotencyKey.Scope.eventTime`): the window cannot be taken from the wall clock at
 * execution (a retry would land in another window). Nothing was claimed or run.
 *
 * @since 0.1.0
 * @category errors
 */
export class MissingEventTime extends Schema.TaggedError<MissingEventTime>()("MissingEventTime", {
  toolName: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `tool ${JSON.stringify(this.toolName)} is keyed by a calendar window and ${this.reason}; ` +
      "give the event's time (when it was received), not the time of execution"
  }
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const paths = (
  given: unknown,
  field: string,
  tool: string | null,
  rule: (path: ArgumentPath.Path) => string | undefined
): Result.Result<ReadonlyArray<ArgumentPath.Path>, InvalidKeyPolicy> => {
  const invalid = (at: string, reason: string) => Result.fail(new InvalidKeyPolicy({ tool, field: at, reason }))
  if (!Array.isArray(given)) return invalid(field, "must be an array of paths")
  const out: Array<ArgumentPath.Path> = []
  const seen = new Set<string>()
  for (let i = 0; i < given.length; i++) {
    const text: unknown = given[i]
    if (typeof text !== "string") return invalid(`${field}[${i}]`, "must be a path (a string)")
    const path = ArgumentPath.parse(text)
    if (typeof path === "string") return invalid(`${field}[${i}]`, `${JSON.stringify(text)}: ${path}`)
    const broken = rule(path)
    if (broken !== undefined) return invalid(`${field}[${i}]`, `${JSON.stringify(text)}: ${broken}`)
    const canonical = ArgumentPath.format(path)
    if (seen.has(canonical)) return invalid(`${field}[${i}]`, `${canonical} is listed twice`)
    seen.add(canonical)
    out.push(path)
  }
  return Result.succeed(out)
}

const policyMembers = new Set(["keyFields", "freeText", "window"])
const windowMembers = new Set(["size", "timeZone"])

/**
 * Checks a key policy as written (see {@link Input}; unknown members are refused, so a typo is
 * not a silently ignored policy): paths that parse, at least one key field when `keyFields` is
 * given, no path listed twice, free-text paths that end with a member name and never overlap a
 * key field, a window size that divides a day, a known IANA zone. Fails with
 * {@link InvalidKeyPolicy} naming the first member that breaks a rule.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (input: unknown, tool: string | null = null): Result.Result<KeyPolicy, InvalidKeyPolicy> =>
  Result.gen(function*() {
    const invalid = (field: string, reason: string) => Result.fail(new InvalidKeyPolicy({ tool, field, reason }))
    if (isKeyPolicy(input)) return input
    if (!isObject(input)) {
      return yield* invalid("", "must be an object with keyFields, freeText and/or window")
    }
    for (const member of Object.keys(input)) {
      if (!policyMembers.has(member)) {
        return yield* invalid(member, "is not a key policy member (keyFields, freeText, window)")
      }
    }
    const keyPaths = input.keyFields === undefined
      ? undefined
      : yield* paths(input.keyFields, "keyFields", tool, () => undefined)
    if (keyPaths !== undefined && keyPaths.length === 0) {
      return yield* invalid("keyFields", "must name at least one field (leave it out to key on every argument)")
    }
    const freePaths = input.freeText === undefined ? [] : yield* paths(
      input.freeText,
      "freeText",
      tool,
      (path) =>
        typeof path[path.length - 1] === "string"
          ? keyPaths?.find((k) => ArgumentPath.overlaps(k, path)) === undefined
            ? undefined
            : "overlaps a key field: a field cannot identify the mutation and be free text"
          : "must end with a member name (free text is a member, e.g. items[*].note)"
    )
    let window: Window | undefined
    if (input.window !== undefined) {
      const w = input.window
      if (!isObject(w)) return yield* invalid("window", "must be an object { size, timeZone }")
      for (const member of Object.keys(w)) {
        if (!windowMembers.has(member)) {
          return yield* invalid(`window.${member}`, "is not a window member (size, timeZone)")
        }
      }
      if (typeof w.size !== "string") {
        return yield* invalid("window.size", "must be minute, hour, day or an ISO 8601 duration")
      }
      const size = CalendarWindow.parseSize(w.size)
      if (typeof size === "string") return yield* invalid("window.size", size)
      if (typeof w.timeZone !== "string") {
        return yield* invalid("window.timeZone", "must be an IANA time-zone name (the zone is always explicit)")
      }
      const zone = CalendarWindow.checkZone(w.timeZone)
      if (typeof zone === "string") return yield* invalid("window.timeZone", zone)
      window = { size: size.iso, sizeMs: size.ms, timeZone: w.timeZone, zone }
    }
    const keyFields = keyPaths?.map(ArgumentPath.format)
    const freeText = freePaths.map(ArgumentPath.format)
    const policy: KeyPolicy = {
      [TypeId]: TypeId,
      keyFields,
      freeText,
      window,
      input: {
        ...(keyFields === undefined ? {} : { keyFields }),
        ...(freeText.length === 0 ? {} : { freeText }),
        ...(window === undefined ? {} : { window: { size: window.size, timeZone: window.timeZone } })
      },
      keyPaths,
      freePaths
    }
    return policy
  })

/**
 * {@link make}, throwing the `InvalidKeyPolicy` instead: for policies written in code, checked
 * once when the module loads (`Tool.annotate(IdempotencyKey.Policy, KeyPolicy.makeUnsafe({ … }))`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeUnsafe = (input: Input, tool: string | null = null): KeyPolicy => {
  const made = make(input, tool)
  if (Result.isFailure(made)) throw made.failure
  return made.success
}

/**
 * What a policy selects from a call's arguments (plain JSON):
 *
 * - `key`: what the intent key covers — an object of the key fields' values by their canonical
 *   path text (under `[*]`, the array of values), or the arguments without the free text when no
 *   key field is declared;
 * - `matched`: what the fingerprint covers — the arguments without the free text.
 *
 * Fails with {@link MissingKeyField} for the first declared key field the call lacks.
 *
 * @since 0.1.0
 * @category selection
 */
export const select = (
  policy: KeyPolicy,
  args: unknown,
  toolName: string
): Result.Result<{ readonly key: unknown; readonly matched: unknown }, MissingKeyField> => {
  const matched = policy.freePaths.length === 0 ? args : ArgumentPath.omit(args, policy.freePaths)
  if (policy.keyPaths === undefined) return Result.succeed({ key: matched, matched })
  const key: Record<string, unknown> = {}
  for (let i = 0; i < policy.keyPaths.length; i++) {
    const found = ArgumentPath.get(args, policy.keyPaths[i])
    if (!found.found) {
      return Result.fail(new MissingKeyField({ toolName, keyField: policy.keyFields![i], path: found.missing }))
    }
    Object.defineProperty(key, policy.keyFields![i], {
      value: found.value,
      enumerable: true,
      writable: true,
      configurable: true
    })
  }
  return Result.succeed({ key, matched })
}

/**
 * The window of a window-scoped policy that an event time falls in: its start on the zone's wall
 * clock (`2024-10-27T02:00:00.000`). Fails with {@link MissingEventTime} when there is no event
 * time, or it is not an instant of years 1 to 9999 in the zone.
 *
 * @since 0.1.0
 * @category windows
 */
export const windowStart = (
  window: Window,
  eventTime: DateTime.DateTime | undefined,
  toolName: string
): Result.Result<string, MissingEventTime> => {
  if (eventTime === undefined) {
    return Result.fail(new MissingEventTime({ toolName, reason: "the call has no event time" }))
  }
  const start = CalendarWindow.startOf(eventTime, { ms: window.sizeMs, iso: window.size }, window.zone)
  return start === undefined
    ? Result.fail(new MissingEventTime({ toolName, reason: "its event time is not a date of years 1 to 9999" }))
    : Result.succeed(start)
}

/**
 * One difference between a call's arguments and the recorded call's: the concrete path
 * (`title`, `items[2].note`), and bounded excerpts of both values (canonical JSON, at most
 * {@link excerptLength} characters; `(absent)` where one side has no value).
 *
 * @since 0.1.0
 * @category comparison
 */
export interface Change {
  readonly path: string
  readonly recorded: string
  readonly given: string
}

/**
 * Differences, bounded: the first {@link maxChanges} in path order, and how many there are.
 *
 * @since 0.1.0
 * @category comparison
 */
export interface Changes {
  readonly changes: ReadonlyArray<Change>
  readonly total: number
}

/**
 * Longest excerpt of a value in a {@link Change}, in UTF-16 code units (longer ones end with `…`).
 *
 * @since 0.1.0
 * @category comparison
 */
export const excerptLength = 80

/**
 * Most changes listed in {@link Changes} (the rest are counted in `total`).
 *
 * @since 0.1.0
 * @category comparison
 */
export const maxChanges = 10

const absent = "(absent)"

const excerpt = (value: unknown): string => {
  if (value === undefined) return absent
  const text = JSON.stringify(value) ?? String(value)
  return text.length <= excerptLength ? text : `${text.slice(0, excerptLength - 1)}…`
}

/** Deep equality of plain JSON values. */
const same = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const bb = b as Array<unknown>
    return a.length === bb.length && a.every((x, i) => same(x, bb[i]))
  }
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined)
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined)
  return ka.length === kb.length &&
    ka.every((k) => Object.hasOwn(b, k) && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}

/** The leaf paths where `a` and `b` differ, in path order (members sorted, indexes ascending). */
const diff = (
  a: unknown,
  b: unknown,
  at: Array<ArgumentPath.Segment>,
  out: Array<[ArgumentPath.Path, unknown, unknown]>
) => {
  if (same(a, b)) return
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) diff(a[i], b[i], [...at, i], out)
    return
  }
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].toSorted()
    for (const k of keys) {
      diff(Object.hasOwn(a, k) ? a[k] : undefined, Object.hasOwn(b, k) ? b[k] : undefined, [...at, k], out)
    }
    return
  }
  out.push([at, a, b])
}

const bounded = (found: ReadonlyArray<[ArgumentPath.Path, unknown, unknown]>): Changes => ({
  changes: found.slice(0, maxChanges).map(([path, recorded, given]) => ({
    path: path.length === 0 ? "(the arguments)" : ArgumentPath.format(path),
    recorded: excerpt(recorded),
    given: excerpt(given)
  })),
  total: found.length
})

/**
 * Compares a call's arguments with the recorded call's (both plain JSON), under a policy:
 * `freeText` lists the differences inside the policy's free-text fields (a replay reports them),
 * `other` every other difference (what makes the same key `IdempotencyKeyReused`). Without a
 * policy, every difference is `other`.
 *
 * @since 0.1.0
 * @category comparison
 */
export const compare = (
  policy: KeyPolicy | undefined,
  recorded: unknown,
  given: unknown
): { readonly freeText: Changes; readonly other: Changes } => {
  const found: Array<[ArgumentPath.Path, unknown, unknown]> = []
  diff(recorded, given, [], found)
  const free = policy?.freePaths ?? []
  const isFree = (path: ArgumentPath.Path) => free.some((p) => ArgumentPath.isUnder(path, p))
  return {
    freeText: bounded(found.filter(([path]) => isFree(path))),
    other: bounded(found.filter(([path]) => !isFree(path)))
  }
}
