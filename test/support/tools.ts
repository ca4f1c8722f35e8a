/**
 * Tools files for the CLI tests: OpenAI Chat function entries whose arguments are all required,
 * each performed by a webhook on the fake CRM (`<crm>/tools/<name>`), written to a fresh file.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/**
 * One tool: `properties` maps each argument to its JSON type (all required); `extra` adds members
 * beside `"function"` (an `"idempotency"` policy).
 */
export const webhookTool = (
  crmUrl: string,
  name: string,
  properties: Readonly<Record<string, "string" | "number">>,
  extra: Readonly<Record<string, unknown>> = {}
) => ({
  type: "function",
  function: {
    name,
    parameters: {
      type: "object",
      properties: Object.fromEntries(Object.entries(properties).map(([k, type]) => [k, { type }])),
      required: Object.keys(properties)
    }
  },
  webhook: `${crmUrl}/tools/${name}`,
  ...extra
})

/** Writes the tools to a new `tools.json` and gives its path. */
export const write = (tools: ReadonlyArray<unknown>): string => {
  const file = join(mkdtempSync(join(tmpdir(), "toolgate-tools-")), "tools.json")
  writeFileSync(file, JSON.stringify(tools))
  return file
}
