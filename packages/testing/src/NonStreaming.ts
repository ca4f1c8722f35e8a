/**
 * Non-streaming answers as the APIs send them (the classic capture of a request that forgot
 * `stream: true`): an OpenAI `chat.completion` and a Responses body and a Gemini
 * `generateContent` body, pretty-printed as those APIs print them, an Anthropic message, and a
 * Gemini `streamGenerateContent` body without `alt=sse` (a JSON array, CRLF line ends). Each is a
 * `NotAnEventStream` for every streaming decoder; `NonStreaming.decode` of `@toolgate/adapters`
 * reads them.
 *
 * @since 0.1.0
 */

/**
 * An OpenAI Chat Completions `chat.completion` with one tool call.
 *
 * @since 0.1.0
 * @category bodies
 */
export const chatCompletion: string = JSON.stringify(
  {
    id: "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
    object: "chat.completion",
    created: 1741570283,
    model: "gpt-4o-2024-08-06",
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "call_Wc8qhBWf0BZL6Yy1mXcHDrjF",
          type: "function",
          function: { name: "create_task", arguments: "{\"title\":\"Call back\"}" }
        }]
      },
      finish_reason: "tool_calls"
    }]
  },
  null,
  2
)

/**
 * An OpenAI Responses `response` with one function call.
 *
 * @since 0.1.0
 * @category bodies
 */
export const responses: string = JSON.stringify(
  {
    id: "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
    object: "response",
    status: "completed",
    output: [{ type: "function_call", id: "fc_1", call_id: "call_1", name: "create_task", arguments: "{}" }]
  },
  null,
  2
)

/**
 * An Anthropic Messages `message` with one `tool_use` block (one line, as the API sends it).
 *
 * @since 0.1.0
 * @category bodies
 */
export const anthropicMessage: string = JSON.stringify({
  id: "msg_01Aq9w938a90dw8q",
  type: "message",
  role: "assistant",
  content: [{ type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "create_task", input: { title: "x" } }],
  stop_reason: "tool_use"
})

/**
 * A Gemini `generateContent` body with one function call (CRLF line ends).
 *
 * @since 0.1.0
 * @category bodies
 */
export const geminiGenerateContent: string = JSON.stringify(
  {
    candidates: [{ content: { parts: [{ functionCall: { name: "create_task", args: {} } }], role: "model" } }],
    usageMetadata: { promptTokenCount: 12 }
  },
  null,
  2
).replace(/\n/g, "\r\n")

/**
 * Gemini's `streamGenerateContent` without `alt=sse`: a streamed JSON array of two bodies.
 *
 * @since 0.1.0
 * @category bodies
 */
export const geminiArray: string = `[${geminiGenerateContent}\r\n,\r\n${geminiGenerateContent}]`
