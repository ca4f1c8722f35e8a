/**
 * A tool's key policy in a tools file: the `"idempotency"` member beside `"webhook"` (or inside
 * `"function"`) in every provider's shape, checked by `KeyPolicy.make`, refused with a one-line
 * `ToolDefinitionError` naming the tool and the member; and carried by `ToolValidator.toToolkit`
 * into the tool's `IdempotencyKey.Policy` annotation.
 */
import { describe, expect, it } from "@effect/vitest"
import { ToolDefinition, ToolsFile, ToolValidator } from "@toolgate/adapters"
import { IdempotencyKey } from "@toolgate/core"
import { Context, Effect } from "effect"

const read = (json: unknown) => Effect.runSync(ToolDefinition.fromJson(json))
const reason = (json: unknown) => Effect.runSync(Effect.flip(ToolDefinition.fromJson(json))).message

const schema = { type: "object", properties: { lead_id: { type: "string" }, title: { type: "string" } } }
const idempotency = {
  keyFields: ["lead_id"],
  freeText: ["title"],
  window: { size: "hour", timeZone: "Europe/Berlin" }
}

describe("tools file: the idempotency member", () => {
  it("is read in every shape, beside or inside function", () => {
    const tools = read([
      { type: "function", function: { name: "a", parameters: schema }, webhook: "http://x/a", idempotency },
      { type: "function", function: { name: "b", parameters: schema, idempotency } },
      { type: "function", name: "c", parameters: schema, idempotency },
      { name: "d", input_schema: schema, idempotency },
      { functionDeclarations: [{ name: "e", parametersJsonSchema: schema, idempotency }] },
      { name: "f", input_schema: schema }
    ])
    for (const tool of tools.slice(0, 5)) {
      expect(tool.keyPolicy?.input).toEqual({
        keyFields: ["lead_id"],
        freeText: ["title"],
        window: { size: "PT1H", timeZone: "Europe/Berlin" }
      })
    }
    expect(tools[5]!.keyPolicy).toBeUndefined()
  })

  it.each([
    [{ keyFields: [] }, "tool a: idempotency.keyFields: must name at least one field"],
    [{ keyfields: ["lead_id"] }, "tool a: idempotency.keyfields: is not a key policy member"],
    [{ window: { size: "PT7M", timeZone: "UTC" } }, "tool a: idempotency.window.size: PT7M does not divide a day"],
    [{ window: { size: "hour" } }, "tool a: idempotency.window.timeZone: must be an IANA time-zone name"],
    ["lead_id", "tool a: idempotency: must be an object"]
  ])("refuses %j in one line", (policy, says) => {
    const message = reason([{ type: "function", function: { name: "a", parameters: schema }, idempotency: policy }])
    expect(message.startsWith(says)).toBe(true)
    expect(message).not.toContain("\n")
  })

  it("refuses two idempotency members", () => {
    expect(
      reason([{ type: "function", function: { name: "a", parameters: schema, idempotency }, idempotency }])
    ).toMatch(/^tool a: it has two "idempotency" members/)
  })

  it("becomes the tool's IdempotencyKey.Policy annotation in the toolkit", () => {
    const file = Effect.runSync(ToolsFile.parse(JSON.stringify([
      { type: "function", function: { name: "a", parameters: schema }, webhook: "http://x/a", idempotency },
      { type: "function", function: { name: "b", parameters: schema }, webhook: "http://x/b" }
    ])))
    const toolkit = ToolValidator.toToolkit(file.validator)
    expect(Context.get(toolkit.tools.a!.annotations, IdempotencyKey.Policy)?.keyFields).toEqual(["lead_id"])
    expect(Context.get(toolkit.tools.b!.annotations, IdempotencyKey.Policy)).toBeUndefined()
  })
})
