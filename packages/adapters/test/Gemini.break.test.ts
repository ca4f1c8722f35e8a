/**
 * Vertex AI streamed arguments (`partialArgs`) are built inside the Gemini decoder, not as
 * arguments text, so the assembler's per-call size limit never saw them until the call closed: a
 * call could grow without bound, and a body cut before the close was `IncompleteStream` instead of
 * `ArgumentsTooLarge` "as soon as the limit is crossed".
 */
import { describe, expect, it } from "@effect/vitest"
import { Provider } from "@toolgate/adapters"
import { Assembler } from "@toolgate/core"
import { Fixture } from "@toolgate/testing"
import { Effect, Stream } from "effect"

const open = { candidates: [{ content: { parts: [{ functionCall: { name: "create_task", willContinue: true } }] } }] }
const piece = (text: string) => ({
  candidates: [{
    content: {
      parts: [{
        functionCall: {
          partialArgs: [{ jsonPath: "$.notes", stringValue: text, willContinue: true }],
          willContinue: true
        }
      }]
    }
  }]
})
const close = { candidates: [{ content: { parts: [{ functionCall: {} }] } }] }
const stop = { candidates: [{ content: { parts: [{ text: "" }] }, finishReason: "STOP" }] }

const body = (pieces: number, size: number, tail: ReadonlyArray<unknown>) =>
  Fixture.sse(
    [open, ...Array.from({ length: pieces }, () => piece("n".repeat(size))), ...tail].map((data) => ({ data })),
    "\r\n"
  )

describe("Gemini: streamed arguments count against the size limit as they arrive", () => {
  it.effect("a streamed call past 1 MiB fails with ArgumentsTooLarge before it closes", () =>
    Effect.gen(function*() {
      for (const mode of ["gemini", "auto"] as const) {
        const cut = yield* Fixture.runText(mode, body(1100, 1000, []))
        expect(cut.failure, mode).toMatchObject({ _tag: "ArgumentsTooLarge", index: 0, toolName: "create_task" })
        const closed = yield* Fixture.runText(mode, body(1100, 1000, [close, stop]))
        expect(closed.error, mode).toBe("ArgumentsTooLarge")
      }
    }))

  it.effect("the limit is the assembler's: a raised limit lets the same call through", () =>
    Effect.gen(function*() {
      const turn = yield* Stream.make(Fixture.bytes(body(1100, 1000, [close, stop]))).pipe(
        Provider.decode("gemini"),
        Assembler.assemble({ maxArgumentsBytes: 4 * 1024 * 1024 })
      )
      expect((turn.toolCalls[0]!.arguments as { notes: string }).notes.length).toBe(1_100_000)
    }))

  it.effect("a streamed call under the limit completes", () =>
    Effect.gen(function*() {
      const result = yield* Fixture.runText("gemini", body(1000, 1000, [close, stop]))
      expect(result.outcome).toBe("complete")
    }))
})
