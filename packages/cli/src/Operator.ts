/**
 * The operator commands' building blocks (`toolgate records`, `resolve`, `purge`): opening the
 * store an operator names (an existing embedded data directory, never a new one, or a PostgreSQL
 * server), and printing records as a table, as one record's detail, or as JSON. The operations
 * themselves are `Records` of `@toolgate/runtime`.
 *
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import { IdempotencyKey } from "@toolgate/core"
import { EmbeddedPostgres, IdempotencyStore, Outbox, type Records, StepJournal } from "@toolgate/runtime"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

/**
 * The store an operator command opens cannot be opened: no initialised embedded store in the
 * data directory (it is created by `toolgate run` or `demo`, never by an operator command), or a
 * `--store` that is not a `postgres://` URL.
 *
 * @since 0.1.0
 * @category errors
 */
export class StoreNotFound extends Schema.TaggedError<StoreNotFound>()("StoreNotFound", { reason: Schema.String }) {
  override get message(): string {
    return this.reason
  }
}

/**
 * The stores of an operator command (`IdempotencyStore`, `StepJournal`, `Outbox`, and the
 * `PgClient` they use): the PostgreSQL server at `store`, else the
 * embedded store in `dataDir`, which must exist and be initialised (`PG_VERSION` in it). Fails with
 * {@link StoreNotFound} before opening anything.
 *
 * @since 0.1.0
 * @category stores
 */
export const storeLayer = Effect.fnUntraced(function*(store: string | undefined, dataDir: string) {
  if (store !== undefined) {
    if (!/^postgres(ql)?:\/\//.test(store)) {
      return yield* new StoreNotFound({ reason: "--store must be a postgres:// URL" })
    }
    return stores.pipe(Layer.provideMerge(PgClient.layer({ url: Redacted.make(store), maxConnections: 3 })))
  }
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const initialised = yield* fs.exists(path.join(dataDir, "PG_VERSION")).pipe(Effect.orElseSucceed(() => false))
  if (!initialised) {
    return yield* new StoreNotFound({
      reason:
        `--data-dir ${dataDir}: holds no toolgate store (toolgate run and demo create one; or give --store postgres://…)`
    })
  }
  return stores.pipe(Layer.provideMerge(EmbeddedPostgres.layer({ dataDir })))
})

/** The idempotency records, the agent turns' step journal and the outbox, in one database. */
const stores = Layer.mergeAll(IdempotencyStore.layerSql(), StepJournal.layerSql(), Outbox.layerSql())

/** Parses stored JSON text for printing (`null` when there is none, the text itself when it does not parse). */
const json = (text: string | null): unknown => {
  if (text === null) return null
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const iso = (date: Date | null): string | null => date === null ? null : date.toISOString()

/**
 * A record as one JSON object: its fields, fences as decimal strings, instants as ISO 8601, the
 * arguments and result parsed, and the downstream key its handler was given.
 *
 * @since 0.1.0
 * @category json
 */
export const recordJson = (record: IdempotencyStore.StoredRecord) => ({
  key: record.key,
  scope: record.scope,
  tool: record.tool,
  status: record.status,
  previous: record.previous,
  fence: record.fence.toString(),
  attempt: record.attempt,
  maxAttempts: record.maxAttempts,
  generation: record.generation,
  recovery: record.recovery,
  downstreamKey: IdempotencyKey.downstreamKey(record.key, record.generation),
  owner: record.owner,
  arguments: json(record.argumentsText),
  result: json(record.resultText),
  error: record.error,
  externalRef: record.externalRef,
  leaseExpiresAt: iso(record.leaseExpiresAt),
  createdAt: iso(record.createdAt),
  updatedAt: iso(record.updatedAt),
  completedAt: iso(record.completedAt),
  expiresAt: iso(record.expiresAt)
})

/**
 * A resolution's audit entry as one JSON object.
 *
 * @since 0.1.0
 * @category json
 */
export const resolutionJson = (entry: IdempotencyStore.ResolutionEntry) => ({
  key: entry.key,
  scope: entry.scope,
  tool: entry.tool,
  fence: entry.fence.toString(),
  status: entry.status,
  outcome: entry.status === "released" ? "not_applied" : entry.status === "succeeded" ? "applied" : "failed",
  result: json(entry.resultText),
  by: entry.by,
  reason: entry.reason,
  parkedError: entry.parkedError,
  at: entry.at.toISOString()
})

/**
 * One record's detail as one JSON object: the record, its journal and its resolutions.
 *
 * @since 0.1.0
 * @category json
 */
export const detailJson = (detail: Records.Detail) => ({
  record: recordJson(detail.record),
  resolutions: detail.resolutions.map(resolutionJson),
  journal: detail.journal.map((entry) => ({
    fence: entry.fence.toString(),
    attempt: entry.attempt,
    outcome: entry.outcome,
    detail: entry.detail,
    at: entry.at.toISOString()
  }))
})

const cut = (text: string, width: number): string => text.length <= width ? text : `${text.slice(0, width - 1)}…`

/** The short form of a key in tables: its first 12 hex digits (a prefix `resolve` and `records` accept). */
const short = (key: string): string => key.slice(key.lastIndexOf(":") + 1, key.lastIndexOf(":") + 13)

/**
 * Records as a table, newest change first: short key, scope, tool, state, attempt, last change.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderList = (records: ReadonlyArray<IdempotencyStore.StoredRecord>): string => {
  if (records.length === 0) return "no records match"
  const rows = [
    ["KEY", "SCOPE", "TOOL", "STATE", "ATTEMPT", "UPDATED"],
    ...records.map((r) => [
      short(r.key),
      cut(r.scope, 24),
      cut(r.tool, 24),
      r.status,
      `${r.attempt}/${r.maxAttempts}`,
      r.updatedAt.toISOString()
    ])
  ]
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)))
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join("  ").trimEnd()).join("\n")
}

const excerpt = (text: string | null, width = 400): string => text === null ? "(none)" : cut(text, width)

/**
 * One record's detail, readable: its state and attempts, downstream key, arguments, result or
 * error (bounded), times, resolutions and journal; for an `unknown` record, how to resolve it.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderDetail = (detail: Records.Detail): string => {
  const r = detail.record
  const lines = [
    `record ${r.key}`,
    `  scope        ${r.scope}`,
    `  tool         ${r.tool}`,
    `  state        ${r.status}${
      r.previous === null ? "" : ` (was ${r.previous})`
    }, attempt ${r.attempt} of ${r.maxAttempts}, recovery ${r.recovery}, fence ${r.fence}`,
    `  downstream   ${IdempotencyKey.downstreamKey(r.key, r.generation)}`,
    `  arguments    ${excerpt(r.argumentsText)}`,
    `  result       ${excerpt(r.resultText)}`,
    `  error        ${r.error === null ? "(none)" : cut(JSON.stringify(r.error), 400)}`,
    `  created      ${r.createdAt.toISOString()}`,
    `  updated      ${r.updatedAt.toISOString()}`,
    r.leaseExpiresAt === null
      ? `  expires      ${r.expiresAt.toISOString()} (retention)`
      : `  lease until  ${r.leaseExpiresAt.toISOString()}`
  ]
  if (detail.resolutions.length > 0) {
    lines.push("resolutions")
    for (const a of detail.resolutions) {
      lines.push(
        `  ${a.at.toISOString()}  ${
          a.status === "released" ? "not applied" : a.status === "succeeded" ? "applied" : a.status
        } at fence ${a.fence} by ${a.by}${a.reason === null ? "" : `: ${cut(a.reason, 200)}`}`
      )
    }
  }
  if (detail.journal.length > 0) {
    lines.push("journal")
    for (const e of detail.journal) {
      lines.push(`  ${e.at.toISOString()}  attempt ${e.attempt} at fence ${e.fence}: ${e.outcome}`)
    }
  }
  if (r.status === "unknown") {
    lines.push(
      "",
      `The outcome is unknown: look the call up downstream by ${
        IdempotencyKey.downstreamKey(r.key, r.generation)
      }, then`,
      `  toolgate resolve ${short(r.key)} --applied [--result JSON]          (it happened: replay that result)`,
      `  toolgate resolve ${short(r.key)} --not-applied --reason TEXT      (it did not: run it on its next delivery)`
    )
  }
  return lines.join("\n")
}

/**
 * What a resolution did, in one paragraph.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderResolved = (resolved: Records.Resolved): string => {
  const { audit, record } = resolved
  const head = `resolved ${record.key} (${record.tool}, scope ${record.scope}) as ${
    audit.status === "released" ? "not applied" : "applied"
  } at fence ${audit.fence}, by ${audit.by}${audit.reason === null ? "" : `: ${audit.reason}`}`
  if (audit.status === "succeeded") return `${head}\nevery later call of this intent replays its result`
  return record.attempt >= record.maxAttempts
    ? `${head}\nreleased, but its ${record.maxAttempts} attempts are used up: its next delivery fails with AttemptsExhausted`
    : `${head}\nreleased: its next delivery runs it again (attempt ${record.attempt + 1} of ${record.maxAttempts})`
}

/**
 * An outbox message as one JSON object: fences and ids as decimal strings, instants as ISO 8601,
 * the payload parsed.
 *
 * @since 0.1.0
 * @category json
 */
export const messageJson = (message: Outbox.OutboxMessage) => ({
  id: message.id.toString(),
  deliveryKey: message.deliveryKey,
  key: message.key,
  scope: message.scope,
  ordinal: message.ordinal,
  kind: message.kind,
  destination: message.destination,
  orderingKey: message.orderingKey,
  status: message.status,
  attempts: message.attempts,
  lastError: message.lastError,
  payload: json(message.payload),
  availableAt: iso(message.availableAt),
  leaseExpiresAt: iso(message.leaseExpiresAt),
  createdAt: iso(message.createdAt),
  updatedAt: iso(message.updatedAt),
  deliveredAt: iso(message.deliveredAt)
})

/**
 * Outbox messages as a table, oldest first: id, the call's short key and the ordinal, destination,
 * state, attempts, last change, last error.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderMessages = (messages: ReadonlyArray<Outbox.OutboxMessage>): string => {
  if (messages.length === 0) return "no messages match"
  const rows = [
    ["ID", "CALL", "#", "DESTINATION", "STATE", "ATTEMPTS", "UPDATED", "LAST ERROR"],
    ...messages.map((m) => [
      m.id.toString(),
      short(m.key),
      String(m.ordinal),
      cut(m.kind === "named" ? `(${m.destination})` : m.destination, 40),
      m.status,
      String(m.attempts),
      m.updatedAt.toISOString(),
      m.lastError === null ? "" : cut(m.lastError, 60)
    ])
  ]
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)))
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join("  ").trimEnd()).join("\n")
}

/**
 * The follow-up lines of one record's detail (none when it has no messages).
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderRecordMessages = (messages: ReadonlyArray<Outbox.OutboxMessage>): string =>
  messages.length === 0 ? "" : [
    "follow-ups",
    ...messages.map((m) =>
      `  #${m.ordinal} ${
        m.kind === "named" ? `(${m.destination})` : cut(m.destination, 60)
      }  ${m.status}, ${m.attempts} attempt${m.attempts === 1 ? "" : "s"}${
        m.lastError === null ? "" : `: ${cut(m.lastError, 120)}`
      }  key ${m.deliveryKey}`
    )
  ].join("\n")
