/**
 * The finish profile of an endpoint: which finish reasons release tool calls.
 *
 * - `strict`: calls are released only by the reasons a provider sends when the model ends its
 *   turn to call tools: OpenAI Chat `tool_calls`, Anthropic `tool_use`. `stop` (OpenAI Chat) and
 *   `end_turn` / `stop_sequence` (Anthropic) still complete a text turn, but with tool calls they
 *   are `UnexpectedFinishReason`. For the first-party APIs, which always send `tool_calls` /
 *   `tool_use` with calls (OpenAI's named `tool_choice` excepted, see {@link forRequest}).
 * - `compatible`: `stop` and `end_turn` / `stop_sequence` release calls too, for the servers that
 *   legitimately send them with calls (Ollama, several vLLM tool parsers, Gemini's
 *   OpenAI-compatible endpoint, OpenAI with a named `tool_choice`). These are the success reasons
 *   of `test/fixtures/README.md`.
 *
 * Why it matters: a gateway in front of the provider can end a cut stream cleanly and make a
 * finish up. LiteLLM, for one, writes `stop` (or `end_turn` on its Anthropic endpoint) when the
 * upstream connection dropped after some of the calls had arrived, so the calls that arrived are
 * released as if the turn had finished. `strict` rejects that shape; nothing can reject a made-up
 * `tool_calls`.
 *
 * OpenAI Responses (`completed`) and Gemini (`STOP`) have a single success status whether or not
 * the turn calls tools, so both profiles read them the same.
 *
 * The tables themselves are provider knowledge and live with each adapter
 * (`OpenAiChat.finishPolicy`, `Anthropic.finishPolicy`, `OpenAiResponses.classifyStatus`,
 * `Gemini.finishPolicy`).
 *
 * @since 0.1.0
 */

/**
 * A finish profile.
 *
 * @since 0.1.0
 * @category models
 */
export type FinishProfile = "strict" | "compatible"

/**
 * Both profiles, in the order `--finish-profile` lists them.
 *
 * @since 0.1.0
 * @category constants
 */
export const names: ReadonlyArray<FinishProfile> = ["strict", "compatible"]

/**
 * The profile of a decoder that is not told one: `compatible`. A decoder reads a wire format,
 * not an endpoint, and the OpenAI Chat format is spoken by many servers that send `stop` with
 * calls; the fixture corpus' success reasons are this profile's. Name `strict` explicitly, or
 * let {@link forRequest} choose from the endpoint.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultProfile: FinishProfile = "compatible"

/**
 * The first-party API hosts, whose streams always end a tool turn with `tool_calls` / `tool_use`.
 *
 * @since 0.1.0
 * @category constants
 */
export const firstPartyHosts: ReadonlySet<string> = new Set(["api.openai.com", "api.anthropic.com"])

// A process sends its requests to one URL or a few: the last one's host is remembered, so a
// request does not parse its URL again (one parse per step of an agent turn otherwise).
let lastUrl: string | undefined
let lastFirstParty = false
const isFirstParty = (url: string): boolean => {
  if (url !== lastUrl) {
    lastFirstParty = URL.canParse(url) && firstPartyHosts.has(new URL(url).hostname.toLowerCase())
    lastUrl = url
  }
  return lastFirstParty
}

/**
 * The profile for a request: `strict` for a first-party host (`api.openai.com`,
 * `api.anthropic.com`), `compatible` for every other URL (a gateway, a local server, a cloud
 * reseller). One exception: an OpenAI Chat request that names the function to call
 * (`tool_choice: {type: "function", …}`) is `compatible`, because OpenAI ends such a turn with
 * `stop`. A URL that does not parse is `compatible`.
 *
 * @since 0.1.0
 * @category profiles
 */
export const forRequest = (request: {
  readonly url: string
  readonly provider?: string | undefined
  readonly body?: unknown
}): FinishProfile => {
  if (!isFirstParty(request.url)) return "compatible"
  const body = request.body
  const toolChoice = typeof body === "object" && body !== null
    ? (body as { tool_choice?: unknown }).tool_choice
    : undefined
  if (request.provider !== "anthropic" && typeof toolChoice === "object" && toolChoice !== null) return "compatible"
  return "strict"
}
