/**
 * The function tools of a request, shared by the encoders: each tool's name, description and
 * parameters, its schema made ready for strict mode when the tool asks for it (under the
 * provider's rules, `internal/strictSchema`), or the `UnsupportedRequest` of the first tool that
 * cannot be strict.
 *
 * @internal
 */
import type { ModelStream, ModelStreamError } from "@toolgate/core"
import * as Result from "effect/Result"
import * as History from "./history.js"
import * as StrictSchema from "./strictSchema.js"

export interface FunctionTool {
  readonly name: string
  readonly description?: string
  readonly parameters: unknown
  readonly strict?: boolean
}

/** The tools under `rules`, or the `UnsupportedRequest` of the first that cannot be strict. */
export const functionTools = (
  provider: string,
  tools: ReadonlyArray<ModelStream.ToolSpec>,
  rules: StrictSchema.Rules
): Result.Result<
  Array<FunctionTool>,
  ModelStreamError.UnsupportedRequest
> => {
  const out: Array<FunctionTool> = []
  for (const tool of tools) {
    let parameters: unknown = tool.parameters
    if (tool.strict === true) {
      const strict = StrictSchema.toStrict(tool.parameters, rules)
      if ("problem" in strict) {
        return History.unsupported(provider, `tool ${tool.name} in strict mode: ${strict.problem}`)
      }
      parameters = strict.schema
    }
    out.push({
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      parameters,
      ...(tool.strict === undefined ? {} : { strict: tool.strict })
    })
  }
  return Result.succeed(out)
}
