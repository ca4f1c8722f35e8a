/**
 * @toolgate/adapters: thin provider adapters, bytes in, core events out.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Decoder from "./Decoder.js"

/** @since 0.1.0 */
export * as FinishProfile from "./FinishProfile.js"

/** @since 0.1.0 */
export * as OpenAiChat from "./OpenAiChat.js"

/** @since 0.1.0 */
export * as Provider from "./Provider.js"

/** @since 0.1.0 */
export * as OpenAiResponses from "./OpenAiResponses.js"

/** @since 0.1.0 */
export * as Anthropic from "./Anthropic.js"

/** @since 0.1.0 */
export * as Gemini from "./Gemini.js"

/** @since 0.1.0 */
export * as EffectAi from "./EffectAi.js"

/** @since 0.1.0 */
export * as NonStreaming from "./NonStreaming.js"

/** @since 0.1.0 */
export * as HttpTransport from "./HttpTransport.js"

/** @since 0.1.0 */
export * as ToolDefinition from "./ToolDefinition.js"

/** @since 0.1.0 */
export * as ToolValidator from "./ToolValidator.js"

/** @since 0.1.0 */
export * as HttpModelStream from "./HttpModelStream.js"

/** @since 0.1.0 */
export * as OpenAiChatRequest from "./OpenAiChatRequest.js"

/** @since 0.1.0 */
export * as AnthropicRequest from "./AnthropicRequest.js"

/** @since 0.1.0 */
export * as OpenAiResponsesRequest from "./OpenAiResponsesRequest.js"

/** @since 0.1.0 */
export * as GeminiRequest from "./GeminiRequest.js"

/** @since 0.1.0 */
export * as ToolsFile from "./ToolsFile.js"

/** @since 0.1.0 */
export * as ExpectedResult from "./ExpectedResult.js"
