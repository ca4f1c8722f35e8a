/**
 * A code example of `README.md`, verbatim between the markers, so that `tsc -b` type-checks it
 * (`test/readme.test.ts` checks that the README still holds it).
 */
// begin: README.md
import { PgClient } from "@effect/sql-pg"
import { HttpModelStream, HttpTransport, OpenAiChat } from "@toolgate/adapters"
import { Assembler, ModelStream, ToolCall } from "@toolgate/core"
import { IdempotencyStore, ToolCallPipeline, ToolExecutor } from "@toolgate/runtime"
import { Effect, Layer, Redacted, Schema, type Stream } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"

declare const body: Stream.Stream<Uint8Array> // an HTTP response body
declare const crm: {
  createTask(
    params: { lead_id: string; title: string },
    options: { idempotencyKey: string }
  ): Effect.Effect<{ id: string }>
}

const CreateTask = Tool.make("create_task", {
  parameters: Schema.Struct({ lead_id: Schema.String, title: Schema.String }),
  success: Schema.Struct({ id: Schema.String })
})
const toolkit = Toolkit.make(CreateTask)

// Assembly only: the completed turn, or a typed AssemblyError (or NotAnEventStream: the body was
// not a stream at all). All or nothing.
const turn = body.pipe(OpenAiChat.decode(), Assembler.assemble())
// Streaming form: text deltas as they arrive, then the completed turn.
const outputs = body.pipe(OpenAiChat.decode(), Assembler.stream())
// A web body (fetch's `response.body`): the same events and errors, and the assembler drives its
// reader itself, with no Stream in between (on a small body that is most of the cost).
declare const response: Response
const fetched = OpenAiChat.decodeReadableStream({
  evaluate: () => response.body!,
  onError: (cause) => new Error("the response body failed", { cause })
}).pipe(Assembler.assemble())
// Validation against the tools: typed calls, or UnknownTool / ToolArgumentsInvalid.
const calls = Effect.flatMap(turn, ToolCall.validate(toolkit))

// The model: the pipeline depends on core's ModelStream; HttpModelStream implements it over HTTP
// for OpenAI Chat (and every compatible server), Responses, Anthropic and Gemini. Tests swap in
// HttpTransport.layerReplay, or a ModelStream of their own.
const Model = HttpModelStream.layer({
  provider: "openai-chat",
  baseUrl: "https://api.openai.com/v1",
  apiKey: Redacted.make(process.env.OPENAI_API_KEY ?? ""),
  model: "gpt-4.1-mini"
}).pipe(Layer.provide(HttpTransport.layerNode))

// The whole pipeline, as layers (tests use IdempotencyStore.layerMemory).
const Pipeline = ToolCallPipeline.layer.pipe(
  Layer.provide(ToolExecutor.layer(toolkit, {
    create_task: {
      recovery: "reexecute", // the CRM deduplicates on our Idempotency-Key
      run: (params, ctx) => crm.createTask(params, { idempotencyKey: ctx.downstreamKey })
    }
  })),
  Layer.provide(Model),
  Layer.provide(
    IdempotencyStore.layerSql().pipe(
      // or EmbeddedPostgres.layer({ dataDir: ".toolgate" }) from @toolgate/runtime: one machine,
      // any number of processes (see "The store" above)
      Layer.provide(PgClient.layer({ url: Redacted.make("postgres://localhost/app") }))
    )
  )
)

// One turn: a provider-neutral request (effect/ai's Prompt, the tools' JSON Schemas).
const result = ToolCallPipeline.runTurn(
  { prompt: Prompt.make("Route lead-0042."), tools: ModelStream.toolsOf(toolkit), maxOutputTokens: 1024 },
  { toolkit, scope: { tenant: "acme", turn: "lead-0042-inbound" } }
).pipe(Effect.provide(Pipeline))
// end: README.md

export { calls, fetched, outputs, result }
