/**
 * The lead events of the cluster tests and what the fake provider and the fake CRM make of them.
 *
 * Event `i` takes the fault of the demo's lead `i` (`DemoScenario.leads`, the same seeded mix):
 * stream faults on the first attempt of its fault step (429, 500, a connection dropped inside the
 * arguments, a stall, a body cut short), a CRM that applies `assign_owner` and loses the answer
 * (`crm_ambiguous`), and the two turns a correct pipeline must reject at step 2 (`token_limit`,
 * `concatenated`). The demo's delivery faults (`redelivered`, `crashed_after_step_1`,
 * `redelivered_after_step_2`) become a second submission of the event at the same time as the
 * first; the test's own SIGKILLs and resubmissions deliver the rest again.
 *
 * Each turn has four steps: `lookup_contact`, `create_task`, `assign_owner` (each a webhook on the
 * CRM), then the answer. The CRM's lead of an event is `leadId.eventId`, so the CRM counts each
 * event's intents apart: exactly once means one mutation per (event, tool) it should perform.
 */
import { DemoScenario } from "@toolgate/demo"
import { FakeCrm, FakeProvider } from "@toolgate/testing"
import type { Scope } from "effect"
import { Effect } from "effect"
import * as Tools from "./tools.js"

/** One event of the world. */
export interface WorldEvent {
  readonly submission: {
    readonly tenant: string
    readonly leadId: string
    readonly eventId: string
    readonly eventTime: string
    readonly payload: unknown
  }
  readonly fault: DemoScenario.Fault
  readonly faultStep: number
  /** The CRM's lead of the event (`leadId.eventId`). */
  readonly crmLead: string
  /** Whether a correct pipeline completes the turn (not `token_limit` nor `concatenated`). */
  readonly actionable: boolean
  /** The answer's text when it completes. */
  readonly answer: string
  readonly steps: ReadonlyArray<FakeProvider.Scenario>
}

const payloads = (i: number, company: string, email: string) => {
  switch (i % 3) {
    case 0:
      return { _tag: "form_submission", form: "demo-request", fields: { company, email, seats: String(10 + i % 90) } }
    case 1:
      return { _tag: "chat_message", text: `Hi, ${company} here, can we get pricing for a pilot? (${email})` }
    default:
      return { _tag: "inbound_email", from: email, subject: `Pilot for ${company}`, body: "Looking for a quote." }
  }
}

/**
 * `count` events over `leads` leads (event `i` is for lead `i mod leads`) of tenant `acme`.
 */
export const events = (count: number, seed: number, leads = Math.ceil(count / 2)): ReadonlyArray<WorldEvent> =>
  DemoScenario.leads(count, seed).map((lead, i) => {
    const leadId = `lead-${String(i % leads).padStart(4, "0")}`
    const eventId = `ev-${String(i).padStart(5, "0")}`
    const crmLead = `${leadId}.${eventId}`
    const title = `Follow up ${lead.company} (café ☕)`
    const task = JSON.stringify({ lead: crmLead, title })
    const createArgs = lead.fault === "token_limit"
      ? task.slice(0, Math.floor(task.length / 2))
      : lead.fault === "concatenated"
      ? `${task}${JSON.stringify({ lead: crmLead, title: `${title} again` })}`
      : task
    const answer = `Done: ${crmLead} has a follow-up task and is routed to ${lead.owner}.`
    return {
      submission: {
        tenant: "acme",
        leadId,
        eventId,
        eventTime: new Date(Date.UTC(2026, 11, 1, 9, 0, i)).toISOString(),
        payload: payloads(i, lead.company, lead.email)
      },
      fault: lead.fault,
      faultStep: lead.faultStep,
      crmLead,
      actionable: lead.actionable,
      answer,
      steps: [
        {
          text: `New lead event from ${lead.company}. Looking up the contact.`,
          toolCalls: [{ name: "lookup_contact", arguments: { lead: crmLead, email: lead.email } }]
        },
        {
          text: "A fit for a pilot. Creating the follow-up task.",
          toolCalls: [{ name: "create_task", arguments: createArgs }],
          finishReason: lead.fault === "token_limit" ? "length" : "tool_calls"
        },
        {
          text: `Routing to ${lead.owner}.`,
          toolCalls: [{ name: "assign_owner", arguments: { lead: crmLead, owner_id: lead.owner } }]
        },
        { text: answer }
      ]
    }
  })

/** Whether the event is submitted twice at once (the demo's delivery faults). */
export const submittedTwice = (e: WorldEvent) =>
  e.fault === "redelivered" || e.fault === "crashed_after_step_1" || e.fault === "redelivered_after_step_2"

/** The event a model request is for: the user message names it (`…, event <id> at …`). */
export const eventIdOf = (body: unknown): string => {
  const text = JSON.stringify(body)
  return /, event (\S+) at /.exec(text)?.[1] ?? "unknown"
}

/** The tools file of the world: three webhooks on the CRM. */
export const toolsFile = (crmUrl: string) =>
  Tools.write([
    Tools.webhookTool(crmUrl, "lookup_contact", { lead: "string", email: "string" }),
    Tools.webhookTool(crmUrl, "create_task", { lead: "string", title: "string" }),
    Tools.webhookTool(crmUrl, "assign_owner", { lead: "string", owner_id: "string" })
  ])

/** The fake provider answering the world's turns (with their stream faults) and the fake CRM. */
export const servers = (
  world: ReadonlyArray<WorldEvent>,
  options: { readonly paceMs?: number } = {}
): Effect.Effect<{ readonly provider: FakeProvider.Server; readonly crm: FakeCrm.Server }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const byId = new Map(world.map((e) => [e.submission.eventId, e]))
    const provider = yield* FakeProvider.make({
      seed: 14,
      requestKey: (r) => `${eventIdOf(r.body)}#${FakeProvider.stepOf(r.body)}`,
      plan: (request) => {
        const event = byId.get(eventIdOf(request.body))
        const step = FakeProvider.stepOf(request.body)
        const scenario = event?.steps[Math.min(step, 4) - 1] ?? { text: "Unknown event." }
        const answer: FakeProvider.Answer = {
          source: FakeProvider.openAiChat(scenario),
          chunkBytes: [256, 1024],
          paceMs: options.paceMs ?? 0
        }
        if (event === undefined || request.attempt > 1 || step !== event.faultStep) return answer
        switch (event.fault) {
          case "rate_limited":
            return { ...answer, fault: { _tag: "Status", status: 429, retryAfter: 1 } }
          case "server_error":
            return { ...answer, fault: { _tag: "Status", status: 500 } }
          case "dropped":
            return { ...answer, fault: { _tag: "Drop", afterBytes: { fraction: 0.7 } } }
          case "stalled":
            return { ...answer, fault: { _tag: "Stall", afterBytes: { fraction: 0.7 } } }
          case "truncated":
            return { ...answer, fault: { _tag: "Truncate", afterBytes: { fraction: 0.9 } } }
          default:
            return answer
        }
      }
    })
    const crm = yield* FakeCrm.make({
      plan: (request) => {
        const event = byId.get(request.lead.slice(request.lead.indexOf(".") + 1))
        return event?.fault === "crm_ambiguous" && request.action === "assign_owner" && request.attempt === 1
          ? { _tag: "ApplyThenDrop" }
          : undefined
      }
    })
    return { provider, crm }
  })

/** The CRM's count a correct run ends with: each intent of each event once. */
export const expectedByKey = (world: ReadonlyArray<WorldEvent>): Record<string, number> =>
  Object.fromEntries(
    world.flatMap((e) =>
      e.actionable
        ? [[`${e.crmLead}/lookup_contact`, 1], [`${e.crmLead}/create_task`, 1], [`${e.crmLead}/assign_owner`, 1]]
        : [[`${e.crmLead}/lookup_contact`, 1]]
    )
  )
