/**
 * `EffectAi`'s errors quoted unbounded provider values: a long error code, or a long call id and
 * tool name in the reason of a call whose parameters cannot be written as JSON.
 */
import { describe, expect, it } from "@effect/vitest"
import { EffectAi } from "@toolgate/adapters"

const long = "x".repeat(100_000)

describe("EffectAi: errors carry bounded excerpts", () => {
  it("an error part with a long code", () => {
    const translate = EffectAi.translator()
    const event = translate({ type: "error", error: { _tag: long, message: long } } as unknown as EffectAi.Part)
    expect(event?.failure?._tag).toBe("ProviderStreamError")
    const failure = event!.failure as { code: string | null; providerMessage: string; message: string }
    expect(failure.code!.length).toBeLessThanOrEqual(200)
    expect(failure.providerMessage.length).toBeLessThanOrEqual(200)
    expect(failure.message.length).toBeLessThanOrEqual(600)
  })

  it("a tool call with a long id and name whose params cannot be written as JSON", () => {
    const translate = EffectAi.translator()
    let deep: unknown = {}
    for (let i = 0; i < 20_000; i++) deep = { a: deep }
    const event = translate({ type: "tool-call", id: long, name: long, params: deep } as unknown as EffectAi.Part)
    expect(event?.failure?._tag).toBe("MalformedStreamEvent")
    expect(event!.failure!.message.length).toBeLessThanOrEqual(600)
  })
})
