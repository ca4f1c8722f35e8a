/**
 * The world of `toolgate demo`: inbound leads, the tool calls a model answers each with, and a
 * seeded mix of the faults production pipelines meet (rate limits, 5xx, connections dropped
 * mid-arguments, stalls, bodies cut short, queue redeliveries, token limits, concatenated
 * arguments, an ambiguous CRM answer). Everything is a pure function of the seed.
 *
 * @since 0.1.0
 */
import { Random } from "@toolgate/testing"
import { Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

/**
 * What goes wrong for one lead.
 *
 * - `clean`: nothing.
 * - `rate_limited`, `server_error`: the first request gets 429 (with `Retry-After`) or 500.
 * - `dropped`, `stalled`, `truncated`: the first response is cut (socket destroyed), stops
 *   writing, or ends early without its finish; the retry is answered with fresh tool-call ids.
 * - `redelivered`: the queue delivers the lead twice, to two concurrent workers.
 * - `token_limit`: the model hits its output limit inside the arguments (`length`).
 * - `concatenated`: two argument objects glued into one call (`{…}{…}`), with a success finish.
 * - `crm_ambiguous`: the CRM applies a mutation and the answer is lost.
 *
 * @since 0.1.0
 * @category models
 */
export type Fault =
  | "clean"
  | "rate_limited"
  | "server_error"
  | "dropped"
  | "stalled"
  | "truncated"
  | "redelivered"
  | "token_limit"
  | "concatenated"
  | "crm_ambiguous"

const weights: ReadonlyArray<readonly [Fault, number]> = [
  ["clean", 40],
  ["rate_limited", 8],
  ["server_error", 8],
  ["dropped", 10],
  ["stalled", 4],
  ["truncated", 6],
  ["redelivered", 10],
  ["token_limit", 5],
  ["concatenated", 5],
  ["crm_ambiguous", 4]
]

/**
 * One inbound lead and what the model answers it with.
 *
 * - `calls`: the tool calls a correct pipeline releases for it (none when the turn must be
 *   rejected: `token_limit`, `concatenated`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Lead {
  readonly id: string
  readonly company: string
  readonly fault: Fault
  readonly text: string
  readonly calls: ReadonlyArray<
    { readonly name: "create_task" | "assign_owner"; readonly arguments: Record<string, string> }
  >
  /** The arguments text the model streams for each call (differs from `calls` for `token_limit` and `concatenated`). */
  readonly streamed: ReadonlyArray<{ readonly name: string; readonly arguments: string }>
  readonly finishReason: string
  /** Whether a correct pipeline may act on this lead's turn. */
  readonly actionable: boolean
}

const companies = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne", "Tyrell", "Soylent"]
const owners = ["usr_7731", "usr_0815", "usr_4242", "usr_1999"]
const titles = ["Call back about pilot pricing", "Send the security questionnaire", "Book a discovery call"]

/**
 * The leads of a run: `count` leads, each with a fault drawn from the seeded mix.
 *
 * @since 0.1.0
 * @category constructors
 */
export const leads = (count: number, seed: number): ReadonlyArray<Lead> => {
  const total = weights.reduce((n, [, w]) => n + w, 0)
  return Array.from({ length: count }, (_, i) => {
    const random = Random.make(seed * 1_000_003 + i)
    let pick = random.next() * total
    let fault: Fault = "clean"
    for (const [f, w] of weights) {
      if ((pick -= w) < 0) {
        fault = f
        break
      }
    }
    const id = `lead-${String(i + 1).padStart(4, "0")}`
    const company = `${random.pick(companies)} ${Math.floor(random.next() * 900 + 100)}`
    const owner = random.pick(owners)
    const task = {
      lead_id: id,
      title: `${random.pick(titles)} (${company}, café ☕)`,
      due_date: `2026-12-${String(1 + Math.floor(random.next() * 28)).padStart(2, "0")}`
    }
    const assign = { lead_id: id, owner_id: owner }
    const calls = [
      { name: "create_task" as const, arguments: task },
      { name: "assign_owner" as const, arguments: assign }
    ]
    const streamed = calls.map((c) => ({ name: c.name, arguments: JSON.stringify(c.arguments) }))
    let finishReason = "tool_calls"
    if (fault === "token_limit") {
      const text = streamed[1]!.arguments
      streamed[1] = { name: "assign_owner", arguments: text.slice(0, Math.floor(text.length / 2)) }
      finishReason = "length"
    } else if (fault === "concatenated") {
      streamed[1] = {
        name: "assign_owner",
        arguments: `${JSON.stringify(assign)}${
          JSON.stringify({ ...assign, owner_id: owners[(owners.indexOf(owner) + 1) % 4] })
        }`
      }
    }
    const actionable = fault !== "token_limit" && fault !== "concatenated"
    return {
      id,
      company,
      fault,
      text: `New inbound lead from ${company}. Creating a follow-up task and routing it to ${owner}.`,
      calls: actionable ? calls : [],
      streamed,
      finishReason,
      actionable
    }
  })
}

/**
 * `create_task`: a follow-up task in the CRM.
 *
 * @since 0.1.0
 * @category tools
 */
export const CreateTask = Tool.make("create_task", {
  description: "Create a follow-up task for a lead",
  parameters: Schema.Struct({ lead_id: Schema.String, title: Schema.String, due_date: Schema.String }),
  success: Schema.Struct({ id: Schema.String }),
  failure: Schema.Struct({ status: Schema.Number, message: Schema.String })
})

/**
 * `assign_owner`: routes a lead to a sales rep.
 *
 * @since 0.1.0
 * @category tools
 */
export const AssignOwner = Tool.make("assign_owner", {
  description: "Assign a lead to a sales rep",
  parameters: Schema.Struct({ lead_id: Schema.String, owner_id: Schema.String }),
  success: Schema.Struct({ id: Schema.String }),
  failure: Schema.Struct({ status: Schema.Number, message: Schema.String })
})

/**
 * The demo's toolkit.
 *
 * @since 0.1.0
 * @category tools
 */
export const toolkit = Toolkit.make(CreateTask, AssignOwner)
