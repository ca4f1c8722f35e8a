/**
 * `ToolCall.validate` against effect/ai Schema tools, and the one way both validation paths write
 * a `ToolArgumentsInvalid`: the first issue's path, every issue as `path: message`, bounded.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Assembler, ToolCall } from "@toolgate/core"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

const CreateTask = Tool.make("create_task", {
  parameters: Schema.Struct({
    lead: Schema.String,
    seats: Schema.Number,
    contact: Schema.optionalKey(Schema.Struct({ email: Schema.String }))
  }),
  success: Schema.Struct({ id: Schema.String })
})
const Crm = Toolkit.make(CreateTask)

const turn = (args: Record<string, unknown>, name = "create_task") =>
  new Assembler.AssembledTurn({
    text: "",
    finishReason: "tool_calls",
    toolCalls: [
      new Assembler.AssembledToolCall({
        index: 3,
        id: "call_3",
        name,
        argumentsText: JSON.stringify(args),
        arguments: args
      })
    ]
  })

describe("ToolCall.validate", () => {
  it.effect("gives typed calls for valid arguments", () =>
    Effect.gen(function*() {
      const [call] = yield* ToolCall.validate(Crm)(turn({ lead: "l-1", seats: 2 }))
      expect(call!.params).toEqual({ lead: "l-1", seats: 2 })
      expect(call!.name).toBe("create_task")
    }))

  it.effect("lists every issue as path: message on one line", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(ToolCall.validate(Crm)(turn({ seats: "2", contact: { email: 1 } })))
      assert(error._tag === "ToolArgumentsInvalid")
      expect(error.index).toBe(3)
      expect(error.id).toBe("call_3")
      expect(error.toolName).toBe("create_task")
      expect(error.path).toBe("lead")
      expect(error.issues).toBe("lead: Missing key; seats: Expected number; contact.email: Expected string")
      expect(error.message).toBe(`tool call 3 (create_task) has invalid arguments: ${error.issues}`)
    }))

  it.effect("names an unknown tool and the known ones", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(ToolCall.validate(Crm)(turn({}, "drop_table")))
      assert(error._tag === "UnknownTool")
      expect(error.message).toBe("tool call 3 names an unknown tool \"drop_table\" (known: create_task)")
    }))
})

describe("ToolCall.argumentsInvalid and formatPath", () => {
  const call = { index: 0, id: null, name: "t" }

  it("writes paths readably, quoting keys that are not identifiers", () => {
    expect(ToolCall.formatPath([])).toBe("")
    expect(ToolCall.formatPath(["items", 2, "sku"])).toBe("items[2].sku")
    expect(ToolCall.formatPath(["x-key", "a.b", "ok_1", 0])).toBe("[\"x-key\"][\"a.b\"].ok_1[0]")
    expect(ToolCall.formatPath([{ key: "a" }, { key: 1 }])).toBe("a[1]")
  })

  it("keeps the first issue's path, drops repeated lines and bounds the rest", () => {
    const error = ToolCall.argumentsInvalid(call, [
      { path: ["a"], message: "is required" },
      { path: ["a"], message: "is required" },
      { path: [], message: "must be object" }
    ])
    expect(error.path).toBe("a")
    expect(error.issues).toBe("a: is required; must be object")
    const many = Array.from({ length: 40 }, (_, i) => ({ path: [`member_${i}`], message: "is not declared" }))
    const bounded = ToolCall.argumentsInvalid(call, many)
    expect(bounded.issues.length).toBeLessThanOrEqual(220)
    expect(bounded.issues).toMatch(/^member_0: is not declared; member_1: .*; and \d+ more$/)
    const long = ToolCall.argumentsInvalid(call, [{ path: [], message: "x".repeat(1000) }])
    expect(long.issues.length).toBeLessThanOrEqual(200)
  })
})
