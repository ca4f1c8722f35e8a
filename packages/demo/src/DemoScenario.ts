/**
 * The world of `toolgate demo`: inbound leads, each answered by an SDR agent in a 3-step turn
 * (look up the contact, create the follow-up task, assign the owner, then a final answer), and a
 * seeded mix of the faults production pipelines meet, inside a step's stream (rate limits, 5xx,
 * connections dropped mid-arguments, stalls, bodies cut short, token limits, concatenated
 * arguments), in the CRM (an applied mutation whose answer is lost), and between steps (a worker
 * that crashes after step 1 executed, an event delivered again after step 2, an event delivered
 * twice at once). Everything is a pure function of the seed.
 *
 * @since 0.1.0
 */
import { Random } from "@toolgate/testing"
import { Tool, Toolkit } from "effect/ai"
import * as Schema from "effect/Schema"

/**
 * What goes wrong for one lead.
 *
 * - `clean`: nothing.
 * - `rate_limited`, `server_error`: the first request of one step gets 429 (with `Retry-After`)
 *   or 500.
 * - `dropped`, `stalled`, `truncated`: the first response of one step is cut (socket destroyed),
 *   stops writing, or ends early without its finish; the retry is answered with fresh tool-call
 *   ids.
 * - `redelivered`: the queue delivers the lead twice, to two concurrent workers.
 * - `crashed_after_step_1`: the worker crashes once step 1's calls have executed; the queue
 *   delivers the lead again.
 * - `redelivered_after_step_2`: once step 2 has executed, the queue delivers the lead again, to a
 *   second worker, while the first goes on.
 * - `token_limit`: at step 2 the model hits its output limit inside the arguments (`length`).
 * - `concatenated`: at step 2, two argument objects glued into one call (`{…}{…}`), with a
 *   success finish.
 * - `crm_ambiguous`: the CRM applies `assign_owner` and the answer is lost.
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
  | "crashed_after_step_1"
  | "redelivered_after_step_2"
  | "token_limit"
  | "concatenated"
  | "crm_ambiguous"

const weights: ReadonlyArray<readonly [Fault, number]> = [
  ["clean", 34],
  ["rate_limited", 7],
  ["server_error", 7],
  ["dropped", 8],
  ["stalled", 3],
  ["truncated", 5],
  ["redelivered", 7],
  ["crashed_after_step_1", 8],
  ["redelivered_after_step_2", 8],
  ["token_limit", 4],
  ["concatenated", 4],
  ["crm_ambiguous", 5]
]

/**
 * A tool call as the model streams it: its tool, its arguments as the model means them, and the
 * arguments' text it streams (which differs for `token_limit` and `concatenated`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ScriptedCall {
  readonly name: "lookup_contact" | "create_task" | "assign_owner"
  readonly arguments: Readonly<Record<string, string>>
  readonly streamed: string
}

/**
 * One step of a lead's turn: the text the model streams, its calls and its finish reason.
 *
 * @since 0.1.0
 * @category models
 */
export interface Step {
  readonly text: string
  readonly calls: ReadonlyArray<ScriptedCall>
  readonly finishReason: string
}

/**
 * One inbound lead and the turn the model answers it with.
 *
 * - `steps`: the model's answer to each step (4: lookup, task, owner, final answer).
 * - `faultStep`: the step whose stream a stream fault hits (1 to 4).
 * - `mutations`: the CRM mutations a correct pipeline performs for it, as (action, arguments)
 *   (none beyond the step that must be rejected for `token_limit` and `concatenated`).
 * - `actionable`: whether a correct pipeline completes the turn.
 *
 * @since 0.1.0
 * @category models
 */
export interface Lead {
  readonly id: string
  readonly company: string
  readonly email: string
  readonly owner: string
  readonly fault: Fault
  readonly faultStep: number
  readonly steps: ReadonlyArray<Step>
  readonly mutations: ReadonlyArray<{ readonly action: string; readonly arguments: Readonly<Record<string, string>> }>
  readonly actionable: boolean
}

const companies = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne", "Tyrell", "Soylent"]
const owners = ["usr_7731", "usr_0815", "usr_4242", "usr_1999"]
const titles = ["Call back about pilot pricing", "Send the security questionnaire", "Book a discovery call"]

const call = (name: ScriptedCall["name"], args: Record<string, string>): ScriptedCall => ({
  name,
  arguments: args,
  streamed: JSON.stringify(args)
})

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
    const email = `buyer@${company.toLowerCase().replace(/\s+/g, "-")}.example`
    const task = {
      lead_id: id,
      title: `${random.pick(titles)} (${company}, café ☕)`,
      due_date: `2026-12-${String(1 + Math.floor(random.next() * 28)).padStart(2, "0")}`
    }
    const assign = { lead_id: id, owner_id: owner }
    const faultStep = 1 + Math.floor(random.next() * 4)
    const create = call("create_task", task)
    let secondStep: Step = {
      text: `${company} is a fit for a pilot. Creating a follow-up task.`,
      calls: [create],
      finishReason: "tool_calls"
    }
    if (fault === "token_limit") {
      secondStep = {
        ...secondStep,
        calls: [{ ...create, streamed: create.streamed.slice(0, Math.floor(create.streamed.length / 2)) }],
        finishReason: "length"
      }
    } else if (fault === "concatenated") {
      secondStep = {
        ...secondStep,
        calls: [{
          ...create,
          streamed: `${create.streamed}${JSON.stringify({ ...task, due_date: "2027-01-15" })}`
        }]
      }
    }
    const actionable = fault !== "token_limit" && fault !== "concatenated"
    return {
      id,
      company,
      email,
      owner,
      fault,
      faultStep: fault === "token_limit" || fault === "concatenated" ? 2 : faultStep,
      steps: [
        {
          text: `New inbound lead from ${company}. Looking up the contact first.`,
          calls: [call("lookup_contact", { lead_id: id, email })],
          finishReason: "tool_calls"
        },
        secondStep,
        {
          text: `Routing the lead to ${owner}.`,
          calls: [call("assign_owner", assign)],
          finishReason: "tool_calls"
        },
        {
          text: `Done: ${id} (${company}) has a follow-up task and is routed to ${owner}.`,
          calls: [],
          finishReason: "stop"
        }
      ],
      mutations: actionable
        ? [{ action: "create_task", arguments: task }, { action: "assign_owner", arguments: assign }]
        : [],
      actionable
    }
  })
}

/**
 * `lookup_contact`: the contact of a lead's email (a read: the demo answers it locally).
 *
 * @since 0.1.0
 * @category tools
 */
export const LookupContact = Tool.make("lookup_contact", {
  description: "Look up the CRM contact of an inbound lead's email",
  parameters: Schema.Struct({ lead_id: Schema.String, email: Schema.String }),
  success: Schema.Struct({ contact_id: Schema.String, segment: Schema.String, employees: Schema.Number })
})

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
export const toolkit = Toolkit.make(LookupContact, CreateTask, AssignOwner)

/**
 * What `lookup_contact` answers for a lead (the same every time: a read).
 *
 * @since 0.1.0
 * @category tools
 */
export const contactOf = (params: { readonly lead_id: string; readonly email: string }) => ({
  contact_id: `ct_${params.lead_id.slice(5)}`,
  segment: params.email.length % 2 === 0 ? "mid-market" : "smb",
  employees: 50 + (params.email.length * 37) % 950
})
