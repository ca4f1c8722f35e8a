/**
 * Tools files for the CLI tests: OpenAI Chat function entries whose arguments are all required,
 * each performed by a webhook on the fake CRM (`<crm>/tools/<name>`), written to a fresh file.
 */
import { FakeCrm } from "@toolgate/testing"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/**
 * One tool: `properties` maps each argument to its JSON type (all required); `extra` adds members
 * beside `"function"` (an `"idempotency"` policy). See `FakeCrm.toolDefinition`.
 */
export const webhookTool = FakeCrm.toolDefinition

/** Writes the tools to a new `tools.json` and gives its path. */
export const write = (tools: ReadonlyArray<unknown>): string => {
  const file = join(mkdtempSync(join(tmpdir(), "toolgate-tools-")), "tools.json")
  writeFileSync(file, JSON.stringify(tools))
  return file
}
