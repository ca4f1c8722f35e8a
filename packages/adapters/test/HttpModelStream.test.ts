/**
 * `HttpModelStream` over real HTTP on 127.0.0.1 (the fake provider): what it sends for each of
 * the four formats (endpoint, key header, version header, the encoded body with the tools and the
 * history, byte for byte), the events it yields, its finish profile, the per-read budgets of its
 * configuration against the attempt's remaining time and signal, an `UnsupportedRequest` that
 * sends nothing, and the stream policy: `never` (a request without a stream, its JSON answer
 * through the same gate), `stream` (a JSON answer stays `NotAnEventStream`, a 400 is not retried)
 * and `fallback` (a JSON answer decoded whole; a 400 that names streaming retried once without a
 * stream, within the attempt's time, counted and logged; any other 400 not retried).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { HttpModelStream, HttpTransport, OpenAiChatRequest } from "@toolgate/adapters"
import { Assembler, ModelStream, ModelStreamError } from "@toolgate/core"
import { FakeProvider, Fixture } from "@toolgate/testing"
import { Effect, Exit, Logger, Metric, Redacted, Result, Schema, Stream } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const CreateTask = Tool.make("create_task", {
  parameters: Schema.Struct({ lead_id: Schema.String, title: Schema.String })
})
const toolkit = Toolkit.make(CreateTask)
const scenario: FakeProvider.Scenario = {
  text: "Creating the task.",
  toolCalls: [{ name: "create_task", arguments: { lead_id: "L-7", title: "Call back" } }]
}
const request: ModelStream.ModelRequest = {
  prompt: Prompt.make("New lead L-7."),
  tools: ModelStream.toolsOf(toolkit),
  maxOutputTokens: 256
}
const attempt: ModelStream.Attempt = { number: 1, remainingMs: 30_000 }

/** The model stream of `options` in context, and its turn for `request` (or its typed failure). */
const turnOf = (
  options: HttpModelStream.Options,
  req: ModelStream.ModelRequest = request,
  at: ModelStream.Attempt = attempt
) =>
  Effect.gen(function*() {
    const model = yield* HttpModelStream.make(options)
    return yield* model.stream(req, at).pipe(Assembler.assemble(), Effect.exit)
  }).pipe(Effect.provide(HttpTransport.layerNode))

describe("HttpModelStream", () => {
  it.live("openai-chat: POSTs the encoded body to /chat/completions with the key as a bearer token", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ plan: { source: FakeProvider.openAiChat(scenario) } })
      const options: HttpModelStream.Options = {
        provider: "openai-chat",
        baseUrl: `${fake.url}/v1/`,
        apiKey: Redacted.make("sk-test-1234"),
        model: "gpt-test"
      }
      const exit = yield* turnOf(options)
      assert(Exit.isSuccess(exit))
      expect(exit.value.text).toBe(scenario.text)
      expect(exit.value.toolCalls.map((c) => [c.name, c.arguments])).toEqual([
        ["create_task", { lead_id: "L-7", title: "Call back" }]
      ])
      const [record] = (yield* fake.stats).log
      expect(record!.path).toBe("/v1/chat/completions")
      const model = yield* HttpModelStream.make(options).pipe(Effect.provide(HttpTransport.layerNode))
      expect(model.provider).toBe("openai-chat")
    }))

  it.live("sends exactly the encoder's body and the provider's headers", () =>
    Effect.gen(function*() {
      const seen: Array<FakeProvider.Request> = []
      const fake = yield* FakeProvider.make({
        plan: (req) => {
          seen.push(req)
          return { source: FakeProvider.anthropic(scenario) }
        }
      })
      const exit = yield* turnOf({
        provider: "anthropic",
        baseUrl: fake.url,
        path: "/v1/messages?beta=true",
        apiKey: Redacted.make("sk-ant-test-5678"),
        headers: { "anthropic-beta": "tools-2024-04-04" },
        model: "claude-test"
      })
      expect(Exit.isSuccess(exit)).toBe(true)
      const [sent] = seen
      expect(sent!.path).toBe("/v1/messages?beta=true")
      expect(sent!.headers["x-api-key"]).toBe("sk-ant-test-5678")
      expect(sent!.headers["anthropic-version"]).toBe("2023-06-01")
      expect(sent!.headers["anthropic-beta"]).toBe("tools-2024-04-04")
      expect(sent!.headers["content-type"]).toBe("application/json")
      expect(sent!.body).toEqual(
        JSON.parse(JSON.stringify(
          Result.getOrThrow(
            HttpModelStream.providerRequest({ provider: "anthropic", baseUrl: fake.url, model: "claude-test" }, request)
          ).body
        ))
      )
      expect(sent!.body).toMatchObject({ model: "claude-test", max_tokens: 256, stream: true })
    }))

  it("the finish profile: the configured one, else strict for the first-party hosts and compatible elsewhere", () => {
    const profile = (options: Omit<HttpModelStream.Options, "model">, req: ModelStream.ModelRequest = request) =>
      Result.getOrThrow(HttpModelStream.providerRequest({ ...options, model: "m" }, req)).finishProfile
    expect(profile({ provider: "openai-chat", baseUrl: "https://api.openai.com/v1" })).toBe("strict")
    expect(profile({ provider: "anthropic", baseUrl: "https://api.anthropic.com/v1" })).toBe("strict")
    expect(profile({ provider: "openai-chat", baseUrl: "http://localhost:11434/v1" })).toBe("compatible")
    expect(profile({ provider: "openai-chat", baseUrl: "https://api.openai.com/v1", finishProfile: "compatible" }))
      .toBe("compatible")
    // OpenAI ends a turn whose tool_choice names the function with `stop`.
    expect(profile({ provider: "openai-chat", baseUrl: "https://api.openai.com/v1" }, {
      ...request,
      toolChoice: { tool: "create_task" }
    })).toBe("compatible")
    expect(profile({ provider: "anthropic", baseUrl: "https://api.anthropic.com/v1" }, {
      ...request,
      toolChoice: { tool: "create_task" }
    })).toBe("strict")
  })

  it.live("per-read budgets come from the configuration; the total is the attempt's remaining time", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({
        plan: { source: FakeProvider.openAiChat(scenario), fault: { _tag: "Stall", afterBytes: 300 } }
      })
      const base = { provider: "openai-chat", baseUrl: fake.url, model: "m" } as const
      const idle = yield* turnOf({ ...base, budgets: { idleMs: 150 } })
      expect(idle).toEqual(
        Exit.fail(new ModelStreamError.StreamTimeout({ finishReason: null, phase: "idle", budgetMs: 150 }))
      )
      const total = yield* turnOf({ ...base, budgets: { idleMs: 10_000 } }, request, { number: 2, remainingMs: 200 })
      expect(total).toEqual(
        Exit.fail(new ModelStreamError.StreamTimeout({ finishReason: null, phase: "total", budgetMs: 200 }))
      )
      // A configured total caps every attempt.
      const capped = yield* turnOf({ ...base, budgets: { idleMs: 10_000, totalMs: 150 } }, request, {
        number: 1,
        remainingMs: 20_000
      })
      expect(capped).toEqual(
        Exit.fail(new ModelStreamError.StreamTimeout({ finishReason: null, phase: "total", budgetMs: 150 }))
      )
      expect(yield* fake.awaitOpenSockets(0)).toBe(0)
    }))

  it.live("the attempt's signal aborts the stream: StreamAborted", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ plan: { source: FakeProvider.openAiChat(scenario), paceMs: 20 } })
      const controller = new AbortController()
      const model = yield* HttpModelStream.make({ provider: "openai-chat", baseUrl: fake.url, model: "m" })
      const error = yield* model.stream(request, { number: 1, remainingMs: 30_000, signal: controller.signal }).pipe(
        Stream.tap((event) => Effect.sync(() => event.text !== undefined && controller.abort("the user left"))),
        Stream.runDrain,
        Effect.flip
      )
      expect(error).toEqual(new ModelStreamError.StreamAborted({ finishReason: null, reason: "the user left" }))
      expect(yield* fake.awaitOpenSockets(0)).toBe(0)
    }).pipe(Effect.provide(HttpTransport.layerNode)))

  it.live("a request the encoder cannot carry fails with UnsupportedRequest and sends nothing", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ plan: { source: FakeProvider.openAiChat(scenario) } })
      const prompt = Prompt.make([{
        role: "user",
        content: [{ type: "file", mediaType: "application/pdf", data: new Uint8Array([1]) }]
      }])
      const exit = yield* turnOf({ provider: "openai-chat", baseUrl: fake.url, model: "m" }, { prompt })
      expect(exit).toEqual(
        Exit.fail(
          new ModelStreamError.UnsupportedRequest({ provider: "openai-chat", reason: "message 0 (user): a file part" })
        )
      )
      expect(Result.isFailure(OpenAiChatRequest.encode({ prompt }, { model: "m" }))).toBe(true)
      expect((yield* fake.stats).requests).toBe(0)
    }))
})

const nonStreaming = (provider: string, name: string) =>
  readFileSync(fileURLToPath(new URL(`./nonstreaming/${provider}/${provider}__${name}.json`, import.meta.url)))
const corpus = (provider: string, name: string) => `${Fixture.root}${provider}/${provider}__${name}.sse`
const expectedOf = (provider: string, name: string) =>
  JSON.parse(readFileSync(`${Fixture.root}${provider}/${provider}__${name}.expected.json`, "utf8"))

/** The same turn as the fixture's expected.json says, from an assembled turn. */
const outcomeOf = (turn: Assembler.AssembledTurn) => ({
  finishReason: turn.finishReason,
  text: turn.text,
  toolCalls: turn.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }))
})

/** A conversation that already called a tool and got its result: step 2 of a loop. */
const argsText = "{\"lead_id\": \"L-7\", \"title\": \"Call back\"}"
const resultText = "{\"id\":\"T-1\"}"
const stepTwo: ModelStream.ModelRequest = {
  prompt: Prompt.make([
    { role: "user", content: "New lead L-7." },
    {
      role: "assistant",
      content: [ModelStream.toolCallPart({
        id: "call_1",
        name: "create_task",
        argumentsText: argsText,
        arguments: JSON.parse(argsText)
      })]
    },
    {
      role: "tool",
      content: [ModelStream.toolResultPart({ id: "call_1", name: "create_task", isFailure: false, resultText })]
    }
  ]),
  tools: ModelStream.toolsOf(toolkit)
}

const fallbacks = (provider: string, reason: string) =>
  Metric.value(Metric.withAttributes(HttpModelStream.metrics.streamFallbacks, { provider, reason })).pipe(
    Effect.map((state) => state.count)
  )

describe("HttpModelStream: the four formats", () => {
  it.live("openai-responses and gemini: the endpoint, the key header, the request body, the streamed turn", () =>
    Effect.gen(function*() {
      for (
        const [provider, name, path, header] of [
          ["openai-responses", "parallel", "/v1/responses", "authorization"],
          [
            "gemini",
            "parallel-same-chunk",
            "/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
            "x-goog-api-key"
          ]
        ] as const
      ) {
        const seen: Array<FakeProvider.Request> = []
        const fake = yield* FakeProvider.make({
          plan: (req) => {
            seen.push(req)
            return { source: FakeProvider.fixture(corpus(provider, name)) }
          }
        })
        const base = provider === "gemini" ? `${fake.url}/v1beta` : `${fake.url}/v1`
        const options: HttpModelStream.Options = {
          provider,
          baseUrl: base,
          apiKey: Redacted.make("key-test-9876"),
          model: "gemini-test"
        }
        const exit = yield* turnOf(options, stepTwo)
        assert(Exit.isSuccess(exit))
        expect(outcomeOf(exit.value)).toMatchObject({
          finishReason: expectedOf(provider, name).finishReason,
          toolCalls: expectedOf(provider, name).toolCalls
        })
        const [sent] = seen
        expect(sent!.path).toBe(path)
        expect(FakeProvider.asksForStream(sent!)).toBe(true)
        expect(sent!.headers[header]).toBe(header === "authorization" ? "Bearer key-test-9876" : "key-test-9876")
        expect(sent!.rawBody).toBe(
          JSON.stringify(Result.getOrThrow(HttpModelStream.providerRequest(options, stepTwo)).body)
        )
      }
    }))

  it.live("the history goes over the wire byte for byte: the model's arguments text and the stored result text", () =>
    Effect.gen(function*() {
      const seen: Array<FakeProvider.Request> = []
      const fake = yield* FakeProvider.make({
        plan: (req) => {
          seen.push(req)
          return { source: FakeProvider.openAiChat({ text: "Done." }) }
        }
      })
      const exit = yield* turnOf({ provider: "openai-chat", baseUrl: fake.url, model: "m" }, stepTwo)
      assert(Exit.isSuccess(exit))
      const raw = seen[0]!.rawBody
      expect(raw).toContain(JSON.stringify(argsText))
      expect(raw).toContain(`{"role":"tool","tool_call_id":"call_1","content":${JSON.stringify(resultText)}}`)
      expect((seen[0]!.body as { tools: Array<unknown> }).tools).toHaveLength(1)
    }))
})

describe("HttpModelStream: the stream policy", () => {
  it.live("never: no stream asked (stream: false, no stream_options, accept JSON); the JSON answer through the gate", () =>
    Effect.gen(function*() {
      const seen: Array<FakeProvider.Request> = []
      const fake = yield* FakeProvider.make({
        plan: (req) => {
          seen.push(req)
          return {
            source: req.path.includes("messages")
              ? FakeProvider.anthropic(scenario)
              : FakeProvider.openAiChat(scenario),
            form: "asked"
          }
        }
      })
      for (const provider of ["openai-chat", "anthropic"] as const) {
        const exit = yield* turnOf({ provider, baseUrl: fake.url, model: "m", stream: "never" })
        assert(Exit.isSuccess(exit))
        expect(exit.value.text).toBe(scenario.text)
        expect(exit.value.toolCalls.map((c) => [c.name, c.arguments])).toEqual([
          ["create_task", { lead_id: "L-7", title: "Call back" }]
        ])
        expect(exit.value.finishReason).toBe(provider === "anthropic" ? "tool_use" : "tool_calls")
      }
      expect(
        seen.map((r) => [FakeProvider.asksForStream(r), (r.body as { stream?: unknown }).stream, r.headers.accept])
      ).toEqual([
        [false, false, "application/json"],
        [false, false, "application/json"]
      ])
      expect(seen[0]!.body).not.toHaveProperty("stream_options")
      expect((yield* fake.stats).log.map((r) => r.form)).toEqual(["json", "json"])
    }))

  it.live("never, gemini: POSTs to :generateContent and decodes the GenerateContentResponse", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({
        plan: { source: FakeProvider.bytes(nonStreaming("gemini", "parallel-same-name"), "gemini"), form: "json" }
      })
      const exit = yield* turnOf({ provider: "gemini", baseUrl: fake.url, model: "gemini-test", stream: "never" })
      assert(Exit.isSuccess(exit))
      expect(exit.value.toolCalls.map((c) => [c.id, c.name])).toEqual([[null, "lookup_contact"], [
        null,
        "lookup_contact"
      ]])
      expect((yield* fake.stats).log[0]!.path).toBe("/models/gemini-test:generateContent")
      // A streaming path given by the caller loses its stream method and alt=sse without a stream.
      const sent = Result.getOrThrow(HttpModelStream.providerRequest(
        {
          provider: "gemini",
          baseUrl: "https://example.test/v1",
          path: "/models/g:streamGenerateContent?alt=sse&key=k",
          model: "g"
        },
        request,
        false
      ))
      expect(sent.url).toBe("https://example.test/v1/models/g:generateContent?key=k")
    }))

  it.live("stream: a JSON answer is NotAnEventStream and a 400 that names streaming is not retried", () =>
    Effect.gen(function*() {
      const json = yield* FakeProvider.make({ plan: { source: FakeProvider.openAiChat(scenario), form: "json" } })
      const answered = yield* turnOf({ provider: "openai-chat", baseUrl: json.url, model: "m" })
      assert(Exit.isFailure(answered))
      expect(answered).toMatchObject({ cause: { reasons: [{ error: { _tag: "NotAnEventStream", found: "json" } }] } })
      const rejecting = yield* FakeProvider.make({
        plan: { source: FakeProvider.openAiChat(scenario), fault: { _tag: "StreamRejected" } }
      })
      const refused = yield* turnOf({ provider: "openai-chat", baseUrl: rejecting.url, model: "m" })
      expect(refused).toEqual(Exit.fail(
        new ModelStreamError.ProviderHttpError({
          status: 400,
          retryAfterMs: null,
          code: "unsupported_value",
          providerMessage:
            "Unsupported value: 'stream' does not support true with this model. Only the default (false) value is supported."
        })
      ))
      expect((yield* rejecting.stats).requests).toBe(1)
    }))

  it.live("fallback: a 400 that names streaming is retried once without a stream, counted and logged", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const collect = Logger.make((options) => {
        logs.push(`${options.logLevel}: ${String(options.message)}`)
      })
      for (
        const [provider, source] of [["openai-chat", FakeProvider.openAiChat(scenario)], [
          "anthropic",
          FakeProvider.anthropic(scenario)
        ], ["gemini", FakeProvider.bytes(nonStreaming("gemini", "single-tool"), "gemini")]] as const
      ) {
        const fake = yield* FakeProvider.make({
          plan: { source, form: "asked", fault: { _tag: "StreamRejected" } }
        })
        const exit = yield* turnOf({ provider, baseUrl: fake.url, model: "m", stream: "fallback" }).pipe(
          Effect.provide(Logger.layer([collect]))
        )
        assert(Exit.isSuccess(exit))
        expect(exit.value.toolCalls.map((c) => c.name)).toEqual(["create_task"])
        const log = (yield* fake.stats).log
        expect(log.map((r) => [r.streaming, r.status, r.form])).toEqual([[true, 400, null], [false, 200, "json"]])
        expect(yield* fallbacks(provider, "rejected")).toBe(1)
      }
      expect(logs.filter((line) => line.startsWith("Warn"))).toEqual(
        Array.from(
          { length: 3 },
          () =>
            "Warn: the provider refused a stream (HTTP 400: Unsupported value: 'stream' does not support true with this model. Only the default (false) value is supported.); retrying once without a stream"
        )
      )
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())))

  it.live("fallback: a server that ignores stream answers JSON, labelled or not: decoded whole, in one request", () =>
    Effect.gen(function*() {
      for (const contentType of ["application/json; charset=utf-8", null] as const) {
        const fake = yield* FakeProvider.make({
          plan: { source: FakeProvider.openAiChat(scenario), form: "json", contentType }
        })
        const exit = yield* turnOf({ provider: "openai-chat", baseUrl: fake.url, model: "m", stream: "fallback" })
        assert(Exit.isSuccess(exit))
        expect(exit.value.toolCalls.map((c) => c.arguments)).toEqual([{ lead_id: "L-7", title: "Call back" }])
        const [sent] = (yield* fake.stats).log
        expect([sent!.streaming, (yield* fake.stats).requests]).toEqual([true, 1])
      }
      expect(yield* fallbacks("openai-chat", "json_answer")).toBe(2)
      // An unlabelled event stream is still read as one, as it arrives.
      const sse = yield* FakeProvider.make({
        plan: { source: FakeProvider.openAiChat(scenario), contentType: null, paceMs: 5 }
      })
      const model = yield* HttpModelStream.make({
        provider: "openai-chat",
        baseUrl: sse.url,
        model: "m",
        stream: "fallback"
      })
      const batches = yield* model.stream(request, attempt).pipe(Stream.runCollect)
      expect(batches.filter((e) => e.text !== undefined).length).toBeGreaterThan(1)
      expect(yield* fallbacks("openai-chat", "json_answer")).toBe(2)
    }).pipe(
      Effect.provide(HttpTransport.layerNode),
      Effect.provideService(Metric.MetricRegistry, new Map())
    ))

  it.live("fallback: any other 400 is not retried; the retry gets what is left of the attempt's time", () =>
    Effect.gen(function*() {
      const other = yield* FakeProvider.make({
        plan: {
          source: FakeProvider.openAiChat(scenario),
          fault: {
            _tag: "Status",
            status: 400,
            body: JSON.stringify({
              error: {
                message: "Invalid 'tools[0].function.name': string does not match pattern.",
                type: "invalid_request_error",
                param: "tools[0].function.name",
                code: "invalid_value"
              }
            })
          }
        }
      })
      const refused = yield* turnOf({ provider: "openai-chat", baseUrl: other.url, model: "m", stream: "fallback" })
      expect(refused).toMatchObject({ cause: { reasons: [{ error: { _tag: "ProviderHttpError", status: 400 } }] } })
      expect((yield* other.stats).requests).toBe(1)
      // The 400 comes after 300 ms; the answer without a stream never comes: the retry's total budget
      // is the attempt's 1,000 ms less what the refusal took.
      const slow = yield* FakeProvider.make({
        plan: (req) =>
          FakeProvider.asksForStream(req)
            ? { source: FakeProvider.openAiChat(scenario), fault: { _tag: "StreamRejected" }, headersDelayMs: 300 }
            : { source: FakeProvider.openAiChat(scenario), form: "json", headersDelayMs: Infinity }
      })
      const timedOut = yield* turnOf(
        { provider: "openai-chat", baseUrl: slow.url, model: "m", stream: "fallback" },
        request,
        { number: 1, remainingMs: 1_000 }
      )
      assert(Exit.isFailure(timedOut))
      const error = (timedOut.cause.reasons[0] as { error: ModelStreamError.StreamTimeout }).error
      expect(error._tag).toBe("StreamTimeout")
      expect(error.phase).toBe("total")
      expect(error.budgetMs).toBeGreaterThan(0)
      expect(error.budgetMs).toBeLessThanOrEqual(700)
    }))

  it.live("the policy can be chosen per request", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ plan: { source: FakeProvider.openAiChat(scenario), form: "asked" } })
      const options: HttpModelStream.Options = {
        provider: "openai-chat",
        baseUrl: fake.url,
        model: "m",
        stream: (req) => req.tools?.some((tool) => tool.strict === true) ? "never" : "stream"
      }
      const Strict = Tool.make("create_task", {
        parameters: Schema.Struct({ lead_id: Schema.String, title: Schema.String })
      }).annotate(Tool.Strict, true)
      assert(Exit.isSuccess(yield* turnOf(options)))
      assert(Exit.isSuccess(yield* turnOf(options, { ...request, tools: ModelStream.toolsOf(Toolkit.make(Strict)) })))
      expect((yield* fake.stats).log.map((r) => [r.streaming, r.form])).toEqual([[true, "stream"], [false, "json"]])
    }))

  it("rejectsStreaming: a 400 whose code or message names streaming", () => {
    const error = (status: number, providerMessage: string, code: string | null = null) =>
      new ModelStreamError.ProviderHttpError({ status, retryAfterMs: null, code, providerMessage })
    const yes = [
      error(400, "Unsupported value: 'stream' does not support true with this model. Supported values are: false."),
      error(
        400,
        "Your organization must be verified to stream this model. Please go to: https://platform.openai.com/settings/organization/general and click on Verify Organization.",
        "unsupported_value"
      ),
      error(400, "The 'stream_options' parameter is only allowed when 'stream' is enabled."),
      error(400, "Streaming is not supported with strict function schemas")
    ]
    const no = [
      error(400, "Invalid 'tools[0].function.name': string does not match pattern."),
      error(500, "Unsupported value: 'stream' does not support true with this model."),
      error(400, "upstream connect error")
    ]
    expect(yes.map(HttpModelStream.rejectsStreaming)).toEqual([true, true, true, true])
    expect(no.map(HttpModelStream.rejectsStreaming)).toEqual([false, false, false])
  })
})
