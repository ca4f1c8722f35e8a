/**
 * The HTTP transport against the fake provider, over real HTTP on 127.0.0.1 with the real clock:
 * the fixture corpus replayed over the wire, the three time budgets, both kinds of abort, HTTP
 * errors before the stream, cut connections, and the API key kept out of errors, logs and spans.
 * Every fault path checks that the client left no socket open on the server.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpTransport } from "@toolgate/adapters"
import { Assembler, AssemblyError, ModelStreamError } from "@toolgate/core"
import { FakeProvider, Fixture, Random } from "@toolgate/testing"
import { Cause, Deferred, Effect, Exit, Fiber, Logger, Redacted, References, Stream, Tracer } from "effect"
import { HttpClient } from "effect/http"
import { TestClock } from "effect/testing"

const scenario: FakeProvider.Scenario = {
  text: "Sure. I will update the lead and schedule a follow-up call for next Tuesday morning.",
  toolCalls: [
    { name: "update_lead", arguments: { lead: "L-1042", status: "qualified", note: "asked for pricing in €" } },
    { name: "schedule_call", arguments: { lead: "L-1042", at: "2025-11-04T09:30:00Z", minutes: 30 } }
  ]
}

const request = (url: string, overrides?: Partial<HttpTransport.ProviderRequest>): HttpTransport.ProviderRequest => ({
  provider: "openai-chat",
  url: `${url}/v1/chat/completions`,
  body: { model: "gpt-4o", stream: true, messages: [{ role: "user", content: "hi" }] },
  ...overrides
})

/** Runs a stream to its end and gives its failure (the test fails if it succeeds). */
const failure = <A, E>(stream: Stream.Stream<A, E>) => Effect.flip(Stream.runDrain(stream))

/** The fake's single request record. */
const only = (fake: FakeProvider.Server) => Effect.map(fake.stats, (s) => s.log[s.log.length - 1]!)

describe("HttpTransport over HTTP", () => {
  it.live(
    "every fixture, replayed over HTTP at random chunkings, assembles as it does from the file",
    () =>
      Effect.gen(function*() {
        const fixtures = Fixture.loadAll()
        const byName = new Map(fixtures.map((f) => [f.name, f]))
        const fake = yield* FakeProvider.make({
          plan: (req) => {
            const body = req.body as { fixture: string; chunk: [number, number] }
            return { source: FakeProvider.bytes(byName.get(body.fixture)!.bytes), chunkBytes: body.chunk }
          }
        })
        const draw = Random.make(20251129).int
        const runs = fixtures.flatMap((fixture) => {
          const small = fixture.bytes.length > 16_384 ? draw(16, 256) : draw(1, 24)
          return [
            { fixture, chunk: [1, small] as [number, number] },
            { fixture, chunk: [draw(64, 512), draw(513, 4096)] as [number, number] }
          ]
        })
        // The transport's layer (and with it the client's connection pool) lives for the runs only.
        yield* Effect.gen(function*() {
          const transport = yield* HttpTransport.HttpTransport
          yield* Effect.forEach(runs, ({ chunk, fixture }) =>
            Effect.gen(function*() {
              const fromFile = yield* Fixture.run(fixture.provider, [fixture.bytes])
              // The fake ends every response, so reading on behind the end event costs nothing here;
              // with the default `afterEndMs`, bytes a loaded machine delivers later than that
              // behind the end event would not be read (test/end-of-stream.test.ts).
              const overHttp = yield* Fixture.runEvents(
                transport.stream(
                  request(fake.url, { provider: fixture.provider, body: { fixture: fixture.name, chunk } }),
                  { afterEndMs: 30_000 }
                ).pipe(Stream.orDie)
              )
              expect({ name: fixture.name, chunk, ...Fixture.outcome(overHttp) })
                .toEqual({ name: fixture.name, chunk, ...Fixture.outcome(fromFile) })
              expect(Fixture.outcome(overHttp)).toEqual(fixture.expected)
            }), { concurrency: 8, discard: true })
        }).pipe(Effect.provide(HttpTransport.layerNode))
        const stats = yield* fake.stats
        expect(stats.requests).toBe(runs.length)
        // The assembler stops reading at the first stream-level failure, so the client closes those
        // responses early: every request either completed or, for a failing fixture, was closed.
        for (const record of stats.log) {
          if (record.outcome === "completed") continue
          expect(record.outcome).toBe("client-closed")
          expect(byName.get(JSON.parse(record.key).fixture)!.expected.outcome).toBe("error")
        }
        expect(stats.outcomes.completed).toBeGreaterThan(runs.length / 2)
        // How many connections the pool keeps open in between depends on timing (a response closed
        // early may be drained and reused, or replaced); once the pool is released, none is left.
        expect(yield* fake.awaitOpenSockets(0)).toBe(0)
      }),
    120_000
  )

  it.live("a generated stream assembles to its scenario, with fresh ids on every response", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({
        plan: { source: FakeProvider.openAiChat(scenario), chunkBytes: [1, 40] }
      })
      const transport = yield* HttpTransport.HttpTransport
      const first = yield* transport.stream(request(fake.url)).pipe(Assembler.assemble())
      const second = yield* transport.stream(request(fake.url)).pipe(Assembler.assemble())
      for (const turn of [first, second]) {
        expect(turn.text).toBe(scenario.text)
        expect(turn.toolCalls.map((c) => [c.name, c.arguments])).toEqual(
          scenario.toolCalls!.map((c) => [c.name, c.arguments])
        )
        for (const call of turn.toolCalls) expect(call.id).toMatch(/^call_[A-Za-z0-9]{24}$/)
      }
      expect(first.toolCalls.map((c) => c.id)).not.toEqual(second.toolCalls.map((c) => c.id))
      const stats = yield* fake.stats
      expect(stats.log.map((r) => r.attempt)).toEqual([1, 2])
      // A body read to its end leaves the connection in the client's keep-alive pool: the count
      // sees pooled sockets, so the zero asserted on fault paths means "closed".
      expect(stats.openSockets).toBe(1)
    }).pipe(Effect.provide(HttpTransport.layerNode)))
})

describe("FakeProvider", () => {
  it.live("an Anthropic stream generated from a scenario assembles to it", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ plan: { source: FakeProvider.anthropic(scenario), chunkBytes: [1, 64] } })
      const transport = yield* HttpTransport.HttpTransport
      const turn = yield* transport.stream(request(fake.url, { provider: "anthropic" })).pipe(Assembler.assemble())
      expect(turn.text).toBe(scenario.text)
      expect(turn.finishReason).toBe("tool_use")
      expect(turn.toolCalls.map((c) => c.arguments)).toEqual(scenario.toolCalls!.map((c) => c.arguments))
      for (const call of turn.toolCalls) expect(call.id).toMatch(/^toolu_01[A-Za-z0-9]{22}$/)
      expect((yield* only(fake)).toolCallIds).toEqual(turn.toolCalls.map((c) => c.id))
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("a duplicated delivery (the body twice in one response) is a ToolCallProtocolError, for both formats", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({
        plan: (req) => ({
          source: req.path.includes("messages") ? FakeProvider.anthropic(scenario) : FakeProvider.openAiChat(scenario),
          fault: { _tag: "Duplicate" }
        })
      })
      const transport = yield* HttpTransport.HttpTransport
      const chat = yield* transport.stream(request(fake.url)).pipe(Assembler.assemble(), Effect.flip)
      const messages = yield* transport.stream(
        request(fake.url, { provider: "anthropic", url: `${fake.url}/v1/messages` })
      )
        .pipe(Assembler.assemble(), Effect.flip)
      expect(chat).toBeInstanceOf(AssemblyError.ToolCallProtocolError)
      expect(messages).toBeInstanceOf(AssemblyError.ToolCallProtocolError)
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("attempts count per request key; a retry gets fresh ids unless the answer repeats the previous body", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({
        plan: (req) => ({ source: FakeProvider.openAiChat(scenario), repeatPrevious: req.attempt === 3 })
      })
      const transport = yield* HttpTransport.HttpTransport
      const ids = (body: unknown) =>
        transport.stream(request(fake.url, { body })).pipe(
          Assembler.assemble(),
          Effect.map((turn) => turn.toolCalls.map((c) => c.id))
        )
      const a1 = yield* ids({ lead: "a" })
      const b1 = yield* ids({ lead: "b" })
      const a2 = yield* ids({ lead: "a" })
      const a3 = yield* ids({ lead: "a" })
      expect(new Set([...a1, ...b1, ...a2]).size).toBe(6)
      expect(a3).toEqual(a2)
      expect((yield* fake.stats).log.map((r) => [JSON.parse(r.key).lead, r.attempt])).toEqual([
        ["a", 1],
        ["b", 1],
        ["a", 2],
        ["a", 3]
      ])
    }).pipe(Effect.provide(HttpTransport.layerNode)))
})

const fixtureFile = (name: string) => new URL(`./fixtures/${name.split("__")[0]}/${name}.sse`, import.meta.url).pathname

describe("HttpTransport.layerReplay (no HTTP, TestClock)", () => {
  it.effect("layerFixture replays a fixture file", () =>
    Effect.gen(function*() {
      const transport = yield* HttpTransport.HttpTransport
      const turn = yield* transport.stream(request("http://unused.invalid")).pipe(Assembler.assemble())
      expect(turn.toolCalls.map((c) => c.id)).toEqual(["call_OEQepNf1vySmGBVMB1zi6Zkx"])
    }).pipe(Effect.provide(HttpTransport.layerFixture(fixtureFile("openai-chat__single-tool"), { chunkBytes: 7 }))))

  it.effect("budgets run on the Clock: a head that never comes, a stall, a slow body", () =>
    Effect.gen(function*() {
      const transport = yield* HttpTransport.HttpTransport
      const run = (replay: Omit<HttpTransport.Replay, "body">, options: HttpTransport.StreamOptions) =>
        Effect.gen(function*() {
          const fiber = yield* failure(transport.stream(request("http://unused.invalid", { body: replay }), options))
            .pipe(Effect.forkChild({ startImmediately: true }))
          // Timers are registered by forked fibers as the stream runs: step the clock, yielding between steps.
          for (let i = 0; i < 600 && fiber.pollUnsafe() === undefined; i++) {
            yield* TestClock.adjust("100 millis")
            yield* Effect.yieldNow
          }
          return yield* Fiber.join(fiber)
        })
      expect(yield* run({ firstByteDelayMs: Infinity }, { firstByteMs: 5_000 })).toMatchObject({
        phase: "first_byte",
        budgetMs: 5_000
      })
      expect(yield* run({ stallAfterBytes: 500 }, { idleMs: 2_000 })).toMatchObject({ phase: "idle", budgetMs: 2_000 })
      expect(yield* run({ chunkBytes: 10, paceMs: 1_000 }, { idleMs: 2_000, totalMs: 30_000 })).toMatchObject({
        phase: "total",
        budgetMs: 30_000
      })
    }).pipe(Effect.provide(HttpTransport.layerReplay((req) => ({
      ...(req.body as Omit<HttpTransport.Replay, "body">),
      body: Fixture.loadAll().find((f) => f.name === "openai-chat__single-tool")!.bytes
    })))))

  it.effect("a plan answers by attempt: 429 then a cut body then the stream", () =>
    Effect.gen(function*() {
      const transport = yield* HttpTransport.HttpTransport
      const stream = transport.stream(request("http://unused.invalid"))
      expect(yield* failure(stream)).toMatchObject({ _tag: "ProviderHttpError", status: 429, retryAfterMs: 2_000 })
      expect(yield* failure(stream)).toMatchObject({ _tag: "TransportError", phase: "body" })
      const turn = yield* stream.pipe(Assembler.assemble())
      expect(turn.toolCalls).toHaveLength(1)
    }).pipe(Effect.provide(HttpTransport.layerReplay((_, attempt) => {
      const body = Fixture.loadAll().find((f) => f.name === "openai-chat__single-tool")!.bytes
      return attempt === 1
        ? {
          status: 429,
          headers: { "retry-after": "2" },
          body: `{"error":{"message":"slow down","code":"rate_limit_exceeded"}}`
        }
        : attempt === 2
        ? { body, cutAfterBytes: 400 }
        : { body }
    }))))
})

describe("time budgets", () => {
  it.live("no response head within the first-byte budget: StreamTimeout first_byte, socket closed", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({
        plan: { source: FakeProvider.openAiChat(scenario), headersDelayMs: Infinity }
      })
      const transport = yield* HttpTransport.HttpTransport
      const error = yield* failure(transport.stream(request(fake.url), { firstByteMs: 150 }))
      expect(error).toEqual(
        new ModelStreamError.StreamTimeout({ finishReason: null, phase: "first_byte", budgetMs: 150 })
      )
      expect(yield* fake.awaitOpenSockets(0)).toBe(0)
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("a stall mid-body past the idle budget: StreamTimeout idle, socket closed", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({
        plan: { source: FakeProvider.openAiChat(scenario), fault: { _tag: "Stall", afterBytes: 700 } }
      })
      const transport = yield* HttpTransport.HttpTransport
      const events: Array<unknown> = []
      const error = yield* failure(
        transport.stream(request(fake.url), { idleMs: 150 }).pipe(Stream.tap((e) => Effect.sync(() => events.push(e))))
      )
      expect(error).toEqual(new ModelStreamError.StreamTimeout({ finishReason: null, phase: "idle", budgetMs: 150 }))
      expect(events.length).toBeGreaterThan(0)
      expect(yield* fake.awaitOpenSockets(0)).toBe(0)
      expect((yield* only(fake)).outcome).toBe("stalled")
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("a body that keeps trickling past the deadline: StreamTimeout total, socket closed", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ plan: { source: FakeProvider.openAiChat(scenario), paceMs: 25 } })
      const transport = yield* HttpTransport.HttpTransport
      const error = yield* failure(transport.stream(request(fake.url), { idleMs: 1_000, totalMs: 300 }))
      expect(error).toEqual(new ModelStreamError.StreamTimeout({ finishReason: null, phase: "total", budgetMs: 300 }))
      expect(yield* fake.awaitOpenSockets(0)).toBe(0)
      expect((yield* only(fake)).outcome).toBe("client-closed")
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("the total deadline covers the wait for the head too", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({
        plan: { source: FakeProvider.openAiChat(scenario), headersDelayMs: Infinity }
      })
      const transport = yield* HttpTransport.HttpTransport
      const error = yield* failure(transport.stream(request(fake.url), { firstByteMs: 5_000, totalMs: 150 }))
      expect(error).toEqual(new ModelStreamError.StreamTimeout({ finishReason: null, phase: "total", budgetMs: 150 }))
      expect(yield* fake.awaitOpenSockets(0)).toBe(0)
    }).pipe(Effect.provide(HttpTransport.layerNode)))
})

describe("abort", () => {
  const paced = { source: FakeProvider.openAiChat(scenario), paceMs: 20 }

  it.live("interrupting the consuming fiber interrupts the stream and closes the socket", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ plan: paced })
      const transport = yield* HttpTransport.HttpTransport
      const started = yield* Deferred.make<void>()
      const fiber = yield* transport.stream(request(fake.url)).pipe(
        Stream.runForEach(() => Deferred.succeed(started, undefined)),
        Effect.forkChild
      )
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)).toBe(true)
      expect(yield* fake.awaitOpenSockets(0)).toBe(0)
      expect((yield* only(fake)).outcome).toBe("client-closed")
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("an AbortSignal fired mid-body gives StreamAborted with its reason and closes the socket", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ plan: paced })
      const transport = yield* HttpTransport.HttpTransport
      const controller = new AbortController()
      let seen = 0
      const error = yield* failure(
        transport.stream(request(fake.url), { signal: controller.signal }).pipe(
          Stream.tap(() => Effect.sync(() => ++seen === 2 && controller.abort("the user closed the tab")))
        )
      )
      expect(error).toEqual(
        new ModelStreamError.StreamAborted({ finishReason: null, reason: "the user closed the tab" })
      )
      expect(yield* fake.awaitOpenSockets(0)).toBe(0)
      expect((yield* only(fake)).outcome).toBe("client-closed")
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("an AbortSignal fired while waiting for the head, or already fired, gives StreamAborted", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({
        plan: { source: FakeProvider.openAiChat(scenario), headersDelayMs: Infinity }
      })
      const transport = yield* HttpTransport.HttpTransport
      const waiting = AbortSignal.timeout(100)
      const error = yield* failure(transport.stream(request(fake.url), { signal: waiting }))
      expect(error._tag).toBe("StreamAborted")
      expect(yield* fake.awaitOpenSockets(0)).toBe(0)
      const before = (yield* fake.stats).requests
      const early = yield* failure(transport.stream(request(fake.url), { signal: AbortSignal.abort() }))
      expect(early._tag).toBe("StreamAborted")
      expect((yield* fake.stats).requests).toBe(before)
    }).pipe(Effect.provide(HttpTransport.layerNode)))
})

describe("HTTP errors before the stream", () => {
  it.live("429 with Retry-After in seconds, and as an HTTP-date, and 500: ProviderHttpError", () =>
    Effect.gen(function*() {
      const inThirty = new Date(Date.now() + 30_000).toUTCString()
      const fake = yield* FakeProvider.make({
        plan: (req) => {
          const source = FakeProvider.openAiChat(scenario)
          switch ((req.body as { case: string }).case) {
            case "seconds":
              return { source, fault: { _tag: "Status", status: 429, retryAfter: 7 } }
            case "date":
              return { source, fault: { _tag: "Status", status: 429, retryAfter: inThirty } }
            case "anthropic":
              return { source: FakeProvider.anthropic(scenario), fault: { _tag: "Status", status: 529 } }
            default:
              return { source, fault: { _tag: "Status", status: 500 } }
          }
        }
      })
      const transport = yield* HttpTransport.HttpTransport
      const run = (c: string) => failure(transport.stream(request(fake.url, { body: { case: c } })))

      const seconds = yield* run("seconds")
      expect(seconds).toBeInstanceOf(ModelStreamError.ProviderHttpError)
      expect(seconds).toMatchObject({ status: 429, retryAfterMs: 7_000, code: "rate_limit_exceeded" })
      expect(seconds.message).toContain("HTTP 429 (rate_limit_exceeded), retry after 7000 ms: Rate limit reached")

      const date = (yield* run("date")) as ModelStreamError.ProviderHttpError
      expect(date.status).toBe(429)
      expect(date.retryAfterMs).toBeGreaterThan(27_000)
      expect(date.retryAfterMs).toBeLessThanOrEqual(30_000)

      expect(yield* run("500")).toMatchObject({
        _tag: "ProviderHttpError",
        status: 500,
        retryAfterMs: null,
        code: "server_error",
        providerMessage: "The server had an error while processing your request. Sorry about that!"
      })
      expect(yield* run("anthropic")).toMatchObject({
        status: 529,
        code: "overloaded_error",
        providerMessage: "Overloaded"
      })
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it("Retry-After: delay-seconds, HTTP-date (floored at 0), retry-after-ms first, garbage is null", () => {
    const now = Date.parse("2025-11-29T12:00:00Z")
    expect(HttpTransport.retryAfterMs({ "retry-after": "120" }, now)).toBe(120_000)
    expect(HttpTransport.retryAfterMs({ "retry-after": "Sat, 29 Nov 2025 12:00:30 GMT" }, now)).toBe(30_000)
    expect(HttpTransport.retryAfterMs({ "retry-after": "Sat, 29 Nov 2025 11:00:00 GMT" }, now)).toBe(0)
    expect(HttpTransport.retryAfterMs({ "retry-after": "5", "retry-after-ms": "1500.5" }, now)).toBe(1500.5)
    expect(HttpTransport.retryAfterMs({ "retry-after": "soon" }, now)).toBeNull()
    expect(HttpTransport.retryAfterMs({ "retry-after": "-3" }, now)).toBeNull()
    expect(HttpTransport.retryAfterMs({}, now)).toBeNull()
  })
})

describe("cut connections", () => {
  it.live("a socket destroyed mid-body is TransportError body (chunked framing shows the cut); a clean early end is IncompleteStream", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({
        plan: (req) => ({
          source: FakeProvider.openAiChat(scenario),
          fault: { _tag: (req.body as { fault: "Drop" | "Truncate" }).fault, afterBytes: 900 }
        })
      })
      const transport = yield* HttpTransport.HttpTransport
      const dropped = yield* transport.stream(request(fake.url, { body: { fault: "Drop" } })).pipe(
        Assembler.assemble(),
        Effect.flip
      )
      expect(dropped).toBeInstanceOf(ModelStreamError.TransportError)
      expect(dropped).toMatchObject({ phase: "body" })
      expect(yield* fake.awaitOpenSockets(0)).toBe(0)

      const truncated = yield* transport.stream(request(fake.url, { body: { fault: "Truncate" } })).pipe(
        Assembler.assemble(),
        Effect.flip
      )
      expect(truncated).toBeInstanceOf(AssemblyError.IncompleteStream)
      expect((yield* fake.stats).log.map((r) => r.outcome)).toEqual(["dropped", "truncated"])
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("a reset before the head, and a refused connection, are TransportError connect", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({
        plan: { source: FakeProvider.openAiChat(scenario), fault: { _tag: "Reset" } }
      })
      const transport = yield* HttpTransport.HttpTransport
      expect(yield* failure(transport.stream(request(fake.url)))).toMatchObject({
        _tag: "TransportError",
        phase: "connect"
      })
      expect(yield* fake.awaitOpenSockets(0)).toBe(0)

      const closed = yield* Effect.scoped(
        Effect.map(FakeProvider.make({ plan: { source: FakeProvider.bytes("") } }), (s) => s.url)
      )
      const refused = yield* failure(transport.stream(request(closed)))
      expect(refused).toMatchObject({ _tag: "TransportError", phase: "connect" })
      expect(refused.message).toContain("ECONNREFUSED")
    }).pipe(Effect.provide(HttpTransport.layerNode)))
})

describe("the API key", () => {
  it.live("never appears in an error, its message, a log line or a span, even when the provider echoes it", () => {
    const lines: Array<string> = []
    const spans: Array<Tracer.NativeSpan> = []
    const tracer = Tracer.make({
      span(options) {
        const span = new Tracer.NativeSpan(options)
        spans.push(span)
        return span
      }
    })
    return Effect.gen(function*() {
      const secret = "sk-test-7f3c9a1e5b2d4c6f8a0b1c2d3e4f5a6b"
      const seenKeys: Array<string | undefined> = []
      const fake = yield* FakeProvider.make({
        plan: (req) => {
          const sent = req.headers["authorization"] ??
            (req.headers["x-goog-api-key"] ?? req.headers["x-api-key"]) as string | undefined
          seenKeys.push(sent)
          const source = FakeProvider.openAiChat(scenario)
          switch ((req.body as { case: string }).case) {
            case "echo":
              return {
                source,
                fault: {
                  _tag: "Status",
                  status: 401,
                  body: JSON.stringify({
                    error: { message: `Incorrect API key provided: ${sent}.`, code: "invalid_api_key" }
                  })
                }
              }
            case "long-echo":
              return {
                source,
                fault: {
                  _tag: "Status",
                  status: 401,
                  body: JSON.stringify({ error: { message: `${"x".repeat(110)}${sent}${"y".repeat(300)}` } })
                }
              }
            case "drop":
              return { source, fault: { _tag: "Drop", afterBytes: 300 } }
            case "stall":
              return { source, fault: { _tag: "Stall", afterBytes: 300 } }
            default:
              return { source, fault: { _tag: "Reset" } }
          }
        }
      })
      const transport = yield* HttpTransport.HttpTransport
      const errors: Array<ModelStreamError.TransportFailure> = []
      for (
        const [c, provider] of [
          ["echo", "openai-chat"],
          ["echo", "gemini"],
          ["long-echo", "anthropic"],
          ["drop", "anthropic"],
          ["stall", "openai-chat"],
          ["reset", "openai-chat"]
        ] as const
      ) {
        const error = yield* failure(
          transport.stream(request(fake.url, { provider, body: { case: c }, apiKey: Redacted.make(secret) }), {
            idleMs: 100
          })
        ).pipe(Effect.tap((e) => Effect.logError("stream failed", e, Cause.fail(e))))
        errors.push(error)
      }
      const aborted = new AbortController()
      aborted.abort(new Error(`aborted while holding ${secret}`))
      errors.push(
        yield* failure(
          transport.stream(request(fake.url, { apiKey: Redacted.make(secret) }), { signal: aborted.signal })
        )
          .pipe(Effect.tap((e) => Effect.logError(e)))
      )
      expect(errors.map((e) => e._tag)).toEqual([
        "ProviderHttpError",
        "ProviderHttpError",
        "ProviderHttpError",
        "TransportError",
        "StreamTimeout",
        "TransportError",
        "StreamAborted"
      ])
      expect(errors[0]!.message).toContain("Incorrect API key provided: Bearer <redacted>.")
      expect(errors[1]!.message).toContain("Incorrect API key provided: <redacted>.")
      // Masked before it is bounded: the cut falls inside "<redacted>", not inside the key.
      expect((errors[2] as ModelStreamError.ProviderHttpError).providerMessage).toMatch(/^x{110}<redacted/)
      expect(errors[6]!.message).toContain("aborted while holding <redacted>")
      expect(seenKeys.slice(0, 3)).toEqual([`Bearer ${secret}`, secret, secret])
      const rendered = [
        ...errors.flatMap((e) => [e.message, String(e), JSON.stringify(e), Cause.pretty(Cause.fail(e))]),
        ...lines,
        ...spans.flatMap((s) => [s.name, ...[...s.attributes.entries()].map(([k, v]) => `${k}=${String(v)}`)])
      ].join("\n")
      expect(lines.length).toBeGreaterThan(0)
      expect(spans.some((s) => [...s.attributes.keys()].some((k) => k.includes("authorization")))).toBe(true)
      expect(rendered).not.toContain(secret)
      expect(rendered).not.toContain(secret.slice(8))
      expect(rendered).not.toContain(secret.slice(0, 10))
    }).pipe(
      Effect.provide(HttpTransport.layerNode),
      Effect.provide(Logger.layer([Logger.make((options) => {
        lines.push(Logger.formatSimple.log(options))
      })])),
      Effect.provideService(References.MinimumLogLevel, "All"),
      Effect.provideService(HttpClient.TracerHeaderFilter, () => true),
      Effect.withTracer(tracer)
    )
  })
})

describe("answers that are not event streams", () => {
  const completion = JSON.stringify(
    {
      id: "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
      object: "chat.completion",
      model: "gpt-4o-2024-08-06",
      choices: [{ index: 0, message: { role: "assistant", content: "Hello!" }, finish_reason: "stop" }]
    },
    null,
    2
  )

  it.live("a 200 labelled JSON is NotAnEventStream from its head: one request, the body's start, its content type", () =>
    Effect.gen(function*() {
      const types = [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/problem+json",
        "application/x-ndjson"
      ]
      const fake = yield* FakeProvider.make({
        plan: (req) => ({
          source: FakeProvider.bytes(completion),
          contentType: types[(req.body as { type: number }).type]!
        })
      })
      const transport = yield* HttpTransport.HttpTransport
      for (let type = 0; type < types.length; type++) {
        const error = yield* failure(transport.stream(request(fake.url, { body: { type } })))
        expect(error).toBeInstanceOf(ModelStreamError.NotAnEventStream)
        expect(error).toMatchObject({ found: "json", contentType: types[type], excerpt: completion.slice(0, 160) })
        expect(error.message).toContain(
          `the response is ${types[type]}: a JSON body, not an event stream; did the request set stream: true?`
        )
      }
      expect((yield* fake.stats).requests).toBe(types.length)
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("a large JSON answer is not read past its excerpt: the client closes the connection", () =>
    Effect.gen(function*() {
      const big = JSON.stringify({ object: "chat.completion", padding: "x".repeat(4_000_000) })
      const fake = yield* FakeProvider.make({
        plan: { source: FakeProvider.bytes(big), contentType: "application/json", chunkBytes: 16_384 }
      })
      const transport = yield* HttpTransport.HttpTransport
      expect(yield* failure(transport.stream(request(fake.url)))).toMatchObject({ _tag: "NotAnEventStream" })
      expect(yield* fake.awaitOpenSockets(0)).toBe(0)
      const record = yield* only(fake)
      expect(record.outcome).toBe("client-closed")
      expect(record.bytesWritten).toBeLessThan(big.length)
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("without a content type, or with a wrong one, the bytes decide: SSE streams, anything else fails once read", () =>
    Effect.gen(function*() {
      const page = "<!DOCTYPE html>\n<html><body><h1>Sign in to continue</h1></body></html>\n"
      const fake = yield* FakeProvider.make({
        plan: (req) => {
          const { body, type } = req.body as { body: "sse" | "json" | "html"; type: string | null }
          return {
            source: body === "sse"
              ? FakeProvider.openAiChat(scenario)
              : FakeProvider.bytes(body === "json" ? completion : page),
            contentType: type,
            chunkBytes: [1, 64]
          }
        }
      })
      const transport = yield* HttpTransport.HttpTransport
      for (const type of [null, "text/plain; charset=utf-8", "application/octet-stream", "text/html"]) {
        const turn = yield* transport.stream(request(fake.url, { body: { body: "sse", type } })).pipe(
          Assembler.assemble()
        )
        expect(turn.text).toBe(scenario.text)
        expect(turn.toolCalls.map((c) => c.arguments)).toEqual(scenario.toolCalls!.map((c) => c.arguments))
      }
      const json = yield* failure(transport.stream(request(fake.url, { body: { body: "json", type: null } })))
      expect(json).toMatchObject({ _tag: "NotAnEventStream", found: "json", contentType: null })
      const html = yield* failure(transport.stream(request(fake.url, { body: { body: "html", type: "text/html" } })))
      expect(html).toMatchObject({ _tag: "NotAnEventStream", found: "text", excerpt: page.trim() })
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("the API key echoed in a JSON answer is masked, also where the excerpt cuts through it", () =>
    Effect.gen(function*() {
      const secret = "sk-test-7f3c9a1e5b2d4c6f8a0b1c2d3e4f5a6b"
      const fake = yield* FakeProvider.make({
        plan: (req) => {
          const { at, type } = req.body as { at: number; type: string | null }
          const text = `{"note":"${"n".repeat(at)}${secret} was used","object":"chat.completion"}`
          return { source: FakeProvider.bytes(text), contentType: type }
        }
      })
      const transport = yield* HttpTransport.HttpTransport
      for (const type of ["application/json", null]) {
        // 140: the 160-character excerpt ends inside the key; 20: the key is whole in it.
        for (const at of [140, 20]) {
          const error = yield* failure(
            transport.stream(request(fake.url, { body: { at, type }, apiKey: Redacted.make(secret) }))
          )
          const rendered = [error.message, JSON.stringify(error), Cause.pretty(Cause.fail(error))].join("\n")
          expect(rendered).not.toContain(secret.slice(0, 8))
          expect((error as ModelStreamError.NotAnEventStream).excerpt).toContain("<redacted>")
        }
      }
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.effect("layerReplay follows the same rule (TestClock)", () =>
    Effect.gen(function*() {
      const transport = yield* HttpTransport.HttpTransport
      const error = yield* failure(transport.stream(request("http://replay.invalid")))
      expect(error).toMatchObject({ _tag: "NotAnEventStream", found: "json", contentType: "application/json" })
    }).pipe(
      Effect.provide(HttpTransport.layerReplay({ body: completion, headers: { "content-type": "application/json" } }))
    ))
})
