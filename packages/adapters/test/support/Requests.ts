/**
 * The four request encoders behind one signature, and each provider's request Schema as a
 * validator that refuses members the provider does not document: what the request-encoding tests
 * share.
 */
import {
  AnthropicRequest,
  GeminiRequest,
  OpenAiChatRequest,
  OpenAiResponsesRequest,
  type Provider
} from "@toolgate/adapters"
import type { ModelStream, ModelStreamError } from "@toolgate/core"
import { type Exit, type Result, Schema } from "effect"

/** Each format's encoder, for the model `m`, asking for a stream unless `stream` is `false`. */
export const encoders: Record<
  Provider.Name,
  (
    request: ModelStream.ModelRequest,
    stream?: boolean
  ) => Result.Result<Record<string, unknown>, ModelStreamError.UnsupportedRequest>
> = {
  "openai-chat": (request, stream) => OpenAiChatRequest.encode(request, { model: "m", stream }),
  "openai-responses": (request, stream) => OpenAiResponsesRequest.encode(request, { model: "m", stream }),
  anthropic: (request, stream) => AnthropicRequest.encode(request, { model: "m", stream }),
  gemini: (request) => GeminiRequest.encode(request)
}

/** Each format's request Schema, decoding with excess members refused. */
export const validators: Record<Provider.Name, (body: unknown) => Exit.Exit<unknown, Schema.SchemaError>> = {
  "openai-chat": Schema.decodeUnknownExit(OpenAiChatRequest.ChatCompletionRequest, { onExcessProperty: "error" }),
  "openai-responses": Schema.decodeUnknownExit(OpenAiResponsesRequest.ResponsesRequest, {
    onExcessProperty: "error"
  }),
  anthropic: Schema.decodeUnknownExit(AnthropicRequest.MessagesRequest, { onExcessProperty: "error" }),
  gemini: Schema.decodeUnknownExit(GeminiRequest.GenerateContentRequest, { onExcessProperty: "error" })
}
