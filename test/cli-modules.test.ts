/**
 * What each command loads, run as a child process against the built `toolgate`: `--help`,
 * `--version` and `inspect` load no module of the store, the runtime, the demo, the SQL clients or
 * the JSON Schema validator (each command imports what it uses when it runs: `Cli.ts`), while `run`
 * loads them and `inspect --tools` loads the validator. The loaded modules are recorded by a
 * module hook (`module.registerHooks`) preloaded with `--import` into the child.
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import * as Cli from "./support/cli.js"
import { root } from "./support/cli.js"

const dir = mkdtempSync(join(tmpdir(), "toolgate-cli-modules-"))
const hook = join(dir, "record-modules.mjs")
writeFileSync(
  hook,
  `import { registerHooks } from "node:module"
import { writeFileSync } from "node:fs"
const seen = []
registerHooks({ load(url, context, next) { seen.push(url); return next(url, context) } })
process.on("exit", () => writeFileSync(process.env.TOOLGATE_MODULES_OUT, seen.join("\\n")))
`
)

let runs = 0
/** Runs `toolgate ...args` and gives the URLs of every module it loaded. */
const loaded = async (...args: Array<string>) => {
  const out = join(dir, `modules-${runs++}.txt`)
  const result = await Cli.toolgate(args, {
    env: { NODE_OPTIONS: `--import=${pathToFileURL(hook).href}`, TOOLGATE_MODULES_OUT: out }
  })
  return { ...result, modules: readFileSync(out, "utf8").split("\n") }
}

/** Modules that only the store, the agent loop, the demo and tool validation need. */
const heavy: ReadonlyArray<readonly [string, RegExp]> = [
  ["@toolgate/runtime", /\/packages\/runtime\/dist\//],
  ["@toolgate/demo", /\/packages\/demo\/dist\//],
  ["@toolgate/testing", /\/packages\/testing\/dist\//],
  ["@effect/sql-pg", /\/node_modules\/@effect\/sql-pg\//],
  ["PGlite", /\/node_modules\/@electric-sql\//],
  ["ajv", /\/node_modules\/ajv\//],
  ["the HTTP transport", /\/packages\/adapters\/dist\/(HttpTransport|HttpModelStream)\.js$/]
]
const heavyIn = (modules: ReadonlyArray<string>) =>
  heavy.filter(([, pattern]) => modules.some((url) => pattern.test(url))).map(([name]) => name)

const capture = join(root, "test/fixtures/openai-chat/openai-chat__parallel-interleaved.sse")

describe("toolgate loads what a command uses", () => {
  it("--help and --version load none of the store, runtime, demo, SQL or validator modules", async () => {
    for (const args of [["--help"], ["--version"], ["inspect", "--help"]]) {
      const { code, modules } = await loaded(...args)
      expect(code).toBe(0)
      expect(modules.some((url) => url.includes("/packages/cli/dist/Cli.js"))).toBe(true)
      expect(heavyIn(modules)).toEqual([])
    }
  })

  it("inspect reads a capture with the decoders and the assembler only", async () => {
    const { code, modules, stdout } = await loaded("inspect", capture, "--json")
    expect(code).toBe(0)
    expect(JSON.parse(stdout).outcome).toBe("complete")
    expect(modules.some((url) => url.includes("/packages/adapters/dist/OpenAiChat.js"))).toBe(true)
    expect(modules.some((url) => url.includes("/packages/core/dist/Assembler.js"))).toBe(true)
    expect(heavyIn(modules)).toEqual([])
  })

  it("inspect --tools loads the validator, and nothing of the store", async () => {
    const tools = join(dir, "tools.json")
    writeFileSync(
      tools,
      JSON.stringify([{ type: "function", function: { name: "f", parameters: { type: "object" } } }])
    )
    const { modules } = await loaded("inspect", capture, "--json", "--tools", tools)
    expect(heavyIn(modules)).toEqual(["ajv"])
  })

  it("run loads the runtime and the store (the hook sees them)", async () => {
    const tools = join(dir, "run-tools.json")
    writeFileSync(
      tools,
      JSON.stringify([{
        type: "function",
        function: { name: "f", parameters: { type: "object" } },
        webhook: "http://127.0.0.1:9/f"
      }])
    )
    // No model answers at port 9 (discard): the run fails after loading what it uses.
    const { modules } = await loaded(
      "run",
      "--base-url",
      "http://127.0.0.1:9/v1",
      "--model",
      "m",
      "--tools",
      tools,
      "--scope",
      "t/modules",
      "--store",
      "postgres://127.0.0.1:9/none",
      "--first-byte-timeout",
      "2s",
      "--deadline",
      "3s",
      "hello"
    )
    expect(heavyIn(modules)).toEqual(expect.arrayContaining(["@toolgate/runtime", "@effect/sql-pg", "ajv"]))
  }, 60_000)
})
