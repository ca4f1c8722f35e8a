/**
 * Stop reading at the end event, over real HTTP on 127.0.0.1: a server that sends a complete body
 * and then keeps the socket open (no final chunk, no close) must not turn a finished turn into a
 * `StreamTimeout`. Once the end event (`[DONE]`, `message_stop`, the terminal Responses event,
 * Gemini's finish chunk) has arrived, the transport reads on only for `afterEndMs`: what arrives
 * by then is still checked (a splice behind the end event is a `ToolCallProtocolError`), and then
 * the body is closed and the stream ends as if the body had ended there. A finite body
 * (`layerReplay`, a file) is read to its end as before.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpModelStream, HttpTransport, type Provider } from "@toolgate/adapters"
import { IdempotencyStore, ToolCallPipeline, ToolExecutor } from "@toolgate/runtime"
import { Fixture, LoopbackServer } from "@toolgate/testing"
import { Effect, Fiber, Layer, Schema, Stream } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"

const fixture = (name: string) => {
  const provider = name.split("__")[0] as Provider.Name
  return Fixture.load(provider).find((f) => f.name === name)!
}

/** One write of the server: bytes, sent `afterMs` after the previous one. */
interface Write {
  readonly bytes: Uint8Array | string
  readonly afterMs?: number
}

/** A server that answers every request with `writes` and then never ends the response. */
const holdingServer = (writes: ReadonlyArray<Write>) =>
  LoopbackServer.make(({ later }) => (req, res) => {
    LoopbackServer.readBody(req, () => {
      res.writeHead(200, { "content-type": "text/event-stream" })
      const next = (i: number) => {
        if (i >= writes.length) return // the socket stays open: no res.end()
        const write = writes[i]!
        const send = () => {
          res.write(write.bytes)
          next(i + 1)
        }
        if ((write.afterMs ?? 0) > 0) later(write.afterMs!, send)
        else send()
      }
      next(0)
    })
  })

const request = (url: string, provider: Provider.Name): HttpTransport.ProviderRequest => ({
  provider,
  url: `${url}/v1/stream`,
  body: { stream: true }
})

describe("HttpTransport stops reading at the end event", () => {
  for (
    const name of [
      "openai-chat__single-tool",
      "openai-responses__single-tool",
      "anthropic__parallel-tool-use",
      "gemini__parallel-same-chunk",
      "openai-chat__text-only"
    ]
  ) {
    it.live(`${name}: a complete body on a socket left open completes the turn and closes the socket`, () =>
      Effect.gen(function*() {
        const case_ = fixture(name)
        const server = yield* holdingServer([{ bytes: case_.bytes }])
        const transport = yield* HttpTransport.HttpTransport
        // The default budgets (60 s idle): the turn must complete long before any of them.
        const result = yield* Fixture.runEvents(
          transport.stream(request(server.url, case_.provider)).pipe(Stream.orDie)
        )
        expect(Fixture.outcome(result)).toEqual(case_.expected)
        expect(yield* server.awaitOpenSockets(0)).toBe(0)
      }).pipe(Effect.provide(HttpTransport.layerNode)))
  }

  it.live("the body arriving in many small writes, the end event last, still completes promptly", () =>
    Effect.gen(function*() {
      const case_ = fixture("anthropic__single-tool")
      const writes: Array<Write> = []
      for (let at = 0; at < case_.bytes.length; at += 37) {
        writes.push({ bytes: case_.bytes.subarray(at, at + 37), afterMs: 1 })
      }
      const server = yield* holdingServer(writes)
      const transport = yield* HttpTransport.HttpTransport
      const result = yield* Fixture.runEvents(transport.stream(request(server.url, "anthropic")).pipe(Stream.orDie))
      expect(Fixture.outcome(result)).toEqual(case_.expected)
      expect(yield* server.awaitOpenSockets(0)).toBe(0)
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("what arrives behind the end event in the same write is still checked: a splice fails", () =>
    Effect.gen(function*() {
      const first = fixture("openai-chat__single-tool")
      const second = fixture("openai-chat__text-only")
      const server = yield* holdingServer([{ bytes: Buffer.concat([first.bytes, second.bytes]) }])
      const transport = yield* HttpTransport.HttpTransport
      const result = yield* Fixture.runEvents(transport.stream(request(server.url, "openai-chat")).pipe(Stream.orDie))
      expect([result.error, result.released, result.finishReason]).toEqual([
        "ToolCallProtocolError",
        false,
        "tool_calls"
      ])
      expect(yield* server.awaitOpenSockets(0)).toBe(0)
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("what arrives behind the end event within afterEndMs is still checked: a late footer fails", () =>
    Effect.gen(function*() {
      const case_ = fixture("anthropic__single-tool")
      const footer = Fixture.sse([{ data: { type: "content_block_start", index: 9, content_block: { type: "text" } } }])
      const server = yield* holdingServer([{ bytes: case_.bytes }, { bytes: footer, afterMs: 20 }])
      const transport = yield* HttpTransport.HttpTransport
      const result = yield* Fixture.runEvents(
        transport.stream(request(server.url, "anthropic"), { afterEndMs: 2_000 }).pipe(Stream.orDie)
      )
      expect([result.error, result.released, result.finishReason]).toEqual(["ToolCallProtocolError", false, "tool_use"])
      expect(yield* server.awaitOpenSockets(0)).toBe(0)
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("afterEndMs 0 stops at the read that carried the end event: a later write is not read", () =>
    Effect.gen(function*() {
      const case_ = fixture("openai-chat__single-tool")
      const late = Fixture.sse([{ data: { choices: [{ index: 0, delta: { content: "late" } }] } }])
      const server = yield* holdingServer([{ bytes: case_.bytes }, { bytes: late, afterMs: 200 }])
      const transport = yield* HttpTransport.HttpTransport
      const result = yield* Fixture.runEvents(
        transport.stream(request(server.url, "openai-chat"), { afterEndMs: 0 }).pipe(Stream.orDie)
      )
      expect(Fixture.outcome(result)).toEqual(case_.expected)
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("before the end event the idle budget still fails the stream", () =>
    Effect.gen(function*() {
      const case_ = fixture("openai-chat__single-tool")
      const server = yield* holdingServer([{ bytes: case_.bytes.subarray(0, case_.bytes.length - 20) }])
      const transport = yield* HttpTransport.HttpTransport
      const error = yield* transport.stream(request(server.url, "openai-chat"), { idleMs: 300 }).pipe(
        Stream.runDrain,
        Effect.flip
      )
      expect(error).toMatchObject({ _tag: "StreamTimeout", phase: "idle" })
      expect(yield* server.awaitOpenSockets(0)).toBe(0)
    }).pipe(Effect.provide(HttpTransport.layerNode)))
})

describe("the pipeline over a server that keeps the socket open", () => {
  const Echo = Tool.make("echo", { parameters: Schema.Struct({ n: Schema.Number }), success: Schema.Number })
  const toolkit = Toolkit.make(Echo)
  const chunk = (delta: object, finish: string | null = null) => ({
    data: { id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] }
  })
  const body = Fixture.sse([
    chunk({ role: "assistant", content: "Echoing." }),
    chunk({
      tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "echo", arguments: "{\"n\":7}" } }]
    }),
    chunk({}, "tool_calls"),
    { data: "[DONE]" }
  ])

  it.live("executes the turn once, on the first attempt, and closes the connection", () =>
    Effect.gen(function*() {
      const server = yield* holdingServer([{ bytes: body }])
      let runs = 0
      const layer = ToolCallPipeline.layer.pipe(
        Layer.provide(ToolExecutor.layer(toolkit, {
          echo: {
            recovery: "reexecute",
            run: (params) =>
              Effect.sync(() => {
                runs++
                return params.n
              })
          }
        })),
        Layer.provide(
          HttpModelStream.layer({
            provider: "openai-chat",
            baseUrl: `${server.url}/v1`,
            model: "m",
            // Budgets far beyond the test's own timeout: only stopping at the end event completes it.
            budgets: { idleMs: 120_000 }
          }).pipe(Layer.provide(HttpTransport.layerNode))
        ),
        Layer.provide(IdempotencyStore.layerMemory)
      )
      const result = yield* ToolCallPipeline.runTurn({ prompt: Prompt.make("Echo 7.") }, {
        toolkit,
        scope: { tenant: "t", turn: "keep-open" }
      }).pipe(Effect.provide(layer))
      expect([result.attempts, result.finishReason, result.text]).toEqual([1, "tool_calls", "Echoing."])
      expect(result.calls.map((c) => c.outcome)).toMatchObject([{ _tag: "Executed", value: 7 }])
      expect(runs).toBe(1)
      expect(yield* server.awaitOpenSockets(0)).toBe(0)
    }))
})

describe("HttpTransport.layerReplay: after the end event no budget is an error (TestClock)", () => {
  const body = fixture("openai-responses__single-tool")
  /** The body, then a comment the replay never sends: it stalls right after the end event. */
  const held = Buffer.concat([body.bytes, Buffer.from(": keep-alive\n\n")])
  /** Runs a replay that stalls after `stallAfterBytes` (the socket stays open), stepping the clock. */
  const run = (options: HttpTransport.StreamOptions, stallAfterBytes = body.bytes.length) =>
    Effect.gen(function*() {
      const transport = yield* HttpTransport.HttpTransport
      const fiber = yield* Fixture.runEvents(
        transport.stream(request("http://unused.invalid", "openai-responses"), options).pipe(Stream.orDie)
      ).pipe(Effect.forkChild({ startImmediately: true }))
      for (let i = 0; i < 2_000 && fiber.pollUnsafe() === undefined; i++) {
        yield* TestClock.adjust("50 millis")
        yield* Effect.yieldNow
      }
      return yield* Fiber.join(fiber)
    }).pipe(Effect.provide(HttpTransport.layerReplay({ body: held, chunkBytes: 64, stallAfterBytes })))

  it.effect("a stall after the end event ends the body: the turn completes under any budget", () =>
    Effect.gen(function*() {
      for (
        const options of [
          {},
          { idleMs: 1_000 },
          { idleMs: 1_000, afterEndMs: 60_000 },
          { totalMs: 5_000, afterEndMs: 60_000 },
          { idleMs: 2_000, afterEndMs: Infinity },
          // Only the total budget can end this one: running out after the end event is clean.
          { idleMs: Infinity, afterEndMs: Infinity, totalMs: 5_000 },
          { afterEndMs: 0 }
        ]
      ) {
        expect(Fixture.outcome(yield* run(options))).toEqual(body.expected)
      }
    }))

  it.effect("a stall before the end event is still StreamTimeout (idle, or total)", () =>
    Effect.gen(function*() {
      const transport = yield* HttpTransport.HttpTransport
      const error = (options: HttpTransport.StreamOptions) =>
        Effect.gen(function*() {
          const fiber = yield* transport.stream(request("http://unused.invalid", "openai-responses"), options).pipe(
            Stream.runDrain,
            Effect.flip,
            Effect.forkChild({ startImmediately: true })
          )
          for (let i = 0; i < 2_000 && fiber.pollUnsafe() === undefined; i++) {
            yield* TestClock.adjust("50 millis")
            yield* Effect.yieldNow
          }
          return yield* Fiber.join(fiber)
        })
      expect(yield* error({ idleMs: 1_000 })).toMatchObject({ _tag: "StreamTimeout", phase: "idle" })
      expect(yield* error({ idleMs: Infinity, totalMs: 5_000 })).toMatchObject({
        _tag: "StreamTimeout",
        phase: "total"
      })
    }).pipe(
      Effect.provide(
        HttpTransport.layerReplay({ body: body.bytes, chunkBytes: 64, stallAfterBytes: body.bytes.length - 30 })
      )
    ))

  it.effect("a finite body is read to its end: an event after the end in a later read still fails", () =>
    Effect.gen(function*() {
      const spliced = Buffer.concat([body.bytes, fixture("openai-responses__text-only").bytes])
      const transport = yield* HttpTransport.HttpTransport
      const result = yield* Fixture.run("openai-responses", Fixture.chunk(spliced, [3, 5, 7]))
      expect(result.error).toBe("ToolCallProtocolError")
      const replayed = yield* Fixture.runEvents(
        transport.stream(request("http://unused.invalid", "openai-responses")).pipe(Stream.orDie)
      )
      expect(replayed.error).toBe("ToolCallProtocolError")
    }).pipe(
      Effect.provide(HttpTransport.layerReplay({
        body: Buffer.concat([body.bytes, fixture("openai-responses__text-only").bytes]),
        chunkBytes: 5
      }))
    ))
})
