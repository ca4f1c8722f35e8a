/**
 * A code example of `README.md`, verbatim between the markers, so that `tsc -b` type-checks it
 * (`test/readme.test.ts` checks that the README still holds it, and `test/readme-run.test.ts`
 * runs it against the fake provider).
 */
// begin: README.md
import { HttpModelStream, HttpTransport } from "@toolgate/adapters"
import { Assembler, ModelStream, ToolCall } from "@toolgate/core"
import { Effect, Layer, Redacted, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"

const LookupContact = Tool.make("lookup_contact", {
  description: "Find a contact by email",
  parameters: Schema.Struct({ email: Schema.String })
})
const CreateTask = Tool.make("create_task", {
  description: "Create a follow-up task for a lead",
  parameters: Schema.Struct({ lead_id: Schema.String, title: Schema.String })
}).annotate(Tool.Strict, true) // strict mode: every object closed, every property required
const crm = Toolkit.make(LookupContact, CreateTask)

// Step 2 of a turn: the model called lookup_contact in step 1, and the call ran. The history keeps
// the arguments exactly as the model wrote them and the result exactly as the executor stored it.
const request: ModelStream.ModelRequest = {
  prompt: Prompt.make([
    { role: "system", content: "You qualify inbound leads." },
    { role: "user", content: "New lead: dana@acme.io asked for pricing." },
    {
      role: "assistant",
      content: [ModelStream.toolCallPart({
        id: "call_1",
        name: "lookup_contact",
        argumentsText: "{\"email\": \"dana@acme.io\"}",
        arguments: { email: "dana@acme.io" }
      })]
    },
    {
      role: "tool",
      content: [ModelStream.toolResultPart({
        id: "call_1",
        name: "lookup_contact",
        isFailure: false,
        resultText: "{\"lead_id\":\"L-1042\",\"owner\":null}"
      })]
    }
  ]),
  tools: ModelStream.toolsOf(crm),
  maxOutputTokens: 1024
}

const Model = HttpModelStream.layer({
  provider: "openai-chat",
  baseUrl: process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
  apiKey: Redacted.make(process.env.OPENAI_API_KEY ?? ""),
  model: "gpt-4.1-mini",
  stream: "fallback" // stream; without a stream when the provider refuses one for this model
}).pipe(Layer.provide(HttpTransport.layerNode))

// The next step's calls: streamed, assembled all or nothing, validated against the toolkit.
const program = Effect.gen(function*() {
  const model = yield* ModelStream.ModelStream
  const turn = yield* model.stream(request, { number: 1, remainingMs: 60_000 }).pipe(Assembler.assemble())
  return yield* ToolCall.validate(crm)(turn)
}).pipe(Effect.provide(Model))

Effect.runPromise(program).then(
  (calls) => console.log(calls.map((call) => `${call.name} ${call.argumentsText}`)),
  (error) => console.error(String(error))
)
// end: README.md

export { program, request }
