/**
 * JSON Schema compilation for tool arguments, on ajv 8 (Ajv2020, Ajv2019 and the draft-07 class,
 * formats from ajv-formats, `multipleOf` in decimal arithmetic): a schema's validator, once its
 * dialect is known and it passed the cycle check (`schemaStructure`), and ajv's errors as argument
 * issues.
 *
 * @internal
 */
import type { ToolCall } from "@toolgate/core"
import { Ajv as AjvDraft07, type ErrorObject, type ValidateFunction } from "ajv"
import addFormats from "ajv-formats"
import { Ajv2019 } from "ajv/dist/2019.js"
import { Ajv2020 } from "ajv/dist/2020.js"
import { type Dialect, dialectOf, inPlaceCycle, type Json, metaSchemaUri } from "./schemaStructure.js"

// ---------------------------------------------------------------------------------------------
// Compilation

type AnyAjv = AjvDraft07 | Ajv2019 | Ajv2020

/** A finite number as `coefficient × 10^exponent`, from its shortest round-trip decimal form. */
const decimal = (n: number): readonly [bigint, number] => {
  const [mantissa, e = "0"] = String(Math.abs(n)).split("e")
  const [whole, fraction = ""] = mantissa!.split(".")
  return [BigInt(`${whole}${fraction}`), Number(e) - fraction.length]
}

/**
 * Whether `value` is a multiple of `divisor` in decimal arithmetic: JSON numbers are decimals,
 * and `19.99` is a multiple of `0.01`. ajv divides in binary floating point (`19.99 / 0.01` is
 * `1998.9999999999998`, so ajv rejects it; `1e21` passes as a multiple of 3); each number is read
 * back as the shortest decimal that round-trips, which is what the model wrote.
 */
const isMultipleOf = (value: number, divisor: number): boolean => {
  if (!Number.isFinite(value) || !Number.isFinite(divisor) || divisor <= 0) return false
  const [a, p] = decimal(value)
  const [b, q] = decimal(divisor)
  return p >= q ? (a * 10n ** BigInt(p - q)) % b === 0n : a % (b * 10n ** BigInt(q - p)) === 0n
}

const multipleOf = Object.assign(
  (divisor: number, value: number): boolean => {
    const ok = isMultipleOf(value, divisor)
    multipleOf.errors = ok ? [] : [{
      keyword: "multipleOf",
      message: `must be multiple of ${divisor}`,
      params: { multipleOf: divisor }
    }]
    return ok
  },
  { errors: [] as Array<Partial<ErrorObject>> }
)

/**
 * A new ajv instance of a dialect. Options: every error (`allErrors`), no coercion, no defaults,
 * no removal (ajv never changes the value), unknown keywords ignored as the specification says
 * (`strict: false`), known formats asserted (ajv-formats), unknown formats ignored, and
 * `multipleOf` in decimal arithmetic ({@link isMultipleOf}).
 */
const create = (dialect: Dialect): AnyAjv => {
  const options = { strict: false, allErrors: true, logger: false } as const
  const ajv = dialect === "2020-12"
    ? new Ajv2020(options)
    : dialect === "2019-09"
    ? new Ajv2019(options)
    : new AjvDraft07(options)
  ;(addFormats as unknown as (ajv: AnyAjv) => void)(ajv)
  ajv.removeKeyword("multipleOf")
  ajv.addKeyword({ keyword: "multipleOf", type: "number", schemaType: "number", errors: true, validate: multipleOf })
  return ajv
}

/**
 * Compiles a schema and removes it from the instance again, so that the next tool may use the
 * same `$id`; when a nested `$id` another tool left behind collides, on a fresh instance.
 */
const compileOnce = (ajv: AnyAjv, dialect: Dialect, schema: Json): ValidateFunction => {
  let validate: ValidateFunction
  try {
    validate = ajv.compile(schema)
  } catch (error) {
    if (!(error instanceof Error) || !/already exists|more than one schema/.test(error.message)) throw error
    return create(dialect).compile(schema)
  }
  ajv.removeSchema(schema)
  if (typeof schema.$id === "string") ajv.removeSchema(schema.$id)
  return validate
}

/** Ajv instances of one set of tools, one per dialect, created when first needed. */
export class Compiler {
  readonly #instances = new Map<Dialect, AnyAjv>()

  instance(dialect: Dialect): AnyAjv {
    let ajv = this.#instances.get(dialect)
    if (ajv === undefined) {
      ajv = create(dialect)
      this.#instances.set(dialect, ajv)
    }
    return ajv
  }

  /**
   * Compiles one schema: checks it against its dialect's meta-schema, rejects in-place cycles,
   * compiles it and runs it once on a few probe values (a stack overflow there is a schema that
   * cannot be validated). The validator, or a one-line reason.
   */
  compile(schema: Json): ValidateFunction | { readonly reason: string } {
    const dialect = dialectOf(schema)
    if (typeof dialect === "object") {
      return {
        reason: `its $schema ${
          JSON.stringify(dialect.unsupported)
        } is not supported (toolgate validates JSON Schema 2020-12, 2019-09, draft-07 and draft-06)`
      }
    }
    // ajv knows each meta-schema by one spelling (and draft-06 as draft-07)
    const target = typeof schema.$schema === "string" ? { ...schema, $schema: metaSchemaUri[dialect] } : schema
    const ajv = this.instance(dialect)
    try {
      if (!ajv.validateSchema(target)) return { reason: schemaErrors(ajv.errors ?? [], target) }
      const cycle = inPlaceCycle(target, dialect)
      if (cycle !== undefined) {
        return {
          reason: `its JSON Schema loops without consuming the value: ${
            cycle.join(" → ")
          } (each step applies a schema to the same value through $ref or allOf/anyOf/oneOf/not/if, so no validator can finish; a recursive schema must recurse through properties or items)`
        }
      }
      const validate = compileOnce(ajv, dialect, target)
      for (const probe of [{}, [], "", 0, null, true]) validate(probe)
      return validate
    } catch (error) {
      if (error instanceof RangeError) {
        return { reason: "its JSON Schema is nested too deeply or does not terminate (the stack overflowed)" }
      }
      return { reason: `its JSON Schema cannot be compiled: ${oneLine(error)}` }
    }
  }
}

const oneLine = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, "; ").slice(0, 300)

const hasUppercaseType = (schema: unknown, depth = 0): boolean => {
  if (depth > 256 || typeof schema !== "object" || schema === null) return false
  const s = schema as Json
  if (typeof s.type === "string" && /^[A-Z_]+$/.test(s.type)) return true
  return Object.values(s).some((value) => hasUppercaseType(value, depth + 1))
}

const schemaErrors = (errors: ReadonlyArray<ErrorObject>, schema: Json): string => {
  const first = errors.slice(0, 3).map((e) =>
    `${e.instancePath === "" ? "the root" : `#${e.instancePath}`} ${e.message}`
  )
  const more = errors.length > 3 ? `; and ${errors.length - 3} more` : ""
  const hint = hasUppercaseType(schema)
    ? " (uppercase types such as \"OBJECT\" are Gemini's OpenAPI types: they are read only in a Gemini functionDeclarations entry)"
    : ""
  return `its JSON Schema is invalid: ${first.join("; ")}${more}${hint}`
}

// ---------------------------------------------------------------------------------------------
// Errors as issues

const jsonType = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
    ? "array"
    : typeof value === "number"
    ? Number.isInteger(value) ? "integer" : "number"
    : typeof value

const short = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value)
  return text.length <= 60 ? text : `${text.slice(0, 57)}…`
}

/** An ajv `instancePath` (`/items/0/sku`) as path segments, array indices as numbers. */
const segments = (pointer: string, value: unknown): Array<PropertyKey> => {
  if (pointer === "") return []
  const out: Array<PropertyKey> = []
  let at: unknown = value
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.includes("~") ? raw.replaceAll("~1", "/").replaceAll("~0", "~") : raw
    if (Array.isArray(at)) {
      out.push(Number(key))
      at = at[Number(key)]
    } else {
      out.push(key)
      at = typeof at === "object" && at !== null ? (at as Record<string, unknown>)[key] : undefined
    }
  }
  return out
}

const valueAt = (value: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let at = value
  for (const key of path) {
    at = typeof at === "object" && at !== null
      ? (at as Record<PropertyKey, unknown>)[key]
      : undefined
  }
  return at
}

/**
 * ajv's errors for a value as argument issues, in ajv's order: where (`path`) and what
 * (`message`). A missing required member and an undeclared member point at the member itself; a
 * failed `anyOf`/`oneOf` lists each branch's errors before its own.
 */
export const issues = (errors: ReadonlyArray<ErrorObject>, value: unknown): Array<ToolCall.ArgumentIssue> => {
  const out: Array<ToolCall.ArgumentIssue> = []
  for (const error of errors) {
    const path = segments(error.instancePath, value)
    const params = error.params as Record<string, unknown>
    switch (error.keyword) {
      case "required":
        out.push({ path: [...path, String(params.missingProperty)], message: "is required" })
        break
      case "additionalProperties":
        out.push({
          path: [...path, String(params.additionalProperty)],
          message: "is not declared (additionalProperties is false)"
        })
        break
      case "unevaluatedProperties":
        out.push({
          path: [...path, String(params.unevaluatedProperty)],
          message: "is not declared (unevaluatedProperties is false)"
        })
        break
      case "type": {
        const expected = Array.isArray(params.type) ? params.type.join(" or ") : String(params.type)
        out.push({ path, message: `must be ${expected}, got ${jsonType(valueAt(value, path))}` })
        break
      }
      case "enum":
        out.push({
          path,
          message: `must be one of ${short(params.allowedValues)}, got ${short(valueAt(value, path))}`
        })
        break
      case "const":
        out.push({ path, message: `must be ${short(params.allowedValue)}` })
        break
      default:
        out.push({ path, message: error.message ?? `fails "${error.keyword}"` })
    }
  }
  return out
}
