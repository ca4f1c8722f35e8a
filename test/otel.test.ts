/**
 * Exporting toolgate's metrics and spans with OpenTelemetry, as the README shows: effect's own
 * OTLP exporter (`effect/observability` `Otlp.layerJson`) sends them to a collector; here the
 * collector is an HTTP server on 127.0.0.1 that keeps what it receives.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { HttpModelStream, HttpTransport } from "@toolgate/adapters"
import { IdempotencyStore, ToolCallPipeline, ToolExecutor } from "@toolgate/runtime"
import { Effect, Layer, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { Otlp, OtlpExporter } from "effect/observability"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

const collector = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ url: string; received: Map<string, Array<string>>; close: () => Promise<void> }>((resolve) => {
      const received = new Map<string, Array<string>>()
      const server = createServer((req, res) => {
        let body = ""
        req.on("data", (chunk) => (body += chunk))
        req.on("end", () => {
          received.set(req.url!, [...(received.get(req.url!) ?? []), body])
          res.writeHead(200, { "content-type": "application/json" }).end("{}")
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resolve({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          received,
          close: () => new Promise((done) => server.close(() => done()))
        }))
    })
  ),
  (c) => Effect.promise(c.close)
)

const Echo = Tool.make("echo", {
  parameters: Schema.Struct({ text: Schema.String }),
  success: Schema.Struct({ text: Schema.String })
})
const toolkit = Toolkit.make(Echo)

const body = [
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "hi" } }] })}`,
  `data: ${
    JSON.stringify({
      choices: [{
        index: 0,
        delta: { tool_calls: [{ index: 0, id: "call_1", function: { name: "echo", arguments: "{\"text\":\"x\"}" } }] }
      }]
    })
  }`,
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] })}`,
  "data: [DONE]",
  ""
].join("\n\n")

describe("OpenTelemetry export", () => {
  it.live("pipeline metrics and spans reach an OTLP collector", () =>
    Effect.gen(function*() {
      const c = yield* collector
      const pipeline = ToolCallPipeline.layer.pipe(
        Layer.provide(
          ToolExecutor.layer(toolkit, { echo: { run: (params) => Effect.succeed({ text: params.text }) } })
        ),
        Layer.provide(
          HttpModelStream.layer({ provider: "openai-chat", baseUrl: "http://provider.invalid/v1", model: "m" }).pipe(
            Layer.provide(HttpTransport.layerReplay({ body }))
          )
        ),
        Layer.provide(IdempotencyStore.layerMemory)
      )
      const otlp = Otlp.layerJson({
        baseUrl: c.url,
        resource: { serviceName: "toolgate-test" },
        metricsExportInterval: "50 millis",
        tracerExportInterval: "50 millis"
      }).pipe(Layer.provide(NodeHttpClient.layerUndici))
      yield* Effect.gen(function*() {
        const result = yield* ToolCallPipeline.runTurn(
          { prompt: Prompt.make("Echo x.") },
          { toolkit, scope: { tenant: "t", turn: "otel" } }
        )
        expect(result.calls[0]!.outcome._tag).toBe("Executed")
        yield* OtlpExporter.Flusher.use((f) => f.flush)
      }).pipe(Effect.provide(Layer.merge(pipeline, otlp)))
      const metrics = (c.received.get("/v1/metrics") ?? []).join("\n")
      const traces = (c.received.get("/v1/traces") ?? []).join("\n")
      expect(metrics).toContain("toolgate_streams_total")
      expect(metrics).toContain("toolgate_tool_calls_assembled_total")
      expect(metrics).toContain("toolgate_executions_total")
      expect(traces).toContain("ToolCallPipeline.attempt")
      expect(metrics + traces).toContain("toolgate-test")
    }), 30_000)
})
