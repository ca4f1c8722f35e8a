/**
 * The outbox dispatcher: delivers the follow-up messages the `Outbox` holds, at least once each,
 * with `Idempotency-Key: <downstream key>:<ordinal>` (`FollowUp.deliveryKey`).
 *
 * Each round leases up to `batchSize` due messages (`Outbox.claim`: a lease with its own fencing
 * token, so two dispatchers never own one message), delivers them (`concurrency` at once; messages
 * of one ordering key are never leased together), and settles each with a fenced write:
 *
 * - a webhook is POSTed the payload's JSON text; 2xx is delivered; 408, 425, 429, 5xx, a refused or
 *   cut connection and a timeout (`deliveryTimeoutMs`) are retried; any other answer is permanent
 *   and dead-letters the message at once;
 * - a named destination is the application's function (`Destinations`); its `DeliveryFailed`
 *   says whether to retry; a name with no function is retried (another worker may have it);
 * - a retry is due again after a "full jitter" delay (uniform in 0 … min(`retryMaxMs`,
 *   `retryBaseMs` · 2^(attempt − 1)), AWS Architecture Blog, "Exponential Backoff And Jitter");
 *   the `maxAttempts`-th failure dead-letters it.
 *
 * Between rounds it waits for a wake-up (`wakeups`: `LISTEN` on the PostgreSQL server, see
 * {@link pgWakeups}; the completion's statement notifies at commit) or `pollMs`, whichever comes
 * first, so delayed messages and the leases of dead dispatchers are picked up without one.
 *
 * What is guaranteed: a message is delivered at least once unless dead-lettered; a receiver that
 * deduplicates on the delivery key applies it exactly once (a dispatcher killed after the
 * receiver answered, before its settlement, delivers it again once the lease expires). Messages of
 * one ordering key are delivered in the order they were written, one at a time (a later one waits
 * for every earlier one to be delivered or dead-lettered). Not guaranteed: any order between
 * messages of different keys or without one, nor between messages of one key written by
 * completions that commit concurrently (their order is that of their writes, not their commits).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import * as Schema from "effect/Schema"
import type { StoreUnavailable } from "./ExecutionError.js"
import * as Outbox from "./Outbox.js"
import * as OutboxMetrics from "./OutboxMetrics.js"

/**
 * A delivery attempt that did not get through: `reason` (`status`: the destination answered
 * `status`; `connection`: refused or cut; `timeout`; `destination`: no function for a named
 * destination, or the function's own failure), whether to try again (`retryable`), and a short
 * `detail` (never the payload).
 *
 * @since 0.1.0
 * @category errors
 */
export class DeliveryFailed extends Schema.TaggedError<DeliveryFailed>()("DeliveryFailed", {
  deliveryKey: Schema.String,
  reason: Schema.Literals(["status", "connection", "timeout", "destination"]),
  status: Schema.NullOr(Schema.Number),
  retryable: Schema.Boolean,
  detail: Schema.String
}) {
  override get message(): string {
    return `delivery ${this.deliveryKey} failed (${this.reason}${this.status === null ? "" : ` ${this.status}`}, ${
      this.retryable ? "retryable" : "permanent"
    }): ${this.detail}`
  }
}

/**
 * A dispatcher option out of its range: `option` names it, `rule` says what it must be.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidDispatcherOptions extends Schema.TaggedError<InvalidDispatcherOptions>()(
  "InvalidDispatcherOptions",
  { option: Schema.String, value: Schema.String, rule: Schema.String }
) {
  override get message(): string {
    return `invalid OutboxDispatcher option ${this.option} = ${this.value}: must be ${this.rule}`
  }
}

/**
 * What a named destination's function receives: the message (its `deliveryKey` is the key to
 * deduplicate on; `payload` the JSON text as written; `attempts` counts this one).
 *
 * @since 0.1.0
 * @category models
 */
export interface Delivery {
  readonly deliveryKey: string
  readonly payload: string
  readonly attempt: number
  readonly message: Outbox.OutboxMessage
}

/**
 * A named destination: delivers one message, or fails with `DeliveryFailed`.
 *
 * @since 0.1.0
 * @category models
 */
export type Destination = (delivery: Delivery) => Effect.Effect<void, DeliveryFailed>

/**
 * The application's named destinations (`FollowUp.named(name, …)`), by name.
 *
 * @since 0.1.0
 * @category services
 */
export class Destinations extends Context.Service<Destinations, ReadonlyMap<string, Destination>>()(
  "@toolgate/runtime/OutboxDispatcher/Destinations"
) {}

/**
 * The named destinations from a record of functions (`{ slack: (delivery) => …, ads: … }`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDestinations = (
  destinations: Readonly<Record<string, Destination>>
): Layer.Layer<Destinations> => Layer.succeed(Destinations, new Map(Object.entries(destinations)))

/**
 * Dispatcher options (durations in ms; `make` checks each and fails with
 * `InvalidDispatcherOptions` naming the first one out of range):
 *
 * - `owner`: this dispatcher's name on its leases (default a random one).
 * - `leaseMs` (30,000; > `deliveryTimeoutMs`): how long a leased message is this dispatcher's.
 * - `deliveryTimeoutMs` (10,000; > 0): one attempt's bound.
 * - `batchSize` (16; 1 … 1,000): messages leased per round; `concurrency` (4; ≥ 1) delivered at once.
 * - `maxAttempts` (8; ≥ 1): attempts before a message is dead-lettered.
 * - `retryBaseMs` (500; ≥ 0), `retryMaxMs` (60,000; ≥ `retryBaseMs`): the jittered backoff.
 * - `pollMs` (1,000; > 0): the longest wait between rounds.
 * - `wakeups`: a queue whose items end the wait early (see {@link pgWakeups}).
 * - `onRound`: called with each round that leased messages (progress, a report).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly owner?: string | undefined
  readonly leaseMs?: number | undefined
  readonly deliveryTimeoutMs?: number | undefined
  readonly batchSize?: number | undefined
  readonly concurrency?: number | undefined
  readonly maxAttempts?: number | undefined
  readonly retryBaseMs?: number | undefined
  readonly retryMaxMs?: number | undefined
  readonly pollMs?: number | undefined
  readonly wakeups?: Queue.Dequeue<unknown, unknown> | undefined
  readonly onRound?: ((round: Round) => Effect.Effect<void>) | undefined
}

/**
 * What one round did: messages leased, delivered, put back for a retry, dead-lettered, and
 * settlements fenced off.
 *
 * @since 0.1.0
 * @category models
 */
export interface Round {
  readonly leased: number
  readonly delivered: number
  readonly retried: number
  readonly deadLettered: number
  readonly leaseLost: number
}

/**
 * A dispatcher.
 *
 * - `round`: one lease-deliver-settle round.
 * - `drain`: rounds until one leases nothing (messages delayed or leased elsewhere stay); returns
 *   their sum.
 * - `run`: rounds for ever, waiting between them (wake-up or `pollMs`); a round in progress when
 *   `stop` completes is finished first (its deliveries settled), then `run` returns. A store
 *   that cannot be reached is waited out (`pollMs`), never fatal.
 *
 * @since 0.1.0
 * @category models
 */
export interface Dispatcher {
  readonly round: Effect.Effect<Round, StoreUnavailable>
  readonly drain: Effect.Effect<Round, StoreUnavailable>
  readonly run: (options?: { readonly stop?: Effect.Effect<void> | undefined }) => Effect.Effect<void>
}

const check = (option: string, value: number, ok: boolean, rule: string) =>
  ok ? undefined : new InvalidDispatcherOptions({ option, value: String(value), rule })

const retryableStatus = (status: number): boolean => status === 408 || status === 425 || status === 429 || status >= 500

const codeOf = (error: unknown): string | undefined => {
  let current = error
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string") return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

const sum = (a: Round, b: Round): Round => ({
  leased: a.leased + b.leased,
  delivered: a.delivered + b.delivered,
  retried: a.retried + b.retried,
  deadLettered: a.deadLettered + b.deadLettered,
  leaseLost: a.leaseLost + b.leaseLost
})

const empty: Round = { leased: 0, delivered: 0, retried: 0, deadLettered: 0, leaseLost: 0 }

/**
 * A dispatcher over the `Outbox` in context, POSTing webhooks with the `HttpClient` in context and
 * handing named destinations to `Destinations` (optional: none by default).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fn("OutboxDispatcher.make")(function*(options: Options = {}) {
  const leaseMs = options.leaseMs ?? 30_000
  const deliveryTimeoutMs = options.deliveryTimeoutMs ?? 10_000
  const batchSize = options.batchSize ?? 16
  const concurrency = options.concurrency ?? 4
  const maxAttempts = options.maxAttempts ?? 8
  const retryBaseMs = options.retryBaseMs ?? 500
  const retryMaxMs = options.retryMaxMs ?? 60_000
  const pollMs = options.pollMs ?? 1_000
  const invalid = check("deliveryTimeoutMs", deliveryTimeoutMs, deliveryTimeoutMs > 0, "> 0") ??
    check(
      "leaseMs",
      leaseMs,
      Number.isFinite(leaseMs) && leaseMs > deliveryTimeoutMs,
      "finite and > deliveryTimeoutMs"
    ) ??
    check("batchSize", batchSize, Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= 1000, "1 … 1,000") ??
    check("concurrency", concurrency, Number.isInteger(concurrency) && concurrency >= 1, "an integer ≥ 1") ??
    check("maxAttempts", maxAttempts, Number.isInteger(maxAttempts) && maxAttempts >= 1, "an integer ≥ 1") ??
    check("retryBaseMs", retryBaseMs, Number.isFinite(retryBaseMs) && retryBaseMs >= 0, "finite and ≥ 0") ??
    check("retryMaxMs", retryMaxMs, Number.isFinite(retryMaxMs) && retryMaxMs >= retryBaseMs, "≥ retryBaseMs") ??
    check("pollMs", pollMs, Number.isFinite(pollMs) && pollMs > 0, "finite and > 0")
  if (invalid !== undefined) return yield* invalid
  const owner = options.owner ?? `dispatcher-${(yield* Random.nextInt).toString(36)}`
  const outbox = yield* Outbox.Outbox
  const client = yield* HttpClient.HttpClient
  const destinations = Option.getOrElse(
    yield* Effect.serviceOption(Destinations),
    (): ReadonlyMap<string, Destination> => new Map()
  )

  const webhook = (message: Outbox.OutboxMessage): Effect.Effect<void, DeliveryFailed> => {
    const failed = (reason: DeliveryFailed["reason"], status: number | null, retryable: boolean, detail: string) =>
      new DeliveryFailed({ deliveryKey: message.deliveryKey, reason, status, retryable, detail })
    const request = HttpClientRequest.post(message.destination).pipe(
      HttpClientRequest.setHeader("idempotency-key", message.deliveryKey),
      HttpClientRequest.bodyText(message.payload, "application/json")
    )
    return client.execute(request).pipe(
      Effect.mapError((error) =>
        error.reason._tag === "InvalidUrlError"
          ? failed("connection", null, false, "the URL is not valid")
          : failed("connection", null, true, `the connection failed (${codeOf(error.reason.cause) ?? "no code"})`)
      ),
      Effect.flatMap((response) =>
        response.status >= 200 && response.status < 300
          ? Effect.void
          : Effect.fail(
            failed("status", response.status, retryableStatus(response.status), `answered ${response.status}`)
          )
      ),
      Effect.scoped,
      Effect.timeoutOrElse({
        duration: Duration.millis(deliveryTimeoutMs),
        orElse: () => Effect.fail(failed("timeout", null, true, `no answer within ${deliveryTimeoutMs} ms`))
      })
    )
  }

  const named = (message: Outbox.OutboxMessage): Effect.Effect<void, DeliveryFailed> => {
    const destination = destinations.get(message.destination)
    if (destination === undefined) {
      return Effect.fail(
        new DeliveryFailed({
          deliveryKey: message.deliveryKey,
          reason: "destination",
          status: null,
          retryable: true,
          detail: `no destination named ${JSON.stringify(message.destination)} in this worker`
        })
      )
    }
    return Effect.suspend(() =>
      destination({
        deliveryKey: message.deliveryKey,
        payload: message.payload,
        attempt: message.attempts,
        message
      })
    ).pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(deliveryTimeoutMs),
        orElse: () =>
          Effect.fail(
            new DeliveryFailed({
              deliveryKey: message.deliveryKey,
              reason: "timeout",
              status: null,
              retryable: true,
              detail: `no answer within ${deliveryTimeoutMs} ms`
            })
          )
      })
    )
  }

  /** Full jitter: uniform in 0 … min(max, base · 2^(attempt − 1)). */
  const backoff = (attempt: number) =>
    Effect.map(Random.next, (u) => Math.floor(u * Math.min(retryMaxMs, retryBaseMs * 2 ** Math.max(0, attempt - 1))))

  /** One message: deliver, then settle; the outcome for the round's tally. */
  const deliver = (message: Outbox.OutboxMessage) =>
    Effect.gen(function*() {
      const ref = { id: message.id, leaseFence: message.leaseFence ?? 0n }
      const attempt = yield* Effect.exit(message.kind === "webhook" ? webhook(message) : named(message))
      let settlement: Outbox.Settlement
      let outcome: OutboxMetrics.Outcome
      if (Exit.isSuccess(attempt)) {
        settlement = { _tag: "Delivered" }
        outcome = "delivered"
      } else {
        const failure = Option.getOrUndefined(Exit.findErrorOption(attempt))
        const error = failure?.message ?? "the delivery died"
        if (failure !== undefined && failure.retryable && message.attempts < maxAttempts) {
          settlement = { _tag: "Retry", error, delayMs: yield* backoff(message.attempts) }
          outcome = "retried"
        } else {
          settlement = { _tag: "Dead", error }
          outcome = "dead_lettered"
        }
      }
      const settled = yield* Effect.exit(outbox.settle(ref, settlement))
      if (Exit.isFailure(settled)) {
        const error = Option.getOrUndefined(Exit.findErrorOption(settled))
        if (error?._tag === "MessageLeaseLost") {
          yield* OutboxMetrics.count("lease_lost")
          return "lease_lost" as const
        }
        return yield* Effect.failCause(settled.cause as never) as Effect.Effect<never, StoreUnavailable>
      }
      yield* OutboxMetrics.count(outcome)
      if (outcome === "delivered") yield* OutboxMetrics.recordLatency(settled.value.latencyMs)
      return outcome
    })

  const round: Effect.Effect<Round, StoreUnavailable> = Effect.gen(function*() {
    const leased = yield* outbox.claim({ owner, leaseMs, limit: batchSize })
    if (leased.length === 0) return empty
    const outcomes = yield* Effect.forEach(leased, deliver, { concurrency })
    const tally = { ...empty, leased: leased.length }
    for (const outcome of outcomes) {
      if (outcome === "delivered") tally.delivered++
      else if (outcome === "retried") tally.retried++
      else if (outcome === "dead_lettered") tally.deadLettered++
      else tally.leaseLost++
    }
    const counts = yield* outbox.counts()
    yield* OutboxMetrics.setPending(counts.pending + counts.delivering)
    if (options.onRound !== undefined) yield* options.onRound(tally)
    return tally
  }).pipe(Effect.withSpan("OutboxDispatcher.round"))

  const drain: Effect.Effect<Round, StoreUnavailable> = Effect.gen(function*() {
    let total = empty
    for (;;) {
      const done = yield* round
      total = sum(total, done)
      if (done.leased === 0) return total
    }
  })

  const wait: Effect.Effect<void> = options.wakeups === undefined
    ? Effect.sleep(Duration.millis(pollMs))
    : Effect.raceFirst(
      Effect.sleep(Duration.millis(pollMs)),
      Effect.asVoid(Effect.ignore(Queue.take(options.wakeups)))
    )

  const run = (runOptions?: { readonly stop?: Effect.Effect<void> | undefined }): Effect.Effect<void> =>
    Effect.gen(function*() {
      const stop = runOptions?.stop
      const stopped = stop === undefined ? undefined : yield* Effect.forkChild(stop, { startImmediately: true })
      const isStopped = () => stopped !== undefined && stopped.pollUnsafe() !== undefined
      while (!isStopped()) {
        const done = yield* Effect.exit(round)
        if (isStopped()) return
        // a round that leased a full batch goes on at once; otherwise wait (or stop)
        if (Exit.isSuccess(done) && done.value.leased >= batchSize) continue
        if (stopped === undefined) yield* wait
        else yield* Effect.raceFirst(wait, Fiber.join(stopped))
      }
    })

  const dispatcher: Dispatcher = { round, drain, run }
  return dispatcher
})

/**
 * Wake-ups from the PostgreSQL server: `LISTEN`s on the outbox's channel for `schema` (the
 * statement that writes follow-ups notifies it at commit) and returns the queue of its
 * notifications, for {@link Options.wakeups}. The listener holds a connection until the scope
 * closes. (PGlite serves no notifications across connections: poll there.)
 *
 * @since 0.1.0
 * @category constructors
 */
export { pgWakeups } from "./internal/outbox/wakeups.js"
