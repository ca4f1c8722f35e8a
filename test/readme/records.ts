/**
 * A code example of `README.md`, verbatim between the markers, so that `tsc -b` type-checks it
 * (`test/readme.test.ts` checks that the README still holds it).
 */
// begin: README.md
import { IdempotencyStore, Records } from "@toolgate/runtime"
import { Effect } from "effect"

const program = Effect.gen(function*() {
  const parked = yield* Records.list({ status: ["unknown"], scope: "acme", limit: 20 })
  for (const record of parked) {
    const { journal, resolutions } = yield* Records.show({ key: record.key, scope: record.scope })
    yield* Effect.log(record.tool, record.argumentsText, journal.length, resolutions.length)
  }
  // RecordNotUnknown, RecordChanged, RecordNotFound, AmbiguousKey, InvalidRecordRequest are typed
  const resolved = yield* Records.resolve(
    { key: "tg1:sha256:0ec1a22bf8a9" },
    { outcome: { _tag: "Applied", result: `{"id":"T-118"}` }, by: "alice", reason: "task T-118 is in the CRM" }
  )
  const purged = yield* Records.purge({ olderThanMs: 7 * 24 * 3_600_000 })
  return { resolved, purged }
}).pipe(Effect.provide(IdempotencyStore.layerMemory)) // or layerSql() over PgClient / EmbeddedPostgres
// end: README.md

export { program }
