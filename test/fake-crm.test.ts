/**
 * The fake CRM's books and faults, over real HTTP on 127.0.0.1: duplicates counted per
 * (lead, action), `Idempotency-Key` honoured (replay, 422 on reuse with another body, 409 while
 * in flight), and each fault applied exactly as documented.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { FakeCrm } from "@toolgate/testing"
import { Effect } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"

interface Answer {
  readonly status: number
  readonly body: unknown
  readonly replayed: boolean
}

/** POSTs a JSON body; an answer, or the `HttpClientError` reason tag when none came. */
const post = (url: string, body: unknown, options?: { readonly key?: string; readonly timeoutMs?: number }) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.post(url).pipe(HttpClientRequest.bodyJsonUnsafe(body))
    if (options?.key !== undefined) request = HttpClientRequest.setHeader(request, "idempotency-key", options.key)
    const response = yield* client.execute(request)
    return {
      status: response.status,
      body: yield* response.json,
      replayed: response.headers["idempotent-replayed"] === "true"
    } satisfies Answer
  }).pipe(
    Effect.scoped,
    Effect.timeoutOrElse({ duration: options?.timeoutMs ?? 2_000, orElse: () => Effect.succeed("timeout" as const) }),
    Effect.catchTag("HttpClientError", (e) => Effect.succeed(e.reason._tag))
  )

const mutation = (lead: string, fault: string) => ({ lead, action: "update_stage", stage: "won", fault })

describe("FakeCrm", () => {
  it.live("records every mutation by (lead, action) and counts duplicates", () =>
    Effect.gen(function*() {
      const crm = yield* FakeCrm.make()
      const url = `${crm.url}/mutations`
      for (
        const body of [
          { lead: "L1", action: "update_stage", stage: "qualified" },
          { lead: "L1", action: "update_stage", stage: "qualified" },
          { lead: "L1", action: "update_stage", stage: "won" },
          { lead: "L1", action: "add_note", text: "called" },
          { lead: "L2", action: "update_stage", stage: "lost" }
        ]
      ) {
        expect(yield* post(url, body)).toMatchObject({ status: 200, body: { status: "applied" }, replayed: false })
      }
      // The action can come from the path, as a webhook per tool does it.
      expect(yield* post(`${crm.url}/tools/add_note`, { lead: "L2", text: "emailed" })).toMatchObject({
        status: 200,
        body: { lead: "L2", action: "add_note" }
      })
      expect(yield* post(url, { action: "update_stage" })).toMatchObject({ status: 400 })
      const stats = yield* crm.stats
      expect(stats).toMatchObject({ requests: 7, mutations: 6, duplicates: 2, rejected: 1 })
      expect(stats.byKey).toEqual({ "L1/update_stage": 3, "L1/add_note": 1, "L2/update_stage": 1, "L2/add_note": 1 })
      expect(stats.log.map((m) => m.id)).toEqual([
        "mut_000001",
        "mut_000002",
        "mut_000003",
        "mut_000004",
        "mut_000005",
        "mut_000006"
      ])
    }).pipe(Effect.provide(NodeHttpClient.layerUndici)))

  it.live("honours Idempotency-Key: a repeat gets the stored answer, another body 422, a concurrent repeat 409", () =>
    Effect.gen(function*() {
      const crm = yield* FakeCrm.make({ latencyMs: 100 })
      const url = `${crm.url}/mutations`
      const body = { lead: "L7", action: "create_task", title: "Call back" }
      const first = yield* post(url, body, { key: "k-1" })
      const again = yield* post(url, body, { key: "k-1" })
      expect(first).toMatchObject({ status: 200, replayed: false })
      expect(again).toEqual({ ...(first as Answer), replayed: true })
      expect(yield* post(url, { ...body, title: "Something else" }, { key: "k-1" })).toMatchObject({
        status: 422,
        body: { error: { code: "idempotency_key_reused" } }
      })
      const [a, b] = yield* Effect.all([post(url, body, { key: "k-2" }), post(url, body, { key: "k-2" })], {
        concurrency: "unbounded"
      })
      expect([a, b].map((r) => typeof r === "object" ? r.status : r).toSorted()).toEqual([200, 409])
      // Without a key the same body is a new mutation.
      yield* post(url, body)
      const stats = yield* crm.stats
      expect(stats).toMatchObject({ mutations: 3, replayed: 1, duplicates: 2, rejected: 2 })
    }).pipe(Effect.provide(NodeHttpClient.layerUndici)))

  it.live("faults: FailBefore applies nothing, ApplyThenDrop and ApplyThenStall apply without an answer, Reject is terminal", () =>
    Effect.gen(function*() {
      const crm = yield* FakeCrm.make({
        plan: (req) => {
          const fault = (req.body as { fault?: string }).fault
          if (req.attempt > 1 && fault !== "Reject") return undefined
          switch (fault) {
            case "FailBefore":
              return { _tag: "FailBefore", retryAfter: 1 }
            case "ApplyThenDrop":
              return { _tag: "ApplyThenDrop" }
            case "ApplyThenStall":
              return { _tag: "ApplyThenStall" }
            case "Reject":
              return { _tag: "Reject", status: 422, message: "stage is not a known value" }
            default:
              return undefined
          }
        }
      })
      const url = `${crm.url}/mutations`

      // 503 before applying; a retry with the same key applies once.
      expect(yield* post(url, mutation("A", "FailBefore"), { key: "a" })).toMatchObject({ status: 503 })
      expect((yield* crm.stats).mutations).toBe(0)
      expect(yield* post(url, mutation("A", "FailBefore"), { key: "a" })).toMatchObject({
        status: 200,
        replayed: false
      })

      // Applied, then the socket is destroyed: the client sees a transport error. A retry with the
      // key learns the stored result; a retry without one duplicates the mutation.
      expect(yield* post(url, mutation("B", "ApplyThenDrop"), { key: "b" })).toBe("TransportError")
      expect(yield* post(url, mutation("B", "ApplyThenDrop"), { key: "b" })).toMatchObject({
        status: 200,
        replayed: true
      })
      expect(yield* post(url, mutation("C", "ApplyThenDrop"))).toBe("TransportError")
      expect(yield* post(url, mutation("C", "ApplyThenDrop"))).toMatchObject({ status: 200, replayed: false })

      // Applied, then no answer: the client times out.
      expect(yield* post(url, mutation("D", "ApplyThenStall"), { key: "d", timeoutMs: 150 })).toBe("timeout")
      expect(yield* post(url, mutation("D", "ApplyThenStall"), { key: "d" })).toMatchObject({
        status: 200,
        replayed: true
      })

      // Terminal: not applied, and a repeat with the key gets the same rejection.
      const rejected = yield* post(url, mutation("E", "Reject"), { key: "e" })
      expect(rejected).toMatchObject({ status: 422, body: { error: { message: "stage is not a known value" } } })
      expect(yield* post(url, mutation("E", "Reject"), { key: "e" })).toEqual({
        ...(rejected as Answer),
        replayed: true
      })

      const stats = yield* crm.stats
      expect(stats).toMatchObject({
        mutations: 5,
        duplicates: 1,
        failedBefore: 1,
        ambiguous: 3,
        replayed: 3,
        rejected: 1
      })
      expect(stats.byKey).toEqual({
        "A/update_stage": 1,
        "B/update_stage": 1,
        "C/update_stage": 2,
        "D/update_stage": 1
      })
      expect(stats.log.filter((m) => !m.answered).map((m) => m.lead)).toEqual(["B", "C", "D"])
    }).pipe(Effect.provide(NodeHttpClient.layerUndici)))

  it.live("GET answers the books as JSON", () =>
    Effect.gen(function*() {
      const crm = yield* FakeCrm.make()
      yield* post(crm.url, { lead: "L1", action: "a" })
      const client = yield* HttpClient.HttpClient
      const books = yield* client.get(crm.url).pipe(Effect.flatMap((r) => r.json), Effect.scoped)
      expect(books).toMatchObject({ mutations: 1, duplicates: 0, byKey: { "L1/a": 1 } })
    }).pipe(Effect.provide(NodeHttpClient.layerUndici)))
})
