/**
 * `NotAnEventStream` (`ModelStreamError`): a body that holds no SSE line at all (a non-streaming JSON response,
 * a README, an HTML page) fails the decoded stream with that typed error, for every decoder and
 * `auto`, however the body is cut into reads. Everything that is an event stream is not: a body
 * of comments only, a body cut short (even inside its first line, or before its first byte), a
 * blank body, and Gemini's unframed `{"error": …}` body (`test/fixtures/README.md` §1), which is a
 * `ProviderStreamError`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Provider } from "@toolgate/adapters"
import { Assembler, ModelStreamError } from "@toolgate/core"
import { Fixture, NonStreaming } from "@toolgate/testing"
import { Arbitrary, Data, Effect, Schema, Stream } from "effect"

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

const modes: ReadonlyArray<Provider.Name | "auto"> = [...Provider.names, "auto"]

/** Read sizes: mostly 1–7 bytes (inside characters and CRLF pairs), some larger. */
const readSizes = Arbitrary.array(
  Arbitrary.flatMap(int(0, 3), (kind) => kind === 0 ? int(8, 512) : int(1, 7)),
  { minLength: 1, maxLength: 16 }
)

/** The typed failure of a body decoded as `mode` and assembled, read in `reads`. */
const failureOf = (mode: Provider.Name | "auto", reads: ReadonlyArray<Uint8Array>) =>
  Stream.fromIterable(reads).pipe(Provider.decode(mode), Assembler.assemble(), Effect.flip)

const { anthropicMessage, chatCompletion, geminiArray, responses: responsesBody } = NonStreaming
const geminiBody = NonStreaming.geminiGenerateContent
const jsonBodies = [
  ["chat.completion", chatCompletion],
  ["a Responses body", responsesBody],
  ["an Anthropic message", anthropicMessage],
  ["a Gemini generateContent body", geminiBody],
  ["a Gemini stream without alt=sse (a JSON array)", geminiArray],
  ["JSON after a BOM", `\uFEFF${anthropicMessage}\n`]
] as const

const textBodies = [
  ["a README", "# toolgate\n\ntoolgate sits between an LLM's streamed response and the systems it mutates.\n"],
  ["an HTML page", "<!DOCTYPE html>\r\n<html><head><title>502 Bad Gateway</title></head>\r\n</html>\r\n"],
  ["a line with no line end", "Internal Server Error"],
  ["text that looks like JSON at one end only", "{ not json, and no closing brace"],
  ["a field name too long to be one", "database: postgres\nevents: 3\n"],
  ["field names after spaces", "  data: {}\n\n"],
  [
    "a partial BOM before a field",
    Uint8Array.of(0xef, 0xbb, 0x64, 0x61, 0x74, 0x61, 0x3a, 0x20, 0x7b, 0x7d, 0x0a, 0x0a)
  ]
] as const

const asBytes = (body: string | Uint8Array) => typeof body === "string" ? Fixture.bytes(body) : body

describe("NotAnEventStream", () => {
  for (const [label, body] of jsonBodies) {
    it.effect(`${label}: found json, for every decoder, at every split into two reads`, () =>
      Effect.gen(function*() {
        const bytes = asBytes(body)
        for (const mode of modes) {
          for (let at = 0; at <= bytes.length; at += 7) {
            const error = yield* failureOf(mode, [bytes.subarray(0, at), bytes.subarray(at)])
            expect(error).toBeInstanceOf(ModelStreamError.NotAnEventStream)
            expect(error).toMatchObject({ found: "json", contentType: null })
          }
        }
        const error = yield* failureOf("openai-chat", [bytes]) as Effect.Effect<ModelStreamError.NotAnEventStream>
        expect(error.excerpt).toBe(new TextDecoder().decode(bytes).trim().slice(0, 160))
        expect(error.message).toMatch(
          /^a JSON body, not an event stream; did the request set stream: true\? \(the body starts "/
        )
        expect(error.message).not.toContain("\n")
      }))
  }

  for (const [label, body] of textBodies) {
    it.effect(`${label}: found text, for every decoder`, () =>
      Effect.gen(function*() {
        for (const mode of modes) {
          const error = yield* failureOf(mode, Fixture.chunk(asBytes(body), [3]))
          expect(error).toBeInstanceOf(ModelStreamError.NotAnEventStream)
          expect(error).toMatchObject({ found: "text" })
          expect(error.message).toMatch(/^no server-sent events found/)
        }
      }))
  }

  it.effect("the excerpt is the body's start, at most 160 characters, never half a surrogate pair", () =>
    Effect.gen(function*() {
      // Character 160 would be the first half of an emoji: the excerpt stops before it.
      const body = `a${"😀".repeat(200)}\n`
      const error = yield* failureOf("anthropic", [Fixture.bytes(body)]) as Effect.Effect<
        ModelStreamError.NotAnEventStream
      >
      expect(error.excerpt).toBe(`a${"😀".repeat(79)}`)
      expect(error.message.length).toBeLessThanOrEqual(300)
    }))

  it.effect("a body with no SSE line within the event-size limit gets its verdict there and is read no further", () =>
    Effect.gen(function*() {
      class ReadTooFar extends Data.TaggedError("ReadTooFar") {}
      const piece = Fixture.bytes(`{"padding":"${"x".repeat(4096)}`)
      const endless = (limit: number) =>
        Stream.fromIterable(Array.from({ length: Math.ceil(limit / piece.length) + 1 }, () => piece)).pipe(
          Stream.concat(Stream.fail(new ReadTooFar()))
        )
      for (const mode of modes) {
        const small = yield* endless(100_000).pipe(
          Provider.decode(mode, { maxEventSize: 100_000 }),
          Assembler.assemble(),
          Effect.flip
        )
        expect(small).toMatchObject({ _tag: "NotAnEventStream", found: "json" })
      }
      // The default limit (16 MiB): a 17 MB single-line JSON body is not an oversized SSE event.
      const big = yield* endless(16 * 1024 * 1024).pipe(Provider.decode("gemini"), Assembler.assemble(), Effect.flip)
      expect(big).toMatchObject({ _tag: "NotAnEventStream", found: "json" })
      // An SSE line first: the same bytes after it are one oversized event.
      const stream = Stream.concat(Stream.make(Fixture.bytes("data: {\"a\":\"")), endless(100_000))
      const oversized = yield* stream.pipe(
        Provider.decode("openai-chat", { maxEventSize: 100_000 }),
        Assembler.assemble(),
        Effect.flip
      )
      expect(oversized).toMatchObject({ _tag: "MalformedStreamEvent" })
    }))

  describe("not raised for event streams, cut ones and blank bodies", () => {
    const streams = [
      ["comments only", ": ping\n\n: keep-alive\r\n\r\n", "IncompleteStream"],
      ["no bytes at all", "", "IncompleteStream"],
      ["blank lines and spaces", "\n\r\n  \t\n", "IncompleteStream"],
      ["a body cut inside its first field name", "dat", "IncompleteStream"],
      ["a body cut inside its first line", "data: {\"choi", "IncompleteStream"],
      ["a lone field name", "data\n", "IncompleteStream"],
      ["an id line only", "id: 7\n", "IncompleteStream"],
      ["a retry line only", "retry: 1000\n\n", "IncompleteStream"],
      ["a BOM then a comment", "\uFEFF: hi\n\n", "IncompleteStream"],
      ["a garbage line before a comment", "hello\n: ping\n\n", "IncompleteStream"]
    ] as const
    for (const [label, body, error] of streams) {
      it.effect(label, () =>
        Effect.gen(function*() {
          for (const mode of modes) {
            for (const sizes of [[], [1], [2]]) {
              const failure = yield* failureOf(mode, Fixture.chunk(Fixture.bytes(body), sizes))
              expect([mode, failure._tag]).toEqual([mode, error])
            }
          }
        }))
    }

    it.effect("a Gemini body that is only an unframed {\"error\": …} object is a ProviderStreamError (gemini, auto)", () =>
      Effect.gen(function*() {
        const body = "{\r\n  \"error\": {\r\n    \"code\": 503,\r\n    \"message\": \"The model is overloaded.\",\r\n" +
          "    \"status\": \"UNAVAILABLE\"\r\n  }\r\n}"
        for (const mode of ["gemini", "auto"] as const) {
          for (const sizes of [[], [1], [5]]) {
            const failure = yield* failureOf(mode, Fixture.chunk(Fixture.bytes(body), sizes))
            expect(failure).toMatchObject({ _tag: "ProviderStreamError", code: "UNAVAILABLE" })
          }
        }
      }))
  })

  it.effect.prop(
    "any non-blank body without an SSE line is NotAnEventStream, for every decoder and any reads",
    {
      lines: Arbitrary.array(Arbitrary.schema(Schema.String), { minLength: 1, maxLength: 8 }),
      braces: Arbitrary.schema(Schema.Literals(["none", "object", "array"])),
      eol: Arbitrary.schema(Schema.Literals(["\n", "\r\n", "\r"])),
      sizes: readSizes
    },
    ({ braces, eol, lines, sizes }) =>
      Effect.gen(function*() {
        // A line that starts with `x` names the field `x…`: never an SSE line, never JSON.
        const inner = lines.map((line) => `x${line.replace(/[\r\n]/g, " ")}`).join(eol)
        const body = braces === "object" ? `{${inner}}` : braces === "array" ? `[${inner}]` : inner
        for (const mode of modes) {
          const failure = yield* failureOf(mode, Fixture.chunk(Fixture.bytes(body), sizes))
          expect(failure).toBeInstanceOf(ModelStreamError.NotAnEventStream)
          expect(failure).toMatchObject({ found: braces === "none" ? "text" : "json" })
        }
      }),
    { arbitrary: { runs: 60 } }
  )

  it.effect.prop(
    "a fixture cut anywhere, read in any reads, is never NotAnEventStream",
    {
      pick: int(0, Fixture.loadAll().length - 1),
      at: int(0, 1_000_000),
      sizes: readSizes,
      auto: Arbitrary.schema(Schema.Boolean)
    },
    ({ at, auto, pick, sizes }) =>
      Effect.gen(function*() {
        const fixture = Fixture.loadAll()[pick]!
        const cut = fixture.bytes.subarray(0, Math.round((at / 1_000_000) * fixture.bytes.length))
        const result = yield* Fixture.run(auto ? "auto" : fixture.provider, Fixture.chunk(cut, sizes))
        expect(result.error).not.toBe("NotAnEventStream")
      }),
    { arbitrary: { runs: 150 } }
  )
})
