/**
 * Reading a model request body for the tool results it sends back, in the four providers' request
 * formats: what `FakeProvider.stepOf` and `FakeProvider.toolResultsOf` count.
 *
 * @internal
 */

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const arrayOf = (u: unknown): ReadonlyArray<unknown> => Array.isArray(u) ? u : []

/**
 * The tool results a request body carries, in groups: one group per step whose results it sends
 * back. Read in each provider's request format: OpenAI Chat (a run of `role: "tool"` messages),
 * OpenAI Responses (a run of `function_call_output` input items), Anthropic (a user message of
 * `tool_result` blocks), Gemini (a content of `functionResponse` parts).
 */
export const resultGroups = (body: unknown): ReadonlyArray<number> => {
  if (!isObject(body)) return []
  const groups: Array<number> = []
  const runs = (items: ReadonlyArray<unknown>, isResult: (item: unknown) => boolean) => {
    let run = 0
    for (const item of items) {
      if (isResult(item)) run++
      else if (run > 0) {
        groups.push(run)
        run = 0
      }
    }
    if (run > 0) groups.push(run)
  }
  if (Array.isArray(body.contents)) {
    for (const content of body.contents) {
      const n = arrayOf(isObject(content) ? content.parts : undefined).filter((p) =>
        isObject(p) && p.functionResponse !== undefined
      ).length
      if (n > 0) {
        groups.push(n)
      }
    }
  } else if (Array.isArray(body.input)) {
    runs(body.input, (item) => isObject(item) && item.type === "function_call_output")
  } else if (Array.isArray(body.messages)) {
    const blocks = (m: unknown) =>
      isObject(m) ? arrayOf(m.content).filter((b) => isObject(b) && b.type === "tool_result").length : 0
    if (body.messages.some((m) => blocks(m) > 0)) {
      for (const m of body.messages) if (blocks(m) > 0) groups.push(blocks(m))
    } else {
      runs(body.messages, (m) => isObject(m) && m.role === "tool")
    }
  }
  return groups
}
