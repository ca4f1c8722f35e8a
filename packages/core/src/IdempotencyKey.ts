/**
 * Idempotency keys for tool calls: which calls are "the same mutation" and must run once.
 *
 * - The **intent key** names a business decision, not a delivery: caller scope (tenant + the
 *   business event or conversation turn the model is answering) + tool name + the tool's declared
 *   key fields (default: all validated arguments) + an occurrence ordinal that tells apart
 *   identical calls inside one turn. A client retry of the turn reproduces every input, so it
 *   reproduces the key; the provider's tool-call id, the attempt number and the wall clock are
 *   never part of it: each changes on every retry, so a key built from one would let a retried turn
 *   execute its mutations again.
 * - The **fingerprint** hashes the full validated arguments. The same key with another
 *   fingerprint means the key was reused for a different payload (Stripe `idempotency_error`,
 *   IETF draft 422) and must never execute.
 * - The **provider-id key** exists because some teams ask for it. It is documented to
 *   double-execute: a retried stream carries fresh tool-call ids (OpenAI, Anthropic and Gemini
 *   all mint new ids per response), so every retry looks new. The test
 *   `packages/runtime/test/KeyStrategy.test.ts` shows it.
 *
 * Encoding (version `tg1`): every hashed input is RFC 8785 canonical JSON (JCS, through the
 * `canonicalize` package by the RFC's author) of a tuple whose first element names the key kind,
 * so keys of different kinds can never collide, and whose parts are JSON strings or canonical JSON
 * values, so `("a-b","c")` and `("a","b-c")` encode differently. Values must be plain JSON: finite
 * numbers of magnitude at most 2^53−1 (every larger double is an integer that may be a collapsed
 * literal: `JSON.parse` reads `9007199254740993` as `…992`), well-formed strings (no lone
 * surrogates), plain objects and arrays. Strings are not Unicode-normalised (JCS does not; NFC and NFD spellings hash apart).
 * The stored value carries the algorithm: `tg1:sha256:<64 lowercase hex>`, so a later scheme can
 * coexist with stored records.
 *
 * Hashing: SHA-256 through the Web Crypto API (`crypto.subtle.digest`), which Node ≥ 19, Deno,
 * Bun, browsers and workers all ship, so core stays free of I/O and platform imports and needs no
 * extra dependency. It is asynchronous, so hashing is an Effect. A runtime may pass a faster
 * synchronous {@link Digest} (`@toolgate/runtime` uses `node:crypto`); SHA-256 is SHA-256, and the
 * golden vectors in `packages/core/test/IdempotencyKey.test.ts` pin both to the same hashes.
 *
 * Key policies (scheme `tg1`, version 2 of the tuples). A tool with a `KeyPolicy` (the
 * {@link Policy} annotation, or a `ToolExecutor` handler's `keyPolicy`) keys its calls by the
 * policy: the intent key hashes `["toolgate/intent", 2, tenant, scope, tool, keyFields, ordinal]`,
 * where `scope` is `{"turn": …}` or, for a window-scoped policy, `{"window": {"size", "start",
 * "zone"}}` (the window's start on the zone's wall clock, from the scope's `eventTime`) and
 * `keyFields` the declared fields' values by path (default: the arguments without the free text);
 * the fingerprint hashes `["toolgate/fingerprint", 2, tool, arguments without the free text]`.
 * Tools without a policy keep the version-1 tuples, byte for byte: their keys never change (the
 * golden vectors pin both versions).
 *
 * (Why one long module: one concept, a call's keys, with both digests and the occurrence ordinals.
 * The plain-JSON check is `internal/plainJson`; the policy, `KeyPolicy`.)
 *
 * @since 0.1.0
 */
import canonicalizeJson from "canonicalize"
import type { Tool } from "effect/ai"
import type * as Brand from "effect/Brand"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { pickOwn, sha256Hex, violation, wellFormed } from "./internal/plainJson.js"
import * as KeyPolicy from "./KeyPolicy.js"
import type { ValidatedToolCall } from "./ToolCall.js"

/**
 * The algorithm id written in front of every key and fingerprint: toolgate key scheme 1, SHA-256.
 *
 * @since 0.1.0
 * @category constants
 */
export const algorithm = "tg1:sha256"

/**
 * An intent (or provider-id) key: `tg1:sha256:<64 lowercase hex>`.
 *
 * @since 0.1.0
 * @category models
 */
export type IntentKey = Brand.Branded<string, "@toolgate/core/IntentKey">

/**
 * A payload fingerprint: `tg1:sha256:<64 lowercase hex>` of the full validated arguments.
 *
 * @since 0.1.0
 * @category models
 */
export type Fingerprint = Brand.Branded<string, "@toolgate/core/Fingerprint">

/**
 * The caller's scope of a key.
 *
 * - `tenant`: whose data the call mutates (an account, workspace or user id). Also the store's
 *   partition (`scope` column).
 * - `turn`: the business event the model is answering: the client's own `Idempotency-Key` when
 *   the request has one, otherwise conversation id + id of the user message. A client retry of the
 *   same turn must reproduce it; a new turn must not.
 * - `eventTime`: when the business event happened (the lead's form was received), as the event
 *   says, not the clock at execution: a retry carries the same value. Window-scoped key policies
 *   take their window from it (and fail with `MissingEventTime` without it); other keys ignore it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Scope {
  readonly tenant: string
  readonly turn: string
  readonly eventTime?: DateTime.DateTime | Date | undefined
}

/**
 * Everything deriving a key can fail with: arguments that do not hash deterministically
 * ({@link UnkeyableArguments}), a declared key field the call lacks (`MissingKeyField`), a
 * window-scoped call without an event time (`MissingEventTime`).
 *
 * @since 0.1.0
 * @category errors
 */
export type KeyError = UnkeyableArguments | KeyPolicy.MissingKeyField | KeyPolicy.MissingEventTime

/**
 * How a key is derived.
 *
 * - `"intent"` (default): scope + tool + key fields + ordinal. Stable across retries.
 * - `"providerId"`: tenant + tool + the provider's tool-call id. Double-executes whenever the
 *   provider mints a new id for the same decision (every retried stream); offered for systems
 *   that replay the very same response, such as a queue redelivering one stored turn.
 *
 * @since 0.1.0
 * @category models
 */
export type Strategy = "intent" | "providerId"

/**
 * A value that cannot be hashed deterministically: a non-finite number, a number beyond
 * ±(2^53−1), a lone surrogate, a non-JSON value (function, bigint, symbol, class instance,
 * `undefined` in an array), nesting deeper than 512 levels, arguments the tool's parameters
 * Schema cannot encode, or a
 * provider-id key requested for a call without an id. Carries the tool name and the JSON path of
 * the offending value, never the value.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnkeyableArguments extends Schema.TaggedError<UnkeyableArguments>()("UnkeyableArguments", {
  toolName: Schema.String,
  /** JSON path of the offending value (`""` for the root, `a.b[2]` below it). */
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `cannot derive an idempotency key for tool ${JSON.stringify(this.toolName)}${
      this.path === "" ? "" : ` at ${this.path}`
    }: ${this.reason}`
  }
}

/**
 * Tool annotation naming the argument fields that identify the mutation (business ids, target
 * stage, owner, due date), as top-level keys of the schema-encoded arguments (version-1 keys; a
 * declared field that is absent is left out). Absent: all arguments are key fields. Free text
 * outside the key still belongs to the fingerprint, so a retry that rephrases it fails with
 * `IdempotencyKeyReused` rather than executing twice. For free text that should replay, paths,
 * missing fields refused and window scopes, use a {@link Policy} instead.
 *
 * ```ts
 * const UpdateStage = Tool.make("UpdateStage", { parameters, success })
 *   .annotate(IdempotencyKey.KeyFields, ["dealId", "stage"])
 * ```
 *
 * @since 0.1.0
 * @category annotations
 */
export const KeyFields = Context.Reference<ReadonlyArray<string> | undefined>(
  "@toolgate/core/IdempotencyKey/KeyFields",
  {
    defaultValue: () => undefined
  }
)

/**
 * Tool annotation holding the tool's key policy (see `KeyPolicy`): key fields by path, free text
 * that neither keys nor must match, and an optional calendar-window scope. It takes precedence
 * over {@link KeyFields}; a `ToolExecutor` handler's `keyPolicy` takes precedence over it.
 *
 * ```ts
 * const CreateTask = Tool.make("create_task", { parameters, success })
 *   .annotate(IdempotencyKey.Policy, KeyPolicy.makeUnsafe({ keyFields: ["lead_id"], freeText: ["title"] }))
 * ```
 *
 * @since 0.1.0
 * @category annotations
 */
export const Policy = Context.Reference<KeyPolicy.KeyPolicy | undefined>("@toolgate/core/IdempotencyKey/Policy", {
  defaultValue: () => undefined
})

/**
 * A SHA-256 implementation: the lowercase hex digest of a string's UTF-8 bytes.
 *
 * @since 0.1.0
 * @category models
 */
export type Digest = (text: string) => Effect.Effect<string>

/**
 * SHA-256 through the Web Crypto API (`globalThis.crypto.subtle`). The default {@link Digest}.
 *
 * @since 0.1.0
 * @category digests
 */
export const webCryptoDigest: Digest = (text) => Effect.promise(() => sha256Hex(text))

/**
 * RFC 8785 canonical JSON of a plain JSON value. Object members whose value is `undefined` are
 * left out (as in `JSON.stringify`).
 *
 * Fails with `UnkeyableArguments` for anything that is not plain JSON or does not hash
 * deterministically (see the module docs).
 *
 * @since 0.1.0
 * @category canonical JSON
 */
export const canonical = (value: unknown, toolName = ""): Result.Result<string, UnkeyableArguments> => {
  const found = violation(value, "")
  if (found !== undefined) return Result.fail(new UnkeyableArguments({ toolName, ...found }))
  const text = canonicalizeJson(value)
  return text === undefined
    ? Result.fail(new UnkeyableArguments({ toolName, path: "", reason: "value has no JSON representation" }))
    : Result.succeed(text)
}

/**
 * The canonical key material of one call: what the intent key and the fingerprint hash.
 *
 * - `keyFields`: canonical JSON of the key fields (an object with only the declared fields;
 *   all arguments when none are declared; under a policy, the fields' values by path).
 * - `arguments`: canonical JSON of the full arguments.
 * - `occurrence`: canonical JSON of `[tool, keyFields]`, what {@link Occurrences} counts.
 * - `policy`, `matched`: the tool's key policy and canonical JSON of the arguments without its
 *   free text (what the version-2 fingerprint hashes); absent for version-1 material.
 *
 * @since 0.1.0
 * @category models
 */
export interface Material {
  readonly tool: string
  readonly keyFields: string
  readonly arguments: string
  readonly occurrence: string
  readonly policy?: KeyPolicy.KeyPolicy | undefined
  readonly matched?: string | undefined
}

/**
 * Builds the canonical material of a call from its schema-encoded arguments (a JSON object) and
 * optional key fields (top-level names; a declared field that is absent is left out).
 *
 * Fails with `UnkeyableArguments` when the arguments are not plain JSON.
 *
 * @since 0.1.0
 * @category key material
 */
export const material = (
  tool: string,
  args: unknown,
  keyFields?: ReadonlyArray<string> | undefined
): Result.Result<Material, UnkeyableArguments> => {
  const all = canonical(args, tool)
  if (Result.isFailure(all)) return Result.fail(all.failure)
  let keyText = all.success
  if (keyFields !== undefined) {
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      return Result.fail(
        new UnkeyableArguments({ toolName: tool, path: "", reason: "key fields need object arguments" })
      )
    }
    const selected = canonical(pickOwn(args, keyFields), tool)
    if (Result.isFailure(selected)) return Result.fail(selected.failure)
    keyText = selected.success
  }
  return Result.succeed({
    tool,
    keyFields: keyText,
    arguments: all.success,
    occurrence: `[${JSON.stringify(tool)},${keyText}]`
  })
}

/**
 * Builds the canonical material of a call under a key policy from its schema-encoded arguments
 * (a JSON object): the key fields' values by path (or the arguments without the free text), the
 * full arguments, and the arguments without the free text.
 *
 * Fails with `UnkeyableArguments` when the arguments are not plain JSON, and with
 * `MissingKeyField` when the call lacks a declared key field.
 *
 * @since 0.1.0
 * @category key material
 */
export const policyMaterial = (
  tool: string,
  args: unknown,
  policy: KeyPolicy.KeyPolicy
): Result.Result<Material, UnkeyableArguments | KeyPolicy.MissingKeyField> => {
  const all = canonical(args, tool)
  if (Result.isFailure(all)) return Result.fail(all.failure)
  const selected = KeyPolicy.select(policy, args, tool)
  if (Result.isFailure(selected)) return Result.fail(selected.failure)
  const keyText = selected.success.key === args ? all : canonical(selected.success.key, tool)
  if (Result.isFailure(keyText)) return Result.fail(keyText.failure)
  const matched = selected.success.matched === args ? all : canonical(selected.success.matched, tool)
  if (Result.isFailure(matched)) return Result.fail(matched.failure)
  return Result.succeed({
    tool,
    keyFields: keyText.success,
    arguments: all.success,
    occurrence: `[${JSON.stringify(tool)},${keyText.success}]`,
    policy,
    matched: matched.success
  })
}

const scopeViolation = (scope: Scope, tool: string): UnkeyableArguments | undefined =>
  !wellFormed(scope.tenant) || !wellFormed(scope.turn)
    ? new UnkeyableArguments({ toolName: tool, path: "", reason: "scope contains a lone surrogate" })
    : !wellFormed(tool)
    ? new UnkeyableArguments({ toolName: "", path: "", reason: "tool name contains a lone surrogate" })
    : undefined

/**
 * The exact text the intent key hashes: canonical JSON of
 * `["toolgate/intent", 1, tenant, turn, tool, keyFields, ordinal]`.
 *
 * @since 0.1.0
 * @category key material
 */
export const intentInput = (scope: Scope, m: Material, ordinal: number): string =>
  `["toolgate/intent",1,${JSON.stringify(scope.tenant)},${JSON.stringify(scope.turn)},${
    JSON.stringify(m.tool)
  },${m.keyFields},${ordinal}]`

/**
 * The exact text a version-2 intent key (a tool with a key policy) hashes: canonical JSON of
 * `["toolgate/intent", 2, tenant, scope, tool, keyFields, ordinal]`, `scope` being `{"turn": …}`
 * or, for a window-scoped policy, `{"window": {"size", "start", "zone"}}` with the window the
 * scope's `eventTime` falls in.
 *
 * Fails with `MissingEventTime` when the policy is window-scoped and the scope has no usable
 * event time.
 *
 * @since 0.1.0
 * @category key material
 */
export const policyIntentInput = (
  scope: Scope,
  m: Material,
  ordinal: number
): Result.Result<string, KeyPolicy.MissingEventTime> => {
  const window = m.policy?.window
  let part: string
  if (window === undefined) {
    part = `{"turn":${JSON.stringify(scope.turn)}}`
  } else {
    const eventTime = scope.eventTime === undefined
      ? undefined
      : DateTime.isDateTime(scope.eventTime)
      ? scope.eventTime
      : Option.getOrUndefined(DateTime.make(scope.eventTime))
    if (scope.eventTime !== undefined && eventTime === undefined) {
      return Result.fail(
        new KeyPolicy.MissingEventTime({ toolName: m.tool, reason: "its event time is not a valid date" })
      )
    }
    const start = KeyPolicy.windowStart(window, eventTime, m.tool)
    if (Result.isFailure(start)) return Result.fail(start.failure)
    part = `{"window":{"size":${JSON.stringify(window.size)},"start":${JSON.stringify(start.success)},"zone":${
      JSON.stringify(window.timeZone)
    }}}`
  }
  return Result.succeed(
    `["toolgate/intent",2,${JSON.stringify(scope.tenant)},${part},${JSON.stringify(m.tool)},${m.keyFields},${ordinal}]`
  )
}

/**
 * The exact text the fingerprint hashes: canonical JSON of
 * `["toolgate/fingerprint", 1, tool, arguments]`, or, for material of a tool with a key policy,
 * `["toolgate/fingerprint", 2, tool, arguments without the free text]`.
 *
 * @since 0.1.0
 * @category key material
 */
export const fingerprintInput = (m: Material): string =>
  m.policy !== undefined && m.matched !== undefined
    ? `["toolgate/fingerprint",2,${JSON.stringify(m.tool)},${m.matched}]`
    : `["toolgate/fingerprint",1,${JSON.stringify(m.tool)},${m.arguments}]`

/** The text an intent key hashes: version 1, or version 2 for material of a tool with a key policy. */
const keyInput = (scope: Scope, m: Material, ordinal: number): Result.Result<string, KeyError> => {
  const bad = intentViolation(scope, m, ordinal)
  if (bad !== undefined) return Result.fail(bad)
  return m.policy === undefined ? Result.succeed(intentInput(scope, m, ordinal)) : policyIntentInput(scope, m, ordinal)
}

/**
 * The exact text the provider-id key hashes: canonical JSON of
 * `["toolgate/provider-id", 1, tenant, tool, toolCallId]`.
 *
 * @since 0.1.0
 * @category key material
 */
export const providerIdInput = (tenant: string, tool: string, toolCallId: string): string =>
  `["toolgate/provider-id",1,${JSON.stringify(tenant)},${JSON.stringify(tool)},${JSON.stringify(toolCallId)}]`

/**
 * Formats a hex digest as a stored key value: `tg1:sha256:<hex>`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const format = (hexDigest: string): string => `${algorithm}:${hexDigest}`

/**
 * The intent key of one call. `ordinal` is 0 for the first call with this tool and these key
 * fields in the turn, 1 for the second identical one, and so on (see {@link Occurrences}).
 * Material of a tool with a key policy gives a version-2 key ({@link policyIntentInput}).
 *
 * Fails with `UnkeyableArguments` when the scope or tool name is not well-formed text, or the
 * ordinal is not a non-negative integer; with `MissingEventTime` for a window-scoped policy
 * without an event time.
 *
 * @since 0.1.0
 * @category keys
 */
export const intentKey = (
  scope: Scope,
  m: Material,
  ordinal: number,
  digest: Digest = webCryptoDigest
): Effect.Effect<IntentKey, UnkeyableArguments | KeyPolicy.MissingEventTime> => {
  const input = keyInput(scope, m, ordinal)
  return Result.isFailure(input)
    ? Effect.fail(input.failure as UnkeyableArguments | KeyPolicy.MissingEventTime)
    : Effect.map(digest(input.success), (h) => format(h) as IntentKey)
}

const intentViolation = (scope: Scope, m: Material, ordinal: number): UnkeyableArguments | undefined =>
  scopeViolation(scope, m.tool) ??
    (Number.isSafeInteger(ordinal) && ordinal >= 0
      ? undefined
      : new UnkeyableArguments({ toolName: m.tool, path: "", reason: "ordinal must be a non-negative integer" }))

/**
 * The fingerprint of one call's full arguments.
 *
 * @since 0.1.0
 * @category keys
 */
export const fingerprint = (m: Material, digest: Digest = webCryptoDigest): Effect.Effect<Fingerprint> =>
  Effect.map(digest(fingerprintInput(m)), (h) => format(h) as Fingerprint)

/**
 * The provider-id key: tenant + tool + the provider's tool-call id. See {@link Strategy} for why
 * it double-executes on retried streams.
 *
 * Fails with `UnkeyableArguments` when a string is not well-formed.
 *
 * @since 0.1.0
 * @category keys
 */
export const providerIdKey = (
  tenant: string,
  tool: string,
  toolCallId: string,
  digest: Digest = webCryptoDigest
): Effect.Effect<IntentKey, UnkeyableArguments> =>
  !wellFormed(tenant) || !wellFormed(tool) || !wellFormed(toolCallId)
    ? Effect.fail(new UnkeyableArguments({ toolName: tool, path: "", reason: "text contains a lone surrogate" }))
    : Effect.map(digest(providerIdInput(tenant, tool, toolCallId)), (h) => format(h) as IntentKey)

/**
 * The key to hand to the downstream system (a Stripe `Idempotency-Key` header, a Salesforce
 * external-id value, a HubSpot unique property): `tgk1-<64 hex of the key>-<generation>`, 78+
 * ASCII characters, identical across attempts and takeovers of one record, new when the key is
 * reused after retention (`generation` bumps), so a deliberate repeat is not swallowed by the
 * downstream's own deduplication. The key already hashes the tenant, so no second hash is needed.
 *
 * @since 0.1.0
 * @category keys
 */
export const downstreamKey = (key: string, generation: number): string =>
  `tgk1-${key.slice(key.lastIndexOf(":") + 1)}-${generation}`

/**
 * Counts occurrences of identical calls (same tool, same key fields) within one turn, to assign
 * ordinals: the first occurrence gets 0, the next identical one 1, and so on. Share one instance
 * across every model step of a turn, so a call repeated in a later step of the same turn is the
 * second occurrence, not a replay of the first.
 *
 * @since 0.1.0
 * @category ordinals
 */
export class Occurrences {
  private readonly seen = new Map<string, number>()
  /** The ordinal of the next call with this material's `occurrence`. */
  next(m: Material): number {
    const n = this.seen.get(m.occurrence) ?? 0
    this.seen.set(m.occurrence, n + 1)
    return n
  }
}

/**
 * The keys of one call.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallKeys {
  readonly key: IntentKey
  readonly fingerprint: Fingerprint
  readonly material: Material
}

/** JSON encoders of tools' parameters, built once per tool. */
const parameterEncoders = new WeakMap<Tool.Any, (u: unknown) => Exit.Exit<unknown, Schema.SchemaError>>()

/**
 * Encodes a validated call's parameters to JSON with its tool's parameters Schema
 * (`Schema.toCodecJson`, so defaults and transformations normalise them: `{q}` and
 * `{q, limit: 10}` agree when `limit` defaults to 10, and a `Date` becomes its ISO string)
 * and returns its canonical material under the key policy: `policy` when given, else the tool's
 * {@link Policy} annotation (version-2 material), else its {@link KeyFields} annotation
 * (version 1).
 *
 * Fails with `UnkeyableArguments` when encoding fails or the encoded value is not plain JSON, and
 * with `MissingKeyField` when the call lacks a key field its policy declares.
 *
 * @since 0.1.0
 * @category key material
 */
export const materialOf = (
  call: ValidatedToolCall,
  policy?: KeyPolicy.KeyPolicy | undefined
): Result.Result<Material, UnkeyableArguments | KeyPolicy.MissingKeyField> => {
  const tool: Tool.Any = call.tool
  let encode = parameterEncoders.get(tool)
  if (encode === undefined) {
    encode = Schema.encodeUnknownExit(Schema.toCodecJson(tool.parametersSchema as Schema.Codec<unknown, unknown>))
    parameterEncoders.set(tool, encode)
  }
  const encoded = encode(call.params)
  if (encoded._tag === "Failure") {
    return Result.fail(
      new UnkeyableArguments({
        toolName: call.name,
        path: "",
        reason: "the parameters schema cannot encode the arguments"
      })
    )
  }
  const chosen = policy ?? Context.get(tool.annotations, Policy)
  return chosen !== undefined
    ? policyMaterial(call.name, encoded.value, chosen)
    : material(call.name, encoded.value, Context.get(tool.annotations, KeyFields))
}

/**
 * A synchronous SHA-256 implementation: the lowercase hex digest of a string's UTF-8 bytes (for
 * example `node:crypto`'s `createHash`).
 *
 * @since 0.1.0
 * @category models
 */
export type SyncDigest = (text: string) => string

/** The options of {@link forCall} and {@link forCallSync} but the digest. */
interface CallKeyOptions {
  readonly scope: Scope
  readonly ordinal?: number | undefined
  readonly strategy?: Strategy | undefined
  readonly material?: Material | undefined
  readonly policy?: KeyPolicy.KeyPolicy | undefined
}

/** The texts a call's key and fingerprint hash, and its material: what both digests share. */
const callInputs = (
  call: ValidatedToolCall,
  options: CallKeyOptions
): Result.Result<{ readonly key: string; readonly fingerprint: string; readonly material: Material }, KeyError> => {
  let m = options.material
  if (m === undefined) {
    const derived = materialOf(call, options.policy)
    if (Result.isFailure(derived)) return Result.fail(derived.failure)
    m = derived.success
  }
  let key: string
  if (options.strategy === "providerId") {
    const tenant = options.scope.tenant
    const id = call.id ?? ""
    const bad = id === ""
      ? "the call has no provider id"
      : !wellFormed(tenant) || !wellFormed(call.name) || !wellFormed(id)
      ? "text contains a lone surrogate"
      : undefined
    if (bad !== undefined) return Result.fail(new UnkeyableArguments({ toolName: call.name, path: "", reason: bad }))
    key = providerIdInput(tenant, call.name, id)
  } else {
    const input = keyInput(options.scope, m, options.ordinal ?? 0)
    if (Result.isFailure(input)) return Result.fail(input.failure)
    key = input.success
  }
  return Result.succeed({ key, fingerprint: fingerprintInput(m), material: m })
}

/**
 * {@link forCall} with a synchronous digest: the same keys, without an Effect per hash (the
 * executor's hot path). Fails with a {@link KeyError}.
 *
 * @since 0.1.0
 * @category keys
 */
export const forCallSync = (
  call: ValidatedToolCall,
  options: CallKeyOptions & { readonly digest: SyncDigest }
): Result.Result<CallKeys, KeyError> =>
  Result.map(callInputs(call, options), (inputs) => ({
    key: format(options.digest(inputs.key)) as IntentKey,
    fingerprint: format(options.digest(inputs.fingerprint)) as Fingerprint,
    material: inputs.material
  }))

/**
 * Derives the key and fingerprint of a validated call in a scope.
 *
 * - `ordinal`: the call's occurrence ordinal in the turn (default 0).
 * - `strategy`: `"intent"` (default) or `"providerId"` (needs the call's provider id).
 * - `digest`: the SHA-256 implementation (default Web Crypto).
 * - `policy`: the tool's key policy (default: its {@link Policy} annotation, if any).
 *
 * Fails with a {@link KeyError}.
 *
 * @since 0.1.0
 * @category keys
 */
export const forCall = (
  call: ValidatedToolCall,
  options: CallKeyOptions & { readonly digest?: Digest | undefined }
): Effect.Effect<CallKeys, KeyError> =>
  Effect.gen(function*() {
    const digest = options.digest ?? webCryptoDigest
    const inputs = yield* Effect.fromResult(callInputs(call, options))
    return {
      key: format(yield* digest(inputs.key)) as IntentKey,
      fingerprint: format(yield* digest(inputs.fingerprint)) as Fingerprint,
      material: inputs.material
    }
  })
