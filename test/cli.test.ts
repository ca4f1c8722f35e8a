/**
 * The CLI contract, run as a child process against the built `toolgate` (npm test builds first):
 * every fixture through `toolgate inspect --json` equals its expected.json (exit 0 complete, 2 error),
 * and bad input gets one line on stderr with exit 1.
 */
import { describe, expect, it } from "@effect/vitest"
import { ExpectedResult } from "@toolgate/adapters"
import { NonStreaming } from "@toolgate/testing"
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Cli from "./support/cli.js"
import { root } from "./support/cli.js"

const fixtures = join(root, "test/fixtures")
const toolgate = (...args: Array<string>) => Cli.toolgate(args)

const cases = readdirSync(fixtures, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) =>
    readdirSync(join(fixtures, d.name))
      .filter((f) => f.endsWith(".sse"))
      .map((f) => ({ provider: d.name, file: join(fixtures, d.name, f), name: f.replace(/\.sse$/, "") }))
  )

describe("toolgate inspect --json on the fixture corpus", () => {
  it("finds the corpus", () => {
    expect(cases.length).toBeGreaterThanOrEqual(60)
  })
  it.concurrent.for(cases)("$name", async ({ file, provider }) => {
    const expected = ExpectedResult.decodeSync(readFileSync(ExpectedResult.pathOf(file), "utf8"))
    const { code, stdout } = await toolgate("inspect", file, "--provider", provider, "--json")
    const got = JSON.parse(stdout)
    expect({
      outcome: got.outcome,
      finishReason: got.finishReason,
      text: got.text,
      toolCalls: got.toolCalls,
      error: got.error?._tag ?? null
    }).toEqual(ExpectedResult.outcomeOf(expected))
    expect(Object.keys(got).toSorted()).toEqual(["error", "finishReason", "outcome", "text", "toolCalls"])
    if (got.error !== null) expect(got.error.message.length).toBeGreaterThan(0)
    expect(code).toBe(expected.outcome === "complete" ? 0 : 2)
  })
})

describe("toolgate inspect: readable view", () => {
  it("prints text, pretty arguments and the finish reason", async () => {
    const { code, stdout } = await toolgate(
      "inspect",
      join(fixtures, "openai-chat/openai-chat__text-then-tools.sse"),
      "--provider",
      "openai-chat"
    )
    expect(code).toBe(0)
    expect(stdout).toContain("finish reason: tool_calls")
    expect(stdout).toMatch(/1\. \w+ {2}id=call_/)
    expect(stdout).toContain("\n       \"")
  })
  it("prints the error tag and message", async () => {
    const { code, stdout } = await toolgate(
      "inspect",
      join(fixtures, "openai-chat/openai-chat__cut-mid-arguments.sse"),
      "--provider",
      "openai-chat"
    )
    expect(code).toBe(2)
    expect(stdout).toContain("error: IncompleteStream: stream ended without a finish signal")
    expect(stdout).toContain("tool calls: none released")
  })
})

describe("toolgate inspect --tools", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-cli-"))
  const tools = join(dir, "tools.json")
  writeFileSync(
    tools,
    JSON.stringify([
      {
        type: "function",
        function: {
          name: "assign_owner",
          parameters: {
            type: "object",
            properties: { deal_id: { type: "string" }, owner_id: { type: "string" }, notify: { type: "boolean" } },
            required: ["deal_id", "owner_id"]
          }
        }
      }
    ])
  )
  it("accepts calls that match their tool", async () => {
    const { code, stdout } = await toolgate(
      "inspect",
      join(fixtures, "openai-chat/openai-chat__parallel-interleaved.sse"),
      "--provider",
      "openai-chat",
      "--json",
      "--tools",
      tools
    )
    expect(code).toBe(0)
    expect(JSON.parse(stdout).toolCalls).toHaveLength(3)
  })
  it("rejects an unknown tool with UnknownTool and releases nothing", async () => {
    const { code, stdout } = await toolgate(
      "inspect",
      join(fixtures, "openai-chat/openai-chat__single-tool.sse"),
      "--provider",
      "openai-chat",
      "--json",
      "--tools",
      tools
    )
    const got = JSON.parse(stdout)
    expect(code).toBe(2)
    expect(got.error._tag).toBe("UnknownTool")
    expect(got.toolCalls).toEqual([])
    expect(got.finishReason).toBe("tool_calls")
  })
  it("rejects arguments that break the schema with ToolArgumentsInvalid and a path", async () => {
    const strict = join(dir, "strict.json")
    writeFileSync(
      strict,
      JSON.stringify({
        tools: [{ name: "assign_owner", input_schema: { type: "object", properties: { notify: { type: "string" } } } }]
      })
    )
    const { code, stdout } = await toolgate(
      "inspect",
      join(fixtures, "openai-chat/openai-chat__parallel-interleaved.sse"),
      "--provider",
      "openai-chat",
      "--json",
      "--tools",
      strict
    )
    const got = JSON.parse(stdout)
    expect(code).toBe(2)
    expect(got.error._tag).toBe("ToolArgumentsInvalid")
    expect(got.error.message).toContain("notify")
  })
})

describe("toolgate: bad input is one line on stderr and exit 1", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-cli-bad-"))
  const empty = join(dir, "empty.sse")
  const binary = join(dir, "binary.sse")
  const notUtf8 = join(dir, "latin1.sse")
  writeFileSync(empty, "")
  writeFileSync(binary, Buffer.from([0x64, 0x61, 0x74, 0x61, 0x00, 0x01, 0x02]))
  writeFileSync(notUtf8, Buffer.from([0x64, 0x61, 0x74, 0x61, 0x3a, 0x20, 0xe9, 0x0a]))
  const valid = join(fixtures, "openai-chat/openai-chat__single-tool.sse")
  const badTools = join(dir, "bad-tools.json")
  writeFileSync(badTools, "{ not json")
  it.concurrent.for([
    { label: "a missing file", args: ["inspect", join(dir, "missing.sse")], says: "no such file" },
    { label: "a directory", args: ["inspect", dir], says: "is a directory" },
    { label: "an empty file", args: ["inspect", empty], says: "is empty" },
    { label: "a binary file", args: ["inspect", binary], says: "is binary" },
    { label: "invalid UTF-8", args: ["inspect", notUtf8], says: "not valid UTF-8" },
    { label: "an unknown provider", args: ["inspect", valid, "--provider", "cohere"], says: "--provider" },
    { label: "no file", args: ["inspect"], says: "Missing required argument" },
    { label: "an unknown command", args: ["inspct"], says: "inspct" },
    { label: "a tools file that is not JSON", args: ["inspect", valid, "--tools", badTools], says: "--tools" },
    { label: "a missing tools file", args: ["inspect", valid, "--tools", join(dir, "nope.json")], says: "tools file" }
  ])("$label", async ({ args, says }) => {
    const { code, stdout, stderr } = await toolgate(...args)
    expect(code).toBe(1)
    expect(stdout).toBe("")
    const lines = stderr.trimEnd().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(says)
    expect(stderr).not.toMatch(/\bat .*\.js:\d+/)
  })
})

describe("toolgate corpus", () => {
  it("prints one row per capture and a summary that matches every expected result", async () => {
    const { code, stdout } = await toolgate("corpus")
    expect(code).toBe(0)
    const summary = stdout.trimEnd().split("\n").at(-1)!
    expect(summary).toMatch(
      new RegExp(`^${cases.length} captures: \\d+ complete .* ${cases.length}/${cases.length} match`)
    )
    for (const c of cases) expect(stdout).toContain(c.name.replace(`${c.provider}__`, ""))
  })

  it("without DIR reads ./test/fixtures of the current directory, wherever the CLI is installed", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "toolgate-corpus-cwd-"))
    mkdirSync(join(cwd, "test/fixtures/anthropic"), { recursive: true })
    for (const ext of [".sse", ".expected.json"]) {
      copyFileSync(
        join(fixtures, `anthropic/anthropic__single-tool${ext}`),
        join(cwd, `test/fixtures/anthropic/anthropic__single-tool${ext}`)
      )
    }
    const { code, stdout } = await Cli.toolgate(["corpus"], { cwd })
    expect(code).toBe(0)
    expect(stdout).toContain(`toolgate corpus: ${join(cwd, "test/fixtures")}`)
    expect(stdout.trimEnd().split("\n").at(-1)).toBe(
      "1 captures: 1 complete (1 tool calls released), 0 typed errors; 1/1 match their expected result"
    )
  })

  it("without DIR and without ./test/fixtures: a one-line usage error asking for DIR", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "toolgate-corpus-empty-"))
    const { code, stderr, stdout } = await Cli.toolgate(["corpus"], { cwd })
    expect(code).toBe(1)
    expect(stdout).toBe("")
    expect(stderr).toBe(`toolgate: corpus: give the corpus DIR (there is no ./test/fixtures in ${cwd})\n`)
  })

  it("an expected.json that does not match its Schema stops the run with one line naming it", async () => {
    const corpus = mkdtempSync(join(tmpdir(), "toolgate-corpus-expected-"))
    mkdirSync(join(corpus, "openai-chat"))
    copyFileSync(join(fixtures, "openai-chat/openai-chat__single-tool.sse"), join(corpus, "openai-chat/a.sse"))
    writeFileSync(join(corpus, "openai-chat/a.expected.json"), JSON.stringify({ outcome: "done" }))
    const { code, stderr, stdout } = await toolgate("corpus", corpus)
    expect(code).toBe(1)
    expect(stdout).toBe("")
    const lines = stderr.trimEnd().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(
      new RegExp(`^toolgate: ${join(corpus, "openai-chat/a.expected.json")}: not a readable expected result: `)
    )
  })
})

describe("toolgate inspect: hostile payloads end in a typed error, never \"internal error\"", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-cli-hostile-"))
  const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`
  const long = "x".repeat(100_000)
  const write = (name: string, body: string) => {
    const file = join(dir, name)
    writeFileSync(file, body)
    return file
  }
  const responses = write(
    "responses-tostring.sse",
    `data: {"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"create_task"}}\n\n` +
      `data: {"type":"response.function_call_arguments.delta","output_index":0,"item_id":{"toString":1},"delta":"{}"}\n\n`
  )
  const chatError = write("chat-error.sse", `data: {"error":{"toString":1,"nested":${deep}}}\n\n`)
  const rawError = write("raw-error.json", `{"error":{"toString":1,"nested":${deep}}}`)
  const longCode = write("chat-long-code.sse", `data: {"error":{"code":"${long}","message":"${long}"}}\n\n`)
  it.concurrent.for([
    { label: "a Responses item_id whose String() throws", file: responses, error: "ToolCallProtocolError" },
    { label: "a chat error object too deep to write", file: chatError, error: "ProviderStreamError" },
    { label: "a raw error body too deep to write", file: rawError, error: "ProviderStreamError" },
    { label: "a 100 kB error code and message", file: longCode, error: "ProviderStreamError" }
  ])("$label", async ({ error, file }) => {
    const { code, stderr, stdout } = await toolgate("inspect", file, "--json")
    expect(stderr).not.toContain("internal error")
    expect(code).toBe(2)
    expect(stdout.trimEnd().split("\n")).toHaveLength(1)
    const got = JSON.parse(stdout)
    expect(Object.keys(got).toSorted()).toEqual(["error", "finishReason", "outcome", "text", "toolCalls"])
    expect(got.error._tag).toBe(error)
    expect(got.error.message.length).toBeLessThanOrEqual(600)
    expect(got.toolCalls).toEqual([])
  })
})

/** A one-call OpenAI Chat capture whose call has these arguments. */
const captureOf = (dir: string, name: string, args: unknown, tool = "create_task") => {
  const file = join(dir, `${name}.sse`)
  const chunk = (delta: unknown, finish: string | null) =>
    `data: ${
      JSON.stringify({
        id: "chatcmpl-1",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [{ index: 0, delta, finish_reason: finish }]
      })
    }\n\n`
  writeFileSync(
    file,
    chunk({
      role: "assistant",
      tool_calls: [{
        index: 0,
        id: "call_1",
        type: "function",
        function: { name: tool, arguments: JSON.stringify(args) }
      }]
    }, null) + chunk({}, "tool_calls") + "data: [DONE]\n\n"
  )
  return file
}

describe("toolgate inspect --tools: exactly what the JSON Schema declares", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-cli-schema-"))
  const toolsFile = (name: string, tools: unknown) => {
    const file = join(dir, `${name}.json`)
    writeFileSync(file, JSON.stringify(tools))
    return file
  }
  const inspect = async (args: unknown, tools: string) => {
    const { code, stderr, stdout } = await toolgate(
      "inspect",
      captureOf(dir, `c${Math.random().toString(36).slice(2)}`, args),
      "--provider",
      "openai-chat",
      "--json",
      "--tools",
      tools
    )
    expect(stderr).toBe("")
    return { code, got: JSON.parse(stdout) }
  }
  const tree = toolsFile("tree", [{
    name: "create_task",
    parameters: {
      type: "object",
      properties: { title: { type: "string" }, sub: { $ref: "#" } },
      required: ["title"],
      additionalProperties: false
    }
  }])
  const gemini = toolsFile("gemini", [{
    functionDeclarations: [{
      name: "create_task",
      parameters: {
        type: "OBJECT",
        properties: { seats: { type: "INTEGER" }, stage: { type: "STRING", format: "enum", enum: ["won", "lost"] } },
        required: ["seats"]
      }
    }]
  }])
  const closed = toolsFile("closed", {
    tools: [{
      type: "function",
      function: {
        name: "create_task",
        parameters: { type: "object", properties: { title: { type: "string" } }, additionalProperties: false }
      }
    }]
  })

  it("accepts a recursive schema (recursion through properties) and its deep valid arguments", async () => {
    const { code, got } = await inspect({ title: "a", sub: { title: "b", sub: { title: "c" } } }, tree)
    expect(got.error).toBeNull()
    expect(code).toBe(0)
    expect(got.toolCalls[0].arguments).toEqual({ title: "a", sub: { title: "b", sub: { title: "c" } } })
  })

  it("rejects a broken leaf of a recursive schema, with its path", async () => {
    const { code, got } = await inspect({ title: "a", sub: { title: "b", sub: { title: 3 } } }, tree)
    expect(code).toBe(2)
    expect(got.error).toEqual({
      _tag: "ToolArgumentsInvalid",
      message: "tool call 0 (create_task) has invalid arguments: sub.sub.title: must be string, got integer"
    })
    expect(got.toolCalls).toEqual([])
  })

  it("validates Gemini's uppercase types", async () => {
    expect((await inspect({ seats: 4, stage: "won" }, gemini)).code).toBe(0)
    const { code, got } = await inspect({ seats: "4", stage: "open" }, gemini)
    expect(code).toBe(2)
    expect(got.error.message).toBe(
      "tool call 0 (create_task) has invalid arguments: seats: must be integer, got string; stage: must be one of [\"won\",\"lost\"], got \"open\""
    )
  })

  it("enforces additionalProperties: false", async () => {
    expect((await inspect({ title: "x" }, closed)).code).toBe(0)
    const { code, got } = await inspect({ title: "x", owner: "usr_1" }, closed)
    expect(code).toBe(2)
    expect(got.error.message).toBe(
      "tool call 0 (create_task) has invalid arguments: owner: is not declared (additionalProperties is false)"
    )
  })
})

describe("toolgate inspect --tools: a tools file toolgate cannot use is one line on stderr and exit 1", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-cli-bad-schema-"))
  const capture = captureOf(dir, "call", { title: "valid" })
  const file = (name: string, tools: unknown) => {
    const path = join(dir, `${name}.json`)
    writeFileSync(path, JSON.stringify(tools))
    return path
  }
  const tool = (parameters: unknown) => [{ name: "create_task", parameters }]
  it.concurrent.for([
    { label: "a self-referential $ref", tools: tool({ $ref: "#" }), says: "loops without consuming the value: # → #" },
    {
      label: "a two-step $ref cycle",
      tools: tool({ $defs: { A: { $ref: "#/$defs/B" }, B: { $ref: "#/$defs/A" } }, $ref: "#/$defs/A" }),
      says: "#/$defs/A → #/$defs/B → #/$defs/A"
    },
    {
      label: "a two-step $ref cycle the arguments never reach",
      tools: tool({
        type: "object",
        properties: { title: { type: "string" }, owner: { $ref: "#/$defs/A" } },
        $defs: { A: { $ref: "#/$defs/B" }, B: { $ref: "#/$defs/A" } }
      }),
      says: "#/$defs/A → #/$defs/B → #/$defs/A"
    },
    { label: "a loop through allOf", tools: tool({ allOf: [{ $ref: "#" }] }), says: "# → #/allOf/0 → #" },
    { label: "an invalid schema", tools: tool({ type: "strin" }), says: "its JSON Schema is invalid" },
    { label: "Gemini types in an OpenAI shape", tools: tool({ type: "OBJECT" }), says: "Gemini's OpenAPI types" },
    {
      label: "an unsupported $schema",
      tools: tool({ $schema: "http://json-schema.org/draft-04/schema#" }),
      says: "is not supported"
    },
    {
      label: "a $ref to nothing",
      tools: tool({ properties: { a: { $ref: "#/$defs/Nope" } } }),
      says: "can't resolve reference"
    },
    {
      label: "a type Gemini does not have",
      tools: [{ functionDeclarations: [{ name: "create_task", parameters: { type: "TEXT" } }] }],
      says: "is not a Gemini type"
    },
    { label: "two tools with one name", tools: [{ name: "a" }, { name: "a" }], says: "tool a: it is defined twice" },
    { label: "no function tool", tools: [{ type: "web_search" }], says: "no function tool" },
    { label: "a webhook that is not a URL", tools: [{ name: "a", webhook: "ftp://x" }], says: "must be an http(s) URL" }
  ])("$label", async ({ says, tools, label }) => {
    const { code, stderr, stdout } = await toolgate(
      "inspect",
      capture,
      "--json",
      "--tools",
      file(label.replace(/\W+/g, "-"), tools)
    )
    expect(code).toBe(1)
    expect(stdout).toBe("")
    const lines = stderr.trimEnd().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^toolgate: --tools: /)
    expect(lines[0]).toContain(says)
  })
})

describe("toolgate inspect: a body that is not an event stream is an input error (one line, exit 1)", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-cli-not-sse-"))
  const write = (name: string, body: string) => {
    const file = join(dir, name)
    writeFileSync(file, body)
    return file
  }
  // Non-streaming answers as the APIs send them: the classic "forgot stream: true" capture.
  const chat = write("chat-completion.json", NonStreaming.chatCompletion)
  const responses = write("responses.json", NonStreaming.responses)
  const anthropic = write("message.json", NonStreaming.anthropicMessage)
  const gemini = write("generate-content.json", NonStreaming.geminiGenerateContent)
  const html = write("gateway.html", "<!DOCTYPE html>\n<html><body><h1>502 Bad Gateway</h1></body></html>\n")
  const json = "a JSON body, not an event stream; did the request set stream: true?"
  const text = "no server-sent events found"
  const bodies = [
    { label: "a chat.completion body", file: chat, provider: "openai-chat", says: json },
    { label: "a Responses body", file: responses, provider: "openai-responses", says: json },
    { label: "an Anthropic message body", file: anthropic, provider: "anthropic", says: json },
    { label: "a Gemini generateContent body", file: gemini, provider: "gemini", says: json },
    { label: "the README", file: join(root, "README.md"), provider: "openai-chat", says: text },
    { label: "an HTML page", file: html, provider: "anthropic", says: text }
  ]
  // One process per test, like the corpus tests above.
  it.concurrent.for(bodies.flatMap((body) => [
    { ...body, args: ["--json"] },
    { ...body, args: ["--provider", body.provider, "--json"] },
    { ...body, args: ["--provider", body.provider] }
  ]))("$label, inspect $args", { timeout: 60_000 }, async ({ args, file, says }) => {
    const { code, stderr, stdout } = await toolgate("inspect", file, ...args)
    expect(code).toBe(1)
    expect(stdout).toBe("")
    const lines = stderr.trimEnd().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`toolgate: ${file}: `)
    expect(lines[0]).toContain(says)
    expect(lines[0]).toContain("(the body starts \"")
  })

  it.concurrent.for([
    {
      label: "a Gemini body that is only an unframed {\"error\": …} object",
      body:
        "{\r\n  \"error\": {\r\n    \"code\": 503,\r\n    \"message\": \"overloaded\",\r\n    \"status\": \"UNAVAILABLE\"\r\n  }\r\n}",
      provider: "gemini",
      error: "ProviderStreamError"
    },
    {
      label: "a body of comments only",
      body: ": ping\n\n: ping\n\n",
      provider: "openai-chat",
      error: "IncompleteStream"
    },
    {
      label: "a body cut inside its first line",
      body: "data: {\"cho",
      provider: "openai-chat",
      error: "IncompleteStream"
    }
  ].flatMap((c) => [{ ...c, mode: c.provider }, { ...c, mode: "auto" }]))(
    "is still an event stream outcome: $label (--provider $mode)",
    { timeout: 60_000 },
    async ({ body, error, mode }) => {
      const file = write(`${error}-${body.length}-${mode}.sse`, body)
      const { code, stdout } = await toolgate("inspect", file, "--provider", mode, "--json")
      expect(code).toBe(2)
      expect(JSON.parse(stdout).error._tag).toBe(error)
    }
  )

  it("toolgate corpus stops at a capture that is not an event stream, naming it", { timeout: 60_000 }, async () => {
    const corpus = mkdtempSync(join(tmpdir(), "toolgate-corpus-"))
    mkdirSync(join(corpus, "openai-chat"))
    copyFileSync(join(fixtures, "openai-chat/openai-chat__single-tool.sse"), join(corpus, "openai-chat/a.sse"))
    copyFileSync(chat, join(corpus, "openai-chat/b.sse"))
    const { code, stderr, stdout } = await toolgate("corpus", corpus)
    expect(code).toBe(1)
    expect(stdout).toBe("")
    expect(stderr.trimEnd().split("\n")).toEqual([expect.stringContaining(`openai-chat/b.sse: ${json}`)])
  })
})

describe("toolgate inspect reads the capture as a stream", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-cli-stream-"))
  const chunk = (delta: object, finish: string | null = null) =>
    `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":${
      JSON.stringify(delta)
    },"finish_reason":${JSON.stringify(finish)}}]}\n\n`
  const filler = (bytes: number) => {
    const line = chunk({ content: "lorem ipsum dolor sit amet " })
    return line.repeat(Math.ceil(bytes / line.length))
  }
  const write = (name: string, ...parts: Array<string | Uint8Array>) => {
    const file = join(dir, name)
    writeFileSync(file, Buffer.concat(parts.map((p) => typeof p === "string" ? Buffer.from(p) : p)))
    return file
  }

  it.concurrent.for([
    { label: "invalid UTF-8", bad: Uint8Array.of(0xe9, 0x0a), says: "is not valid UTF-8 text (at byte" },
    {
      label: "a surrogate encoded in UTF-8",
      bad: Uint8Array.of(0xed, 0xa0, 0x80),
      says: "is not valid UTF-8 text (at byte"
    },
    { label: "a NUL byte", bad: Uint8Array.of(0x00), says: "is binary (contains NUL bytes, the first at byte" },
    {
      label: "a character cut by the end of the file",
      bad: Uint8Array.of(0xf0, 0x9f, 0x98),
      says: "is not valid UTF-8 text (at byte"
    }
  ])(
    "$label 3 MB into a file is the one-line input error with its offset, never a JSON outcome",
    { timeout: 60_000 },
    async ({ bad, says }) => {
      const prefix = `${chunk({ role: "assistant", content: "" })}${filler(3_000_000)}data: `
      const file = write(`late-${bad.join("-")}.sse`, prefix, bad)
      const { code, stderr, stdout } = await toolgate("inspect", file, "--provider", "openai-chat", "--json")
      expect(code).toBe(1)
      expect(stdout).toBe("")
      expect(stderr.trimEnd().split("\n")).toEqual([
        `toolgate: ${file}: ${says} ${Buffer.byteLength(prefix)})${
          says.startsWith("is binary") ? ", not a text stream" : ""
        }`
      ])
    }
  )

  it("a character split across the reads of the file comes out whole", { timeout: 60_000 }, async () => {
    // The emoji's four bytes straddle the end of the first 256 KiB read (`Capture.readBytes`).
    const head = `${chunk({ role: "assistant", content: "" })}: `
    const line = chunk({ content: "😀 done" })
    const pad = 256 * 1024 - 2 - Buffer.byteLength(head) - 2 - line.indexOf("😀")
    const body = `${head}${"x".repeat(pad)}\n\n${line}${chunk({}, "stop")}data: [DONE]\n\n`
    expect(Buffer.from(body).indexOf(Buffer.from("😀"))).toBe(256 * 1024 - 2)
    const file = write("split.sse", body)
    const { code, stdout } = await toolgate("inspect", file, "--json")
    expect(code).toBe(0)
    expect(JSON.parse(stdout)).toMatchObject({ outcome: "complete", text: "😀 done", finishReason: "stop" })
  })

  it("stops reading once ArgumentsTooLarge has decided: a NUL byte past the verdict is never read", {
    timeout: 60_000
  }, async () => {
    const start = chunk({
      role: "assistant",
      content: null,
      tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "create_task", arguments: "" } }]
    })
    const piece = chunk({
      tool_calls: [{ index: 0, function: { arguments: "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" } }]
    })
    // 1.5 MiB of arguments crosses the 1 MiB limit early; the NUL sits 8 MB further on.
    const args = piece.repeat(Math.ceil((1.5 * 1024 * 1024) / 40))
    const file = write(
      "too-large.sse",
      start,
      chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"title\":" } }] }),
      args,
      filler(8_000_000),
      Uint8Array.of(0)
    )
    const { code, stdout } = await toolgate("inspect", file, "--provider", "openai-chat", "--json")
    expect(code).toBe(2)
    expect(JSON.parse(stdout).error._tag).toBe("ArgumentsTooLarge")
  })
})
