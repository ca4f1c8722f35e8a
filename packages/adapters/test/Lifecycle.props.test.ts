/**
 * The lifecycle rules as properties, for every provider, under any chunking of the body
 * (`test/fixtures/README.md` §2, "One body, one lifecycle", and §3–§6):
 *
 * 1. Nothing after the end event changes the outcome, except into `ToolCallProtocolError`: a
 *    body cut right after its end event, followed by anything at all (events of any fixture of
 *    any provider, random JSON, copies of its own events, pings, comments), keeps that body's
 *    outcome, text and finish reason, or fails with `ToolCallProtocolError` and releases nothing.
 *    Gemini has no end event: behind its finish chunk text and errors are still read (§2: a
 *    provider error after a success finish is a `ProviderStreamError`), so there the property is
 *    that nothing behind the finish chunk releases a call the body did not finish, or changes
 *    the finish reason.
 * 2. A splice of two valid bodies never completes: a whole body (through its end event) followed
 *    by events of another (or the same) body; for Anthropic and Responses also a body's start
 *    followed by another body from its start (a second `message_start` / response id). Gemini has
 *    no end event, no start and no ids, so there it is a whole body followed by another body's
 *    events that carry tool data.
 * 3. Fuzz: valid bodies spliced, reordered and duplicated at random never release a call unless
 *    the result is still exactly one finished lifecycle, and then release exactly the original's
 *    calls. The oracle (`Lifecycle.isOneLifecycle`) is independent of the implementation: it
 *    compares the mutated body's blocks, by their text, with the original's, allowing only the
 *    differences the rules make harmless (see its docs). The mutations are those that act on the
 *    lifecycle: inert blocks anywhere; a copy of the end or start event anywhere; an event moved
 *    across the end (behind it, or the end moved earlier); another body's events behind the end,
 *    or (Anthropic, Responses) another body from its start mixed in anywhere before it; the end or
 *    the start dropped (from the untouched body). Reorders inside one well-formed lifecycle (two argument deltas swapped)
 *    are not among them: no client can tell them from a genuine stream, and for Gemini and chat,
 *    which name no response, neither can another body's events mixed in before the end.
 */
import { describe, expect, it } from "@effect/vitest"
import { Provider } from "@toolgate/adapters"
import { Fixture } from "@toolgate/testing"
import { Arbitrary, Effect, Schema } from "effect"
import * as Lifecycle from "./support/Lifecycle.js"

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

/** Read sizes in bytes: mostly 1–7 (inside characters, CRLF pairs and event boundaries), some large. */
const readSizes = Arbitrary.array(
  Arbitrary.flatMap(int(0, 4), (kind) => kind === 0 ? int(8, 4096) : int(1, 7)),
  { minLength: 1, maxLength: 16 }
)

const all = Fixture.loadAll()
/** Every block of every fixture, labelled for the provider it came from. */
const foreign = all.flatMap((f) => Lifecycle.labelled(f))

/** What a tail block is made of: 0 a block of any fixture, 1 random JSON, 2 a copy of the body's own, 3 inert. */
const tailBlock = Arbitrary.all({ source: int(0, 3), which: int(0, 1_000_000), json: Arbitrary.schema(Schema.Json) })

const calls = (r: Fixture.Outcome) => r.toolCalls

for (const provider of Provider.names) {
  const fixtures = Fixture.load(provider)
  /** Fixtures with an end event, cut right after it. */
  const ended = fixtures.flatMap((fixture) => {
    const list = Lifecycle.labelled(fixture)
    const end = Lifecycle.endOf(list)
    return end < 0 ? [] : [{ fixture, list: list.slice(0, end + 1) }]
  })

  describe(`${provider}: nothing after the end event changes the outcome`, () => {
    it.effect.prop(
      "a body cut after its end event, followed by anything, keeps its outcome or fails with ToolCallProtocolError",
      {
        pick: int(0, ended.length - 1),
        tail: Arbitrary.array(tailBlock, { minLength: 1, maxLength: 6 }),
        sizes: readSizes
      },
      ({ pick, sizes, tail }) =>
        Effect.gen(function*() {
          const { list } = ended[pick]!
          const inert = Lifecycle.inertBlocks(provider)
          const extra = tail.map(({ json, source, which }): Lifecycle.Labelled =>
            source === 0
              ? foreign[which % foreign.length]!
              : source === 1
              ? Lifecycle.label(provider, [`data: ${JSON.stringify(json)}`])
              : source === 2
              ? list[which % list.length]!
              : inert[which % inert.length]!
          )
          const base = yield* Fixture.run(provider, [Lifecycle.body(list)])
          const result = yield* Fixture.run(provider, Fixture.chunk(Lifecycle.body([...list, ...extra]), sizes))
          if (provider === "gemini") {
            // No end event: behind the finish chunk text and errors still count, but no call
            // the body did not finish is released and the finish reason stays.
            expect(result.finishReason).toBe(base.finishReason)
            if (result.outcome === "complete") expect(calls(result)).toEqual(calls(base))
            else expect(result.released).toBe(false)
            return
          }
          expect([result.text, result.finishReason]).toEqual([base.text, base.finishReason])
          if (result.outcome === "error" && result.error !== base.error) {
            expect([result.error, result.released]).toEqual(["ToolCallProtocolError", false])
          } else {
            expect(Fixture.outcome(result)).toEqual(Fixture.outcome(base))
          }
        }),
      { arbitrary: { runs: 150 } }
    )
  })

  describe(`${provider}: a splice of two valid bodies never completes`, () => {
    const bodies = fixtures.map((fixture) => ({ fixture, list: Lifecycle.labelled(fixture) }))
    const startId = (list: ReadonlyArray<Lifecycle.Labelled>) => list.find((b) => b.kind === "start")?.text
    it.effect.prop(
      provider === "gemini"
        ? "a whole body followed by another body's events that carry tool data"
        : "a whole body followed by events of another body" +
          (provider === "openai-chat" ? "" : ", or a body's start followed by another body from its start"),
      {
        a: int(0, 1_000_000),
        b: int(0, 1_000_000),
        from: int(0, 1_000_000),
        count: int(1, 1_000_000),
        form: Arbitrary.schema(Schema.Boolean),
        sizes: readSizes
      },
      ({ a, b, count, form, from, sizes }) =>
        Effect.gen(function*() {
          const first = ended[a % ended.length]!.list
          const other = bodies[b % bodies.length]!.list
          let spliced: Array<Lifecycle.Labelled>
          if (form && (provider === "anthropic" || provider === "openai-responses")) {
            // A's start (and up to the whole of A before its end), then B from its start. A is a
            // body with a start event (one that opens with content has none to cut after).
            const withStart = ended.filter((x) => startId(x.list) !== undefined)
            const opened = withStart[a % withStart.length]!.list
            const candidates = bodies.filter((x) =>
              startId(x.list) !== undefined && startId(x.list) !== startId(opened)
            )
            const second = candidates[b % candidates.length]!.list
            const aStart = opened.findIndex((x) => x.kind === "start")
            const aEnd = Lifecycle.endOf(opened)
            const cut = aStart + 1 + (from % (aEnd - aStart))
            const bStart = second.findIndex((x) => x.kind === "start")
            spliced = [
              ...opened.slice(0, cut),
              ...second.slice(bStart, bStart + 1 + (count % (second.length - bStart)))
            ]
          } else {
            // A whole, then a non-empty slice of B with a live event (tool data, for Gemini).
            const live = other.flatMap((x, i) =>
              (provider === "gemini"
                  ? x.toolData
                  : x.kind !== "inert" && !(provider === "openai-chat" && x.kind === "end"))
                ? [i]
                : []
            )
            if (live.length === 0) return
            const at = live[from % live.length]!
            const start = at - (count % (at + 1))
            spliced = [...first, ...other.slice(start, at + 1)]
          }
          const result = yield* Fixture.run(provider, Fixture.chunk(Lifecycle.body(spliced), sizes))
          expect([result.outcome, result.released, result.toolCalls]).toEqual(["error", false, []])
        }),
      { arbitrary: { runs: 150 } }
    )
  })

  describe(`${provider}: fuzz of spliced, reordered and duplicated events`, () => {
    const complete = fixtures.filter((f) => f.expected.outcome === "complete")
      .map((fixture) => ({ fixture, list: Lifecycle.labelled(fixture) }))
      .filter((x) => Lifecycle.endOf(x.list) >= 0)
    const others = fixtures.map((fixture) => Lifecycle.labelled(fixture))
    const hasStart = provider === "anthropic" || provider === "openai-responses"
    const Op = Arbitrary.all({
      op: Arbitrary.schema(
        Schema.Literals([
          "inert",
          "dupEnd",
          "dupStart",
          "moveAcross",
          "spliceAfter",
          "spliceInto",
          "dropEnd",
          "dropStart"
        ])
      ),
      a: int(0, 1_000_000),
      b: int(0, 1_000_000),
      c: int(0, 1_000_000)
    })
    type Op = typeof Op extends Arbitrary.Arbitrary<infer A> ? A : never

    /** Applies one mutation; those that do not apply to this provider or body change nothing. */
    const apply = (
      list: Array<Lifecycle.Labelled>,
      original: ReadonlyArray<Lifecycle.Labelled>,
      { a, b, c, op }: Op
    ): Array<Lifecycle.Labelled> => {
      const end = Lifecycle.endOf(list)
      const start = list.findIndex((x) => x.kind === "start")
      const insert = (at: number, blocks: ReadonlyArray<Lifecycle.Labelled>) => [
        ...list.slice(0, at),
        ...blocks,
        ...list.slice(at)
      ]
      switch (op) {
        case "inert": {
          const inert = Lifecycle.inertBlocks(provider)
          return insert(b % (list.length + 1), [inert[a % inert.length]!])
        }
        case "dupEnd":
          return end < 0 ? list : insert(b % (list.length + 1), [list[end]!])
        case "dupStart":
          return !hasStart || start < 0 ? list : insert(b % (list.length + 1), [list[start]!])
        case "moveAcross": {
          if (end < 0) return list
          if (a % 2 === 0 && end > 0) {
            // An event from before the end to a place behind it.
            const from = b % end
            const moved = list[from]!
            const rest = list.filter((_, i) => i !== from)
            const newEnd = end - 1
            const to = newEnd + 1 + (c % (rest.length - newEnd))
            return [...rest.slice(0, to), moved, ...rest.slice(to)]
          }
          // The end event to an earlier place.
          const to = b % (end + 1)
          const rest = list.filter((_, i) => i !== end)
          return [...rest.slice(0, to), list[end]!, ...rest.slice(to)]
        }
        case "spliceAfter": {
          if (end < 0) return list
          const other = others[a % others.length]!
          const slice = other.slice(0, 1 + (b % other.length))
          return insert(end + 1 + (c % (list.length - end)), slice)
        }
        case "spliceInto": {
          if (!hasStart || end < 0) return list
          const id = original.find((x) => x.kind === "start")?.text
          const candidates = others.filter((o) => o.some((x) => x.kind === "start" && x.text !== id))
          const other = candidates[a % candidates.length]!
          const from = other.findIndex((x) => x.kind === "start")
          const slice = other.slice(from, from + 1 + (b % (other.length - from)))
          return insert(c % (end + 1), slice)
        }
        case "dropEnd":
          return end < 0 ? list : list.filter((_, i) => i !== end)
        case "dropStart":
          return !hasStart || start < 0 ? list : list.filter((_, i) => i !== start)
      }
    }

    it.effect.prop(
      "no call is released from a body that is not exactly one finished lifecycle; from one, exactly the original's",
      {
        pick: int(0, complete.length - 1),
        ops: Arbitrary.array(Op, { minLength: 1, maxLength: 4 }),
        sizes: readSizes,
        auto: Arbitrary.schema(Schema.Boolean)
      },
      ({ auto, ops, pick, sizes }) =>
        Effect.gen(function*() {
          const { fixture, list } = complete[pick]!
          let mutated: Array<Lifecycle.Labelled> = [...list]
          // A drop is applied only to the untouched body. After a copy of the end, dropping one
          // end moves everything between the two across it: a reorder inside the lifecycle,
          // which the rules cannot see. After another body's events, dropping the end joins the
          // two with no marker between them, which for Gemini (no end event, no ids) is
          // indistinguishable from one response.
          let touched = false
          for (const op of ops) {
            const drop = op.op === "dropEnd" || op.op === "dropStart"
            if (touched && drop) continue
            const next = apply(mutated, list, op)
            if (!drop && next !== mutated) touched = true
            mutated = next
          }
          const one = Lifecycle.isOneLifecycle(provider, list, mutated)
          const result = yield* Fixture.run(auto ? "auto" : provider, Fixture.chunk(Lifecycle.body(mutated), sizes))
          const summary = { ops: ops.map((o) => o.op), one }
          if (one) {
            expect({ ...summary, outcome: result.outcome, error: result.error, calls: calls(result) }).toEqual({
              ...summary,
              outcome: "complete",
              error: null,
              calls: fixture.expected.toolCalls
            })
          } else {
            expect({ ...summary, outcome: result.outcome, released: result.released }).toEqual({
              ...summary,
              outcome: "error",
              released: false
            })
          }
        }),
      { arbitrary: { runs: 400 } }
    )

    it("the oracle accepts the original and the harmless differences, and rejects a body behind the end", () => {
      for (const { list } of complete) {
        expect(Lifecycle.isOneLifecycle(provider, list, list)).toBe(true)
        const inert = Lifecycle.inertBlocks(provider)
        expect(Lifecycle.isOneLifecycle(provider, list, [inert[0]!, ...list, ...inert])).toBe(true)
        const end = Lifecycle.endOf(list)
        const first = list.find((b) => b.kind !== "inert")!
        expect(Lifecycle.isOneLifecycle(provider, list, [...list.slice(0, end + 1), first, ...list.slice(end + 1)]))
          .toBe(provider === "gemini" && !first.toolData && !first.error)
      }
    })
  })
}
