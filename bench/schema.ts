/**
 * The tool-argument validation benchmark: the JSON Schema validators toolgate could adopt, on the
 * cases issue 9 is about (correctness) and on a typical 10-field tool-call argument object
 * (speed: ns per validation of a valid and of an invalid object, interleaved rounds, median; and
 * the time to compile one tool's schema). Contenders:
 *
 * - `toolgate`: `ToolValidator` as shipped (ajv 8 Ajv2020, `allErrors`, ajv-formats, decimal
 *   `multipleOf`, the `$ref`-loop check, issues as paths);
 * - `ajv 8`: Ajv2020 with its defaults (`strict: false` only, so unknown keywords are ignored);
 * - `@cfworker/json-schema`: `Validator` on 2020-12, every error (`shortCircuit: false`);
 * - `@hyperjump/json-schema`: the compiled 2020-12 validator, `FLAG` output;
 * - `effect Schema`: what toolgate did before, a JSON Schema translated to an effect Schema by
 *   `SchemaRepresentation.fromJsonSchemaDocument` (here with `patterns: "apply"`; toolgate did not
 *   pass it and rejected every schema with a `pattern`), decoded with `errors: "all"`.
 *
 * Run: `npx tsc -b bench && node bench/dist/schema.js` (or through `bench/main.ts`, which imports
 * {@link runSchemaBenchmark}); about 5 s.
 */
import { Validator } from "@cfworker/json-schema"
import { registerSchema, validate as hyperjumpValidate } from "@hyperjump/json-schema/draft-2020-12"
import { ToolDefinition, ToolValidator } from "@toolgate/adapters"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Effect, JsonSchema, Schema, SchemaRepresentation } from "effect"
import { pathToFileURL } from "node:url"
import { median } from "./measure.js"
import { cell, fmt, markdownTable, packageVersion, textTable } from "./report.js"

type Json = Record<string, unknown>
/** A compiled validator: whether the value is valid. */
type Check = (value: unknown) => boolean

interface Contender {
  readonly name: string
  /** Compiles the schemas of a set of tools together (one instance, one registry), or throws. */
  readonly compile: (schemas: ReadonlyArray<Json>) => Promise<ReadonlyArray<Check>>
}

let uris = 0
const contenders: ReadonlyArray<Contender> = [
  {
    name: "toolgate",
    compile: async (schemas) => {
      const definitions = Effect.runSync(
        ToolDefinition.fromJson(schemas.map((parameters, i) => ({ name: `t${i}`, parameters })))
      )
      const validator = Effect.runSync(ToolValidator.make(definitions))
      return schemas.map((_, i) => (value: unknown) => validator.check(`t${i}`, value)!.length === 0)
    }
  },
  {
    name: "ajv 8",
    compile: async (schemas) => {
      const ajv = new Ajv2020({ strict: false, logger: false })
      return schemas.map((schema) => {
        const check = ajv.compile(schema)
        return (value: unknown) => check(value)
      })
    }
  },
  {
    name: "@cfworker/json-schema",
    compile: async (schemas) =>
      schemas.map((schema) => {
        const validator = new Validator(schema as never, "2020-12", false)
        return (value: unknown) => validator.validate(value).valid
      })
  },
  {
    name: "@hyperjump/json-schema",
    compile: async (schemas) => {
      const out: Array<Check> = []
      for (const schema of schemas) {
        const uri = `https://toolgate.invalid/bench/${++uris}`
        registerSchema(schema as never, uri, "https://json-schema.org/draft/2020-12/schema")
        const check = await hyperjumpValidate(uri)
        out.push((value) => check(value as never).valid)
      }
      return out
    }
  },
  {
    name: "effect Schema",
    compile: async (schemas) =>
      schemas.map((schema) => {
        const decode = Schema.decodeUnknownExit(
          SchemaRepresentation.fromJsonSchemaDocument(JsonSchema.fromSchemaDraft2020_12(schema), {
            patterns: "apply"
          }) as Schema.Codec<unknown>,
          { errors: "all" }
        )
        return (value: unknown) => decode(value)._tag === "Success"
      })
  }
]

/** The typical tool call: 10 arguments, strings, numbers, an enum, a list and a nested object. */
const typical: Json = {
  type: "object",
  properties: {
    title: { type: "string", minLength: 1, maxLength: 200 },
    due_date: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" },
    deal_id: { type: "string" },
    priority: { type: "string", enum: ["low", "normal", "high"] },
    assignee_email: { type: "string" },
    amount: { type: "number", minimum: 0 },
    seats: { type: "integer", minimum: 1, maximum: 10_000 },
    notify: { type: "boolean" },
    tags: { type: "array", items: { type: "string" }, maxItems: 10 },
    contact: {
      type: "object",
      properties: { name: { type: "string" }, phone: { type: ["string", "null"] } },
      required: ["name"],
      additionalProperties: false
    }
  },
  required: ["title", "due_date", "deal_id", "priority"],
  additionalProperties: false
}
const valid = {
  title: "Call back Avery about pilot pricing",
  due_date: "2025-10-16",
  deal_id: "D-1042",
  priority: "high",
  assignee_email: "lead-0042@example.test",
  amount: 1200.5,
  seats: 40,
  notify: true,
  tags: ["pilot", "pricing"],
  contact: { name: "Avery", phone: null }
}
const invalid = { ...valid, seats: 0, priority: "urgent", contact: { phone: 5 } }

const tree: Json = {
  type: "object",
  properties: { title: { type: "string" }, sub: { $ref: "#" } },
  required: ["title"],
  additionalProperties: false
}

/** One correctness case: a schema, a value and the right verdict (`"reject the schema"` for a loop no validator can finish). */
interface Case {
  readonly name: string
  readonly schema: Json
  readonly value: unknown
  readonly expected: "valid" | "invalid" | "reject the schema"
}

const cases: ReadonlyArray<Case> = [
  {
    name: "additionalProperties: false, an undeclared member",
    schema: typical,
    value: { ...valid, extra: 1 },
    expected: "invalid"
  },
  {
    name: "recursion through properties (`$ref: \"#\"`), valid tree",
    schema: tree,
    value: { title: "a", sub: { title: "b", sub: { title: "c" } } },
    expected: "valid"
  },
  {
    name: "recursion through properties, a broken leaf",
    schema: tree,
    value: { title: "a", sub: { title: "b", sub: { title: 3 } } },
    expected: "invalid"
  },
  {
    name: "`{ \"$ref\": \"#\" }` (a loop that consumes nothing)",
    schema: { $ref: "#" },
    value: {},
    expected: "reject the schema"
  },
  {
    name: "`$defs` A → B → A (a two-step loop)",
    schema: { $defs: { A: { $ref: "#/$defs/B" }, B: { $ref: "#/$defs/A" } }, $ref: "#/$defs/A" },
    value: {},
    expected: "reject the schema"
  },
  {
    name: "`multipleOf: 0.01`, the value 19.99",
    schema: { type: "number", multipleOf: 0.01 },
    value: 19.99,
    expected: "valid"
  },
  {
    name: "`format: \"date-time\"`, the value \"tomorrow\" (toolgate asserts formats; 2020-12 leaves that optional)",
    schema: { type: "string", format: "date-time" },
    value: "tomorrow",
    expected: "invalid"
  },
  {
    name: "a key with a lone surrogate, additionalProperties: false",
    schema: { type: "object", additionalProperties: false },
    value: JSON.parse("{\"\\udc00\": 1}"),
    expected: "invalid"
  }
]

const verdict = async (contender: Contender, c: Case): Promise<string> => {
  let check: Check
  try {
    check = (await contender.compile([c.schema]))[0]!
  } catch (error) {
    if (error instanceof RangeError) return "compiling throws RangeError"
    return c.expected === "reject the schema" ? "rejects the schema" : `cannot compile (${short(error)})`
  }
  try {
    return check(c.value) ? "valid" : "invalid"
  } catch (error) {
    return `throws ${error instanceof Error ? error.name : "error"}`
  }
}

const short = (error: unknown) => (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 48)

type Loop = (check: Check, value: unknown, iterations: number) => number

/**
 * A timing loop of its own for one contender: a function made by `new Function` has its own
 * type feedback, so the call inside stays monomorphic and no contender pays for another's.
 */
const makeLoop = (): Loop =>
  new Function(
    "check",
    "value",
    "iterations",
    "const start = performance.now(); for (let i = 0; i < iterations; i++) check(value); return ((performance.now() - start) * 1e6) / iterations"
  ) as Loop

/** One row of the speed table. */
export interface SpeedRow {
  readonly contender: string
  readonly "valid ns/call": number
  readonly "invalid ns/call": number
  readonly "× toolgate (valid)": string
  readonly "compile ms, 1 tool": number
  readonly "compile ms, 10 tools": number
}

/** What the benchmark gives: the correctness table and the speed table, as rows, and its seconds. */
export interface SchemaBenchmark {
  readonly correctness: ReadonlyArray<Record<string, string>>
  readonly speed: ReadonlyArray<SpeedRow>
  readonly seconds: number
}

/** Runs the benchmark (about 5 s). */
export const runSchemaBenchmark = async (): Promise<SchemaBenchmark> => {
  const began = performance.now()
  const correctness: Array<Record<string, string>> = []
  for (const c of cases) {
    const row: Record<string, string> = { case: c.name, expected: c.expected }
    for (const contender of contenders) {
      const got = await verdict(contender, c)
      const right = got === c.expected || (c.expected === "reject the schema" && got === "rejects the schema")
      row[contender.name] = right ? `${got} ✓` : `${got} ✗`
    }
    correctness.push(row)
  }

  const compiled: Array<{ readonly contender: Contender; readonly check: Check; one: number; ten: number }> = []
  const tenTools = Array.from({ length: 10 }, (_, i) => ({ ...typical, description: `tool ${i}` }))
  for (const contender of contenders) {
    let start = performance.now()
    const [check] = await contender.compile([typical])
    const one = performance.now() - start
    start = performance.now()
    await contender.compile(tenTools)
    const all = performance.now() - start
    if (!check!(valid) || check!(invalid)) {
      throw new Error(`${contender.name} gives a wrong verdict on the typical call`)
    }
    compiled.push({ contender, check: check!, one, ten: all })
  }
  // rounds of ~15 ms per contender and value, interleaved, order rotating
  const samples = compiled.map(() => ({ valid: [] as Array<number>, invalid: [] as Array<number> }))
  const loops = compiled.map(() => ({ valid: makeLoop(), invalid: makeLoop() }))
  const iterations = compiled.map(({ check }, i) => {
    const probe = loops[i]!.valid(check, valid, 200)
    return Math.max(200, Math.round(15e6 / Math.max(probe, 1)))
  })
  for (let round = 0; round < 24; round++) {
    for (let k = 0; k < compiled.length; k++) {
      const i = (k + round) % compiled.length
      samples[i]!.valid.push(loops[i]!.valid(compiled[i]!.check, valid, iterations[i]!))
      samples[i]!.invalid.push(loops[i]!.invalid(compiled[i]!.check, invalid, iterations[i]!))
    }
  }
  const ours = median(samples[0]!.valid)
  const speed = compiled.map(({ contender, one, ten }, i): SpeedRow => ({
    contender: contender.name,
    "valid ns/call": Math.round(median(samples[i]!.valid)),
    "invalid ns/call": Math.round(median(samples[i]!.invalid)),
    "× toolgate (valid)": fmt(median(samples[i]!.valid) / ours, 1),
    "compile ms, 1 tool": Number(one.toFixed(2)),
    "compile ms, 10 tools": Number(ten.toFixed(2))
  }))
  return { correctness, speed, seconds: (performance.now() - began) / 1000 }
}

const table = (rows: ReadonlyArray<object>, render: typeof textTable) => {
  const keys = Object.keys(rows[0]!)
  return render(keys, rows.map((row) => keys.map((key) => cell((row as Record<string, unknown>)[key]))))
}

/** The result as plain-text tables for the terminal. */
export const text = (result: SchemaBenchmark): string =>
  `${table(result.correctness, textTable)}\n\n${table(result.speed, textTable)}`

/** The result as the `bench/RESULTS.md` section. */
export const markdown = (result: SchemaBenchmark): string => {
  const versions = ["ajv", "@cfworker/json-schema", "@hyperjump/json-schema"]
    .map((name) => `${name} ${packageVersion(name)}`)
    .join(", ")
  return `## Tool-argument validation

\`bench/schema.ts\` (${
    fmt(result.seconds, 1)
  } s): the JSON Schema validators toolgate could adopt (${versions}) and what
toolgate did before (an effect Schema translated from the JSON Schema), on the cases of issue 9. \`toolgate\` is
\`ToolValidator\` as shipped: ajv's Ajv2020 with every error, ajv-formats, \`multipleOf\` in decimal arithmetic and
the check that rejects a \`$ref\` loop when the tools are read; \`ajv 8\` is Ajv2020 with its defaults.

${table(result.correctness, markdownTable)}

Speed on a typical 10-field tool-call argument object (strings, a pattern, an enum, bounded numbers, a list and a
nested object; \`additionalProperties: false\`), valid and with three errors: the median of 24 interleaved rounds of
~15 ms per contender and value, each timed in a loop of its own; the time to compile one tool's schema, and ten tools'
together.

${table(result.speed, markdownTable)}`
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const result = await runSchemaBenchmark()
  process.stdout.write(`${process.argv.includes("--markdown") ? markdown(result) : text(result)}\n`)
}
