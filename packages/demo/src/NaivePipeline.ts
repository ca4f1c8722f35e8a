/**
 * The pipeline toolgate replaces, written the way many teams write it, for the demo's
 * side-by-side row: it concatenates argument deltas per index, executes a call as soon as its
 * arguments first parse as JSON (before the finish), deduplicates executions by the provider's
 * tool-call id, and retries a failed request from scratch. It never checks the finish reason.
 * Plain async code on `fetch`, deliberately: this is the baseline, not part of the library.
 *
 * @since 0.1.0
 */
import type { Lead } from "./DemoScenario.js"

/**
 * What the naive pipeline did.
 *
 * - `corrupted`: executions a correct pipeline would never have made: from a turn that must be
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

/**
 * Runs one lead through the naive pipeline: up to 4 attempts, 100 ms apart, a 1 s read timeout.
 *
 * @since 0.1.0
 * @category running
 */
export const runLead = async (
  lead: Lead,
  options: { readonly providerUrl: string; readonly crmUrl: string; readonly body: unknown; readonly stats: Stats }
): Promise<void> => {
  const { stats } = options
  const executedIds = new Set<string>()
  for (let attempt = 1; attempt <= 4; attempt++) {
    if (attempt > 1) {
      stats.retries++
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    stats.attempts++
    const controller = new AbortController()
    let timer = setTimeout(() => controller.abort(), 2000)
    try {
      const response = await fetch(options.providerUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(options.body),
        signal: controller.signal
      })
      if (!response.ok || response.body === null) {
        await response.body?.cancel()
        continue
      }
      const args = new Map<number, string>()
      const ids = new Map<number, string>()
      const names = new Map<number, string>()
      const decoder = new TextDecoder()
      let pending = ""
      const reader = response.body.getReader()
      while (true) {
        clearTimeout(timer)
        timer = setTimeout(() => controller.abort(), 1000)
        const { done, value } = await reader.read()
        if (done) break
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
            let parsed: unknown
            try {
              parsed = JSON.parse(args.get(index)!)
            } catch {
              continue
            }
            const id = ids.get(index) ?? `${index}`
            if (executedIds.has(id)) continue
            executedIds.add(id)
            stats.assembled++
            const name = names.get(index) ?? "unknown"
            const intended = lead.calls.find((c) => c.name === name)
            if (!lead.actionable || intended === undefined || !sameArguments(intended.arguments, parsed)) {
              stats.corrupted++
            }
            await fetch(`${options.crmUrl}/tools/${name}`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ lead: lead.id, action: name, ...(parsed as object) })
            }).then((r) => r.body?.cancel(), () => undefined)
            stats.executed++
          }
        }
      }
      clearTimeout(timer)
      return
    } catch (error) {
      clearTimeout(timer)
      const tag = controller.signal.aborted ? "ReadTimeout" : "NetworkError"
      if (attempt === 4) stats.rejected[tag] = (stats.rejected[tag] ?? 0) + 1
      void error
    }
  }
}
