/**
 * `toolgate corpus`: every capture of a fixture corpus through `inspect`, one row each, checked
 * against its `expected.json` (`ExpectedResult`) when one sits beside it.
 *
 * A corpus is a folder of provider folders (`openai-chat/`, `anthropic/`, …) holding
 * `NAME.sse` captures; the folder name is the provider. Each capture is read as a stream, with the
 * same input checks as `inspect` (`Capture.open`): a capture that fails them, or that is not an
 * event stream, stops the run with a `CaptureError` naming it; so does an `expected.json` that does
 * not match its Schema.
 *
 * @since 0.1.0
 */
import { ExpectedResult, Provider } from "@toolgate/adapters"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import { isDeepStrictEqual } from "node:util"
import * as Capture from "./Capture.js"
import { inspect, type InspectResult } from "./Inspect.js"

/**
 * One inspected capture.
 *
 * @since 0.1.0
 * @category models
 */
export interface Row {
  readonly capture: string
  readonly provider: Provider.Name
  readonly result: InspectResult
  /** `true`/`false` when an `expected.json` was found, `undefined` otherwise. */
  readonly matchesExpected: boolean | undefined
}

const compare = (result: InspectResult, expected: ExpectedResult.Outcome): boolean =>
  result.outcome === expected.outcome &&
  result.finishReason === expected.finishReason &&
  result.text === expected.text &&
  (result.error?._tag ?? null) === expected.error &&
  isDeepStrictEqual(
    result.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
    expected.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }))
  )

/**
 * Inspects every capture under `dir`, in file-name order.
 *
 * @since 0.1.0
 * @category running
 */
export const run = Effect.fnUntraced(function*(dir: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const rows: Array<Row> = []
  for (const provider of Provider.names) {
    const folder = path.join(dir, provider)
    if (!(yield* fs.exists(folder))) continue
    const files = (yield* fs.readDirectory(folder)).filter((f) => f.endsWith(".sse")).toSorted()
    for (const file of files) {
      const capture = path.join(folder, file)
      const result = yield* inspect(yield* Capture.open(capture), { provider }).pipe(
        Effect.catchTag(
          "NotAnEventStream",
          (e) => Effect.fail(new Capture.CaptureError({ file: capture, reason: e.message }))
        )
      )
      const expectedPath = ExpectedResult.pathOf(capture)
      const matchesExpected = (yield* fs.exists(expectedPath))
        ? compare(
          result,
          yield* fs.readFileString(expectedPath).pipe(
            Effect.flatMap(ExpectedResult.decode),
            Effect.mapError((e) =>
              new Capture.CaptureError({
                file: expectedPath,
                reason: `not a readable expected result: ${e.message.split("\n")[0]}`
              })
            )
          )
        )
        : undefined
      rows.push({ capture: file.replace(/\.sse$/, ""), provider, result, matchesExpected })
    }
  }
  return rows
})

/**
 * The table `toolgate corpus` prints, with a summary line.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (rows: ReadonlyArray<Row>): string => {
  const header = ["capture", "provider", "outcome", "finish reason", "tool calls", "error", "expected"]
  const body = rows.map((r) => [
    r.capture.replace(`${r.provider}__`, ""),
    r.provider,
    r.result.outcome,
    r.result.finishReason ?? "-",
    String(r.result.toolCalls.length),
    r.result.error?._tag ?? "-",
    r.matchesExpected === undefined ? "-" : r.matchesExpected ? "match" : "MISMATCH"
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()
  const complete = rows.filter((r) => r.result.outcome === "complete").length
  const checked = rows.filter((r) => r.matchesExpected !== undefined)
  const matched = checked.filter((r) => r.matchesExpected).length
  const calls = rows.reduce((n, r) => n + r.result.toolCalls.length, 0)
  return [
    line(header),
    line(widths.map((w) => "-".repeat(w))),
    ...body.map(line),
    "",
    `${rows.length} captures: ${complete} complete (${calls} tool calls released), ${
      rows.length - complete
    } typed errors; ${matched}/${checked.length} match their expected result`
  ].join("\n")
}
