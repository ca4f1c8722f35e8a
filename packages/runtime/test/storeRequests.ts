/**
 * Claim requests for the store suites (`conformance.ts`, `claimManySuite.ts`): a fixed instant in
 * 2031 plus offsets (so lease and retention maths are deterministic on the database clock too),
 * and records whose keys no other test uses.
 */
import type { IdempotencyStore as Store } from "@toolgate/runtime"

/** The suites' "now": 2031-01-01T00:00:00Z, in ms since the epoch. */
export const base = Date.UTC(2031, 0, 1)

/** The instant `ms` milliseconds after {@link base}. */
export const at = (ms: number): Date => new Date(base + ms)

let counter = 0

/** A record no other test names: its own scope and a random key. */
export const fresh = (label: string): Store.RecordRef => ({
  scope: `tenant-${label}`,
  key: `tg1:sha256:${label}-${++counter}-${Math.random().toString(36).slice(2)}`
})

/** A claim of `ref` by a new owner at {@link base}, with the suites' defaults, overridden by `over`. */
export const request = (ref: Store.RecordRef, over: Partial<Store.ClaimRequest> = {}): Store.ClaimRequest => ({
  ...ref,
  tool: "CreateTask",
  fingerprint: "fp-1",
  owner: `owner-${++counter}`,
  leaseMs: 1_000,
  retentionMs: 60_000,
  maxAttempts: 3,
  recovery: "reexecute",
  now: at(0),
  ...over
})
