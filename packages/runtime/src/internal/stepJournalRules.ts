/**
 * The rules both step journals (SQL and memory) share, so they cannot drift: which requests are
 * valid, how an output is written (its JSON text and size) and read back, and when a claim takes
 * an existing step. The SQL claim statement states the same takeover condition in SQL; the
 * conformance suite checks that both agree. (`StepJournal` imports the journals, which import
 * this module: it reads `StepJournal`'s values only when called.)
 *
 * @internal
 */
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as StepJournal from "../StepJournal.js"
import { maxStepOutputBytes, positive, render } from "./storeRules.js"

const invalid = (
  ref: StepJournal.StepRef,
  operation: StepJournal.InvalidStepRequest["operation"],
  field: StepJournal.InvalidStepRequest["field"],
  value: unknown,
  rule: string
) =>
  new StepJournal.InvalidStepRequest({
    turn: ref.turn,
    step: typeof ref.step === "number" ? ref.step : Number.NaN,
    operation,
    field,
    value: render(value),
    rule
  })

const badStep = (ref: StepJournal.StepRef, operation: StepJournal.InvalidStepRequest["operation"]) =>
  Number.isInteger(ref.step) && ref.step >= 1 && ref.step <= 2_147_483_647
    ? undefined
    : invalid(ref, operation, "step", ref.step, "an integer from 1 to 2147483647")

/**
 * The first rule a claim breaks: a step from 1, a lease of more than 0 ms, a finite retention
 * ≥ 0 ms.
 *
 * @internal
 */
export const checkClaim = (request: StepJournal.ClaimRequest): StepJournal.InvalidStepRequest | undefined =>
  badStep(request, "claim") ??
    (!positive(request.leaseMs)
      ? invalid(request, "claim", "leaseMs", request.leaseMs, "a finite number of ms > 0")
      : !(typeof request.retentionMs === "number" && Number.isFinite(request.retentionMs) &&
          request.retentionMs >= 0)
      ? invalid(request, "claim", "retentionMs", request.retentionMs, "a finite number of ms ≥ 0")
      : undefined)

/** The rule a heartbeat breaks: its new lease must be more than 0 ms. @internal */
export const checkHeartbeat = (
  lease: StepJournal.StepRef,
  leaseMs: number
): StepJournal.InvalidStepRequest | undefined =>
  positive(leaseMs) ? undefined : invalid(lease, "heartbeat", "leaseMs", leaseMs, "a finite number of ms > 0")

// Built on first use: this module and `StepJournal` import each other.
let codec:
  | {
    readonly encode: (output: StepJournal.StepOutput) => string
    readonly decode: (text: string) => Exit.Exit<StepJournal.StepOutput, Schema.SchemaError>
  }
  | undefined
const outputCodec = () => {
  if (codec === undefined) {
    const json = Schema.fromJsonString(StepJournal.StepOutput)
    // the Exit adapter runs no fiber when the encoding is synchronous; a failure still throws
    // through the Sync adapter, as before
    const encodeExit = Schema.encodeExit(json)
    const encodeSync = Schema.encodeSync(json)
    codec = {
      encode: (output) => {
        const encoded = encodeExit(output)
        return Exit.isSuccess(encoded) ? encoded.value : encodeSync(output)
      },
      decode: Schema.decodeUnknownExit(json)
    }
  }
  return codec
}

/**
 * The JSON text an output is stored as and its UTF-8 size, or `StepOutputTooLarge`.
 *
 * @internal
 */
export const outputText = (
  lease: StepJournal.StepRef,
  output: StepJournal.StepOutput
): { readonly text: string; readonly bytes: number } | StepJournal.StepOutputTooLarge => {
  const text = outputCodec().encode(output)
  const bytes = Buffer.byteLength(text, "utf8")
  return bytes > maxStepOutputBytes
    ? new StepJournal.StepOutputTooLarge({
      turn: lease.turn,
      step: lease.step,
      bytes,
      maxBytes: maxStepOutputBytes
    })
    : { text, bytes }
}

/** A stored output's JSON text decoded; `undefined` when it does not decode. @internal */
export const readOutput = (text: string): StepJournal.StepOutput | undefined => {
  const decoded = outputCodec().decode(text)
  return Exit.isSuccess(decoded) ? decoded.value : undefined
}

/** What a claim compares against an existing step. @internal */
export interface Existing {
  readonly status: StepJournal.Status
  readonly fingerprint: string
  readonly owner: string | null
  /** ms since the epoch, or `null`. */
  readonly leaseExpiresAt: number | null
}

/**
 * How a claim at `now` (ms) by (`fingerprint`, `owner`) treats an existing step:
 *
 * - `resume`: this owner's own live lease (a claim whose response was lost);
 * - `take`: the same fingerprint, and the step `released` or its lease expired;
 * - `refuse`: anything else (recorded, leased elsewhere, another fingerprint); the claim answers
 *   the step.
 *
 * @internal
 */
export const claimOn = (
  step: Existing,
  request: { readonly fingerprint: string; readonly owner: string },
  now: number
): "resume" | "take" | "refuse" => {
  if (step.fingerprint !== request.fingerprint) return "refuse"
  switch (step.status) {
    case "released":
      return "take"
    case "in_progress":
      return step.owner === request.owner
        ? "resume"
        : step.leaseExpiresAt !== null && step.leaseExpiresAt <= now
        ? "take"
        : "refuse"
    case "recorded":
      return "refuse"
  }
}
