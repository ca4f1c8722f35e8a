/**
 * The webhook handler over real HTTP on 127.0.0.1, with effect's fetch client and Undici's: the
 * request it sends (a JSON POST, `Idempotency-Key` = the downstream key), and how each answer is
 * classified: 2xx JSON is the result; 429 and 503 (and no connection at all) are not applied;
 * any other 5xx, a dropped answer, a 2xx that is not JSON or whose body is cut are ambiguous; any
 * other status is the tool's terminal failure `{ status, message }`. Interrupting the handler
 * aborts the request. Through the executor, the same handler executes a call once and replays it.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, expect, it } from "@effect/vitest"
import { IdempotencyStore, ToolExecutor, WebhookHandler } from "@toolgate/runtime"
import { FakeCrm, LoopbackServer, ValidatedCall } from "@toolgate/testing"
import { Effect, Exit, Fiber, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import * as FetchHttpClient from "effect/http/FetchHttpClient"

const context = (downstreamKey = "tg1:sha256:downstream-1"): ToolExecutor.HandlerContext => ({
  key: "tg1:sha256:key-1",
  downstreamKey,
  fence: 1n,
  attempt: 1,
  generation: 1,
  takeover: false,
  toolCallId: "call_1",
  signal: new AbortController().signal
})

const params = { lead: "L-7", title: "Call back" }

/** A handler that posts to `url` and reads the answer's `id`. */
const handler = (url: string) =>
  WebhookHandler.handler({ url, parse: (json) => ({ id: String((json as { readonly id?: unknown }).id) }) })

/** The handler's outcome: its result, or its typed failure. */
const outcome = (url: string, ctx = context()) => Effect.result(handler(url).run(params, ctx))

/** A server that answers every POST with `status` and `body` (or destroys the socket with `drop`). */
const answering = (answer: { readonly status: number; readonly body: string } | "drop" | "cut") =>
  LoopbackServer.make(() => (req, res) =>
    LoopbackServer.readBody(req, () => {
      if (answer === "drop") {
        req.socket.destroy()
      } else if (answer === "cut") {
        res.writeHead(200, { "content-type": "application/json", "content-length": "100" })
        res.write("{\"id\":")
        setTimeout(() => res.socket?.destroy(), 20)
      } else {
        res.writeHead(answer.status, { "content-type": "application/json" })
        res.end(answer.body)
      }
    })
  )

const clients = [
  ["fetch", FetchHttpClient.layer],
  ["undici", NodeHttpClient.layerUndici]
] as const

for (const [name, client] of clients) {
  describe(`WebhookHandler over ${name}`, () => {
    it.live("POSTs the parameters as JSON with the downstream key as Idempotency-Key, and parses the answer", () =>
      Effect.gen(function*() {
        const crm = yield* FakeCrm.make()
        const result = yield* outcome(`${crm.url}/tools/create_task`, context("tg1:sha256:dk-42"))
        assert(result._tag === "Success")
        expect(result.success).toEqual({ id: "mut_000001" })
        const stats = yield* crm.stats
        expect(stats.log).toMatchObject([
          { lead: "L-7", action: "create_task", body: params, idempotencyKey: "tg1:sha256:dk-42" }
        ])
        // The same key again is the downstream's replay, not a second mutation.
        yield* outcome(`${crm.url}/tools/create_task`, context("tg1:sha256:dk-42"))
        expect((yield* crm.stats).mutations).toBe(1)
        expect((yield* crm.stats).replayed).toBe(1)
      }).pipe(Effect.provide(client)))

    it.live("sends body(params) when given", () =>
      Effect.gen(function*() {
        const crm = yield* FakeCrm.make()
        const custom = WebhookHandler.handler({
          url: `${crm.url}/tools/create_task`,
          body: (p: typeof params) => ({ ...p, lead: `lead-${p.lead}`, source: "webhook" }),
          parse: (json) => json
        })
        yield* custom.run(params, context())
        expect((yield* crm.stats).log[0]!.body).toEqual({ lead: "lead-L-7", title: "Call back", source: "webhook" })
      }).pipe(Effect.provide(client)))

    it.live("429 and 503 are not applied; 500 and 502 are ambiguous; 4xx is the tool's terminal failure", () =>
      Effect.gen(function*() {
        const statuses = [429, 503, 500, 502, 400, 409, 422]
        const crm = yield* FakeCrm.make({
          plan: (request) => {
            const status = Number(request.action)
            return status === 409 || status === 422 || status === 400
              ? { _tag: "Reject", status, message: `rejected with ${status}` }
              : { _tag: "FailBefore", status }
          }
        })
        const seen: Array<unknown> = []
        for (const status of statuses) {
          const result = yield* outcome(`${crm.url}/tools/${status}`, context(`tg1:sha256:dk-${status}`))
          assert(result._tag === "Failure")
          seen.push(result.failure)
        }
        expect(seen.map((f) => (f as { readonly _tag?: string })._tag ?? "terminal")).toEqual([
          "NotApplied",
          "NotApplied",
          "Ambiguous",
          "Ambiguous",
          "terminal",
          "terminal",
          "terminal"
        ])
        expect(seen[0]).toBeInstanceOf(ToolExecutor.NotApplied)
        expect(seen[0]).toMatchObject({ detail: "the webhook answered 429" })
        expect(seen[2]).toBeInstanceOf(ToolExecutor.Ambiguous)
        expect(seen[2]).toMatchObject({ detail: "the webhook answered 500" })
        expect(seen[5]).toEqual({
          status: 409,
          message: JSON.stringify({ error: { code: "conflict", message: "rejected with 409" } })
        })
        expect(Schema.is(WebhookHandler.WebhookFailure)(seen[6])).toBe(true)
        expect((yield* crm.stats).mutations).toBe(0)
      }).pipe(Effect.provide(client)))

    it.live("a refused connection is not applied; an answer dropped after the request is ambiguous", () =>
      Effect.gen(function*() {
        // A port that was listening a moment ago and no longer is.
        const closed = yield* Effect.scoped(Effect.map(answering({ status: 200, body: "{}" }), (s) => s.url))
        const refused = yield* outcome(`${closed}/tools/x`)
        assert(refused._tag === "Failure")
        expect(refused.failure).toBeInstanceOf(ToolExecutor.NotApplied)
        expect(refused.failure).toMatchObject({ detail: "the webhook refused the connection" })

        const crm = yield* FakeCrm.make({ plan: () => ({ _tag: "ApplyThenDrop" }) })
        const dropped = yield* outcome(`${crm.url}/tools/create_task`)
        assert(dropped._tag === "Failure")
        expect(dropped.failure).toBeInstanceOf(ToolExecutor.Ambiguous)
        expect((dropped.failure as ToolExecutor.Ambiguous).detail).toMatch(
          /^the webhook connection failed after the request was sent \(/
        )
        expect((yield* crm.stats).mutations).toBe(1)
      }).pipe(Effect.provide(client)))

    it.live("a 2xx that is not JSON, or whose body is cut, is ambiguous (it may have applied)", () =>
      Effect.gen(function*() {
        const text = yield* answering({ status: 200, body: "OK" })
        const notJson = yield* outcome(`${text.url}/x`)
        assert(notJson._tag === "Failure")
        expect(notJson.failure).toEqual(
          new ToolExecutor.Ambiguous({ detail: "the webhook answered 200 with a body that is not JSON" })
        )
        const cut = yield* answering("cut")
        const lost = yield* outcome(`${cut.url}/x`)
        assert(lost._tag === "Failure")
        expect(lost.failure).toBeInstanceOf(ToolExecutor.Ambiguous)
        expect((lost.failure as ToolExecutor.Ambiguous).detail).toMatch(
          /^the webhook answered 200 and its body was lost/
        )
        // An empty 2xx body is the JSON null.
        const empty = yield* answering({ status: 204, body: "" })
        const nothing = yield* Effect.result(
          WebhookHandler.handler({ url: `${empty.url}/x`, parse: (json) => json }).run(params, context())
        )
        expect(nothing).toMatchObject({ _tag: "Success", success: null })
      }).pipe(Effect.provide(client)))

    it.live(
      `interrupting the handler aborts the request at once${
        name === "undici" ? " and closes the webhook's socket" : ""
      }`,
      () =>
        Effect.gen(function*() {
          const crm = yield* FakeCrm.make({ plan: () => ({ _tag: "ApplyThenStall" }) })
          const fiber = yield* Effect.forkChild(outcome(`${crm.url}/tools/create_task`), { startImmediately: true })
          // Wait until the CRM has the request, then interrupt.
          for (let i = 0; i < 400 && (yield* crm.stats).mutations === 0; i++) yield* Effect.sleep("5 millis")
          expect((yield* crm.stats).mutations).toBe(1)
          yield* Fiber.interrupt(fiber).pipe(Effect.timeout("1 second"))
          const exit = yield* Fiber.await(fiber)
          expect(Exit.hasInterrupts(exit)).toBe(true)
          // Node's fetch keeps an aborted request's connection until the server answers; Undici closes it.
          if (name === "undici") expect(yield* crm.awaitOpenSockets(0)).toBe(0)
        }).pipe(Effect.provide(client))
    )
  })
}

describe("WebhookHandler through the ToolExecutor", () => {
  const CreateTask = Tool.make("create_task", {
    parameters: Schema.Struct({ lead: Schema.String, title: Schema.String }),
    success: Schema.Struct({ id: Schema.String }),
    failure: WebhookHandler.WebhookFailure
  })
  const Crm = Toolkit.make(CreateTask)

  it.live("executes a call once, with the record's downstream key, and replays it without a second POST", () =>
    Effect.gen(function*() {
      const crm = yield* FakeCrm.make()
      const executor = yield* ToolExecutor.make(Crm, { create_task: handler(`${crm.url}/tools/create_task`) })
      const scope = { tenant: "acme", turn: "lead-7" }
      const first = yield* executor.execute(ValidatedCall.make(CreateTask, params), { scope })
      const again = yield* executor.execute(ValidatedCall.make(CreateTask, params), { scope })
      assert(first._tag === "Executed")
      expect(again).toMatchObject({ _tag: "Replayed", value: first.value, json: first.json })
      const stats = yield* crm.stats
      expect(stats.requests).toBe(1)
      expect(stats.log[0]!.idempotencyKey).toBe(first.downstreamKey)
    }).pipe(Effect.provide(Layer.merge(IdempotencyStore.layerMemory, FetchHttpClient.layer))))

  it.live("a 503 releases the record: the next call runs the webhook again and succeeds", () =>
    Effect.gen(function*() {
      const crm = yield* FakeCrm.make({
        plan: (request) => request.attempt === 1 ? { _tag: "FailBefore", status: 503 } : undefined
      })
      const executor = yield* ToolExecutor.make(Crm, { create_task: handler(`${crm.url}/tools/create_task`) })
      const scope = { tenant: "acme", turn: "lead-8" }
      const failed = yield* Effect.exit(executor.execute(ValidatedCall.make(CreateTask, params), { scope }))
      assert(Exit.isFailure(failed))
      const done = yield* executor.execute(ValidatedCall.make(CreateTask, params), { scope })
      expect(done._tag).toBe("Executed")
      expect((yield* crm.stats).mutations).toBe(1)
    }).pipe(Effect.provide(Layer.merge(IdempotencyStore.layerMemory, FetchHttpClient.layer))))

  it.live("a dropped answer parks the record unknown: the call is never sent again (manual recovery)", () =>
    Effect.gen(function*() {
      const crm = yield* FakeCrm.make({ plan: () => ({ _tag: "ApplyThenDrop" }) })
      const executor = yield* ToolExecutor.make(Crm, { create_task: handler(`${crm.url}/tools/create_task`) })
      const scope = { tenant: "acme", turn: "lead-9" }
      const first = yield* Effect.flip(executor.execute(ValidatedCall.make(CreateTask, params), { scope }))
      const second = yield* Effect.flip(executor.execute(ValidatedCall.make(CreateTask, params), { scope }))
      expect([first._tag, second._tag]).toEqual(["OutcomeUnknown", "OutcomeUnknown"])
      expect((yield* crm.stats).requests).toBe(1)
    }).pipe(Effect.provide(Layer.merge(IdempotencyStore.layerMemory, FetchHttpClient.layer))))
})
