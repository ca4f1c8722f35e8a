/**
 * The memory store's outbox: the messages the memory `IdempotencyStore` writes with a completion,
 * kept beside its records (one state per store instance, found through the store's service value
 * so that `Outbox.layerMemory` shares the store in context), with the same rules as the SQL
 * statements: a write is keyed by its delivery key (a second write of one key changes nothing).
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as FollowUp from "../../FollowUp.js"
import type * as Outbox from "../../Outbox.js"
import { clampLimit } from "../storeRules.js"
import { MessageLeaseLost } from "./errors.js"

/** A message as the memory store keeps it. @internal */
export type MessageRow = { -readonly [K in keyof Outbox.OutboxMessage]: Outbox.OutboxMessage[K] }

/** The outbox of one memory store. @internal */
export interface State {
  readonly messages: Array<MessageRow>
  readonly byDeliveryKey: Map<string, MessageRow>
  /** The store's fence sequence (message leases take their fences from it too). */
  readonly nextFence: () => bigint
  nextId: bigint
}

/** @internal */
export const makeState = (nextFence: () => bigint): State => ({
  messages: [],
  byDeliveryKey: new Map(),
  nextFence,
  nextId: 0n
})

const registry = new WeakMap<object, State>()

/** Registers the outbox state of a memory store's service value. @internal */
export const register = (service: object, state: State): void => {
  registry.set(service, state)
}

/** The outbox state of a memory store's service value, if it is one. @internal */
export const stateOf = (service: object): State | undefined => registry.get(service)

/** Writes a completion's messages at `now` (ms), skipping delivery keys already written. @internal */
export const write = (
  state: State,
  ref: { readonly scope: string; readonly key: string; readonly fence: bigint },
  messages: ReadonlyArray<FollowUp.Message>,
  now: number
): void => {
  for (const m of messages) {
    if (state.byDeliveryKey.has(m.deliveryKey)) continue
    const row: MessageRow = {
      id: ++state.nextId,
      deliveryKey: m.deliveryKey,
      scope: ref.scope,
      key: ref.key,
      fence: ref.fence,
      ordinal: m.ordinal,
      kind: m.kind,
      destination: m.destination,
      payload: m.payload,
      orderingKey: m.orderingKey,
      status: "pending",
      attempts: 0,
      leaseFence: null,
      leaseOwner: null,
      leaseExpiresAt: null,
      availableAt: new Date(now + m.delayMs),
      lastError: null,
      createdAt: new Date(now),
      updatedAt: new Date(now),
      deliveredAt: null
    }
    state.messages.push(row)
    state.byDeliveryKey.set(m.deliveryKey, row)
  }
}

const byId = (a: MessageRow, b: MessageRow): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const clock = (now: Date | undefined) => now === undefined ? Clock.currentTimeMillis : Effect.succeed(now.getTime())

const isDue = (m: MessageRow, now: number): boolean =>
  (m.status === "pending" && m.availableAt.getTime() <= now) ||
  (m.status === "delivering" && m.leaseExpiresAt !== null && m.leaseExpiresAt.getTime() <= now)

/** The `Outbox` service over one memory store's state. @internal */
export const service = (state: State): Outbox.Service => ({
  claim: (request) =>
    Effect.gen(function*() {
      const now = yield* clock(request.now)
      const blocked = new Set<string>()
      const leased: Array<Outbox.OutboxMessage> = []
      const limit = clampLimit(request.limit)
      for (const m of state.messages) {
        if (leased.length >= limit) break
        const open = m.status === "pending" || m.status === "delivering"
        if (m.orderingKey !== null && blocked.has(m.orderingKey)) continue
        if (open && m.orderingKey !== null) blocked.add(m.orderingKey)
        if (!isDue(m, now)) continue
        m.status = "delivering"
        m.attempts += 1
        m.leaseFence = state.nextFence()
        m.leaseOwner = request.owner
        m.leaseExpiresAt = new Date(now + request.leaseMs)
        m.updatedAt = new Date(now)
        leased.push({ ...m })
      }
      return leased
    }).pipe(Effect.withSpan("Outbox.claim")),
  settle: (ref, settlement, options) =>
    Effect.gen(function*() {
      const now = yield* clock(options?.now)
      const m = state.messages.find((row) => row.id === ref.id)
      if (m === undefined || m.leaseFence !== ref.leaseFence || m.status !== "delivering") {
        return yield* new MessageLeaseLost({ id: ref.id.toString(), leaseFence: ref.leaseFence.toString() })
      }
      m.status = settlement._tag === "Delivered" ? "delivered" : settlement._tag === "Retry" ? "pending" : "dead"
      if (settlement._tag !== "Delivered") m.lastError = settlement.error
      if (settlement._tag === "Retry") m.availableAt = new Date(now + settlement.delayMs)
      m.deliveredAt = settlement._tag === "Delivered" ? new Date(now) : null
      m.leaseOwner = null
      m.leaseExpiresAt = null
      m.updatedAt = new Date(now)
      return { latencyMs: Math.max(0, now - m.createdAt.getTime()) }
    }).pipe(Effect.withSpan("Outbox.settle")),
  counts: () =>
    Effect.sync(() => {
      const found = { pending: 0, delivering: 0, delivered: 0, dead: 0 }
      for (const m of state.messages) found[m.status] += 1
      return found
    }),
  list: (query) =>
    Effect.sync(() => {
      const status = query.status === undefined ? undefined : new Set(query.status)
      return state.messages
        .filter((m) =>
          (query.scope === undefined || m.scope === query.scope) &&
          (query.key === undefined || m.key === query.key) &&
          (status === undefined || status.has(m.status))
        )
        .toSorted(byId)
        .slice(0, clampLimit(query.limit))
        .map((m) => ({ ...m }))
    }).pipe(Effect.withSpan("Outbox.list"))
})
