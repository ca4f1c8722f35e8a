/**
 * The agent loop toolgate replaces, written the way many teams write it, for the demo's
 * side-by-side row: each step it POSTs the conversation, concatenates argument deltas per index,
 * executes a call as soon as its arguments hold a complete JSON object (its braces balance: before
 * the finish, and whatever follows the object), deduplicates
 * executions by the provider's tool-call id, appends the results and asks again, until a step
 * calls no tool; a failed request is retried from scratch. It never checks the finish reason and
 * keeps no record of a turn: a delivery of the same lead starts the conversation over and asks
 * the model every step again. Plain async code on `fetch`, deliberately: this is the baseline,
 * not part of the library.
 *
 * @since 0.1.0
 */
import { contactOf, type Lead } from "./DemoScenario.js"

/**
 * What the naive pipeline did.
 *
 * - `attempts`: model requests; `retries`: those that repeated a failed one.
 * - `assembled`: calls it acted on; `executed`: the CRM requests it sent for them.
 * - `corrupted`: executions a correct pipeline would never have made: from a step that must be
 *   rejected (token limit, concatenated arguments), or with arguments that differ from the
 *   model's intended call.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stats {
  attempts: number
  retries: number
  assembled: number
  executed: number
  rejected: Record<string, number>
  corrupted: number
}

/**
 * An empty {@link Stats}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const emptyStats = (): Stats => ({
  attempts: 0,
  retries: 0,
  assembled: 0,
  executed: 0,
  rejected: {},
  corrupted: 0
})

const sameArguments = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** Where the first complete top-level JSON object of `text` ends (its braces balance), if it does. */
const firstObjectEnd = (text: string): number | undefined => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === "\\") i++
      else if (c === "\"") inString = false
    } else if (c === "\"") inString = true
    else if (c === "{") depth++
    else if (c === "}" && --depth === 0) return i + 1
  }
  return undefined
}

interface ToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: string
  readonly result: string
}

/**
 * One read of the body, rejected when `signal` aborts: undici (6.x, Node 22's `fetch`) can leave a
 * read pending for ever when the abort lands after the whole body arrived but before the stream
 * was read to its end (nodejs/undici#4089; seen here as the naive loop parked at `reader.read()`
 * with no socket left).
 */
const readOrAbort = (
  reader: ReadableStreamDefaultReader<Uint8Array>,
  signal: AbortSignal
): Promise<ReadableStreamReadResult<Uint8Array>> => {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener("abort", onAbort, { once: true })
    reader.read().then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort))
  })
}

/** One step: its request, up to 4 attempts 100 ms apart with a 1 s read timeout; the calls it executed. */
const step = async (
  lead: Lead,
  stepNumber: number,
  messages: ReadonlyArray<unknown>,
  options: Options
): Promise<ReadonlyArray<ToolCall> | undefined> => {
  const { stats } = options
  const intended = lead.steps[stepNumber - 1]?.calls ?? []
  for (let attempt = 1; attempt <= 4; attempt++) {
    if (attempt > 1) {
      stats.retries++
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    stats.attempts++
    const executed: Array<ToolCall> = []
    const controller = new AbortController()
    let timer = setTimeout(() => controller.abort(), 2000)
    try {
      const response = await fetch(options.providerUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...options.body, messages }),
        signal: controller.signal
      })
      if (!response.ok || response.body === null) {
        await response.body?.cancel()
        continue
      }
      const args = new Map<number, string>()
      const ids = new Map<number, string>()
      const names = new Map<number, string>()
      const done = new Set<string>()
      const decoder = new TextDecoder()
      let pending = ""
      const reader = response.body.getReader()
      while (true) {
        clearTimeout(timer)
        timer = setTimeout(() => controller.abort(), 1000)
        const { done: ended, value } = await readOrAbort(reader, controller.signal)
        // the read timeout covers the read only, not the calls executed below
        clearTimeout(timer)
        if (ended) break
        pending += decoder.decode(value, { stream: true })
        const lines = pending.split("\n")
        pending = lines.pop()!
        for (const line of lines) {
          if (!line.startsWith("data: ") || line === "data: [DONE]") continue
          const chunk = JSON.parse(line.slice(6))
          for (const entry of chunk.choices?.[0]?.delta?.tool_calls ?? []) {
            const index = entry.index ?? 0
            if (entry.id) ids.set(index, entry.id)
            if (entry.function?.name) names.set(index, entry.function.name)
            args.set(index, (args.get(index) ?? "") + (entry.function?.arguments ?? ""))
            const end = firstObjectEnd(args.get(index)!)
            if (end === undefined) continue
            let parsed: unknown
            try {
              parsed = JSON.parse(args.get(index)!.slice(0, end))
            } catch {
              continue
            }
            const id = ids.get(index) ?? `${index}`
            if (done.has(id)) continue
            done.add(id)
            stats.assembled++
            const name = names.get(index) ?? "unknown"
            const meant = intended.find((c) => c.name === name)
            // a turn that must be rejected at its fault step: nothing from that step on may run
            if ((!lead.actionable && stepNumber >= lead.faultStep) || meant === undefined) stats.corrupted++
            else if (!sameArguments(meant.arguments, parsed)) stats.corrupted++
            let result: string
            if (name === "lookup_contact") {
              result = JSON.stringify(contactOf(parsed as { lead_id: string; email: string }))
            } else {
              result = await fetch(`${options.crmUrl}/tools/${name}`, {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify({ lead: lead.id, action: name, ...(parsed as object) })
              }).then((r) => r.text(), () => `{"error":"the CRM did not answer"}`)
              stats.executed++
              // the follow-ups fire on the tool event, whatever became of the call
              if (name === "assign_owner") await notify(options, lead.id, parsed)
            }
            executed.push({ id, name, arguments: args.get(index)!, result })
          }
        }
      }
      clearTimeout(timer)
      return executed
    } catch {
      clearTimeout(timer)
      const tag = controller.signal.aborted ? "ReadTimeout" : "NetworkError"
      if (attempt === 4) stats.rejected[tag] = (stats.rejected[tag] ?? 0) + 1
      // the calls it already executed stay executed: the retry asks the model again
    }
  }
  return undefined
}

/** The two follow-ups of an owner assignment, sent at once and never recorded. */
const notify = async (options: Options, lead: string, parsed: unknown): Promise<void> => {
  const owner = (parsed as { owner_id?: unknown }).owner_id
  const post = (url: string, body: unknown) =>
    fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
      .then((r) => r.text(), () => "")
  await Promise.all([
    post(options.slackUrl, { event: "rep_notified", lead, owner }),
    post(options.adsUrl, { event: "conversion", lead })
  ])
}

/**
 * Where to send a lead and what to count it in.
 *
 * - `body`: the request body without `messages` (model, tools, stream options, `user`).
 * - `prompt`: the conversation's first messages.
 * - `slackUrl`, `adsUrl`: the rep notification and the conversion import, POSTed after every
 *   `assign_owner` the loop sends (on the tool event, as such pipelines do).
 * - `crashAfterStep`: stop after that step's calls executed, as a worker that crashed there.
 * - `afterStep`: called once each step's calls have executed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly providerUrl: string
  readonly crmUrl: string
  /** Where the rep notification and the conversion import go (see the demo's receivers). */
  readonly slackUrl: string
  readonly adsUrl: string
  readonly body: Readonly<Record<string, unknown>>
  readonly prompt: ReadonlyArray<unknown>
  readonly stats: Stats
  readonly crashAfterStep?: number | undefined
  readonly afterStep?: ((step: number) => void) | undefined
}

/**
 * Runs one delivery of a lead through the naive loop: at most 8 steps.
 *
 * @since 0.1.0
 * @category running
 */
export const runLead = async (lead: Lead, options: Options): Promise<void> => {
  const messages: Array<unknown> = [...options.prompt]
  for (let n = 1; n <= 8; n++) {
    const calls = await step(lead, n, messages, options)
    if (calls === undefined) return
    options.afterStep?.(n)
    if (calls.length === 0 || n === options.crashAfterStep) return
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }))
    })
    for (const c of calls) messages.push({ role: "tool", tool_call_id: c.id, content: c.result })
  }
}
