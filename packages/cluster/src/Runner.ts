/**
 * The cluster a lead's entity runs in: `effect/cluster`'s `Sharding` over sockets (`SocketRunner`
 * with `@effect/platform-node`'s `NodeClusterSocket` server and client protocol), its messages in
 * `SqlMessageStorage` and its runners and shard locks in `SqlRunnerStorage`, on the `SqlClient` in
 * context — the PostgreSQL server of the idempotency store. Nothing here is a queue, a shard
 * manager or an election of toolgate's own: shards are assigned from the runners' registrations,
 * owned under PostgreSQL advisory locks, and a message is read from storage by its shard's owner.
 *
 * `layer` is a runner (it listens on `host:port` and takes shards); `layerClient` only sends (an
 * intake). Every runner and client of one cluster must use the same `prefix` (the tables
 * `<prefix>_messages`, `_replies`, `_runners`, `_locks` and their migrations; the advisory lock
 * namespace) and the same `shardsPerGroup`.
 *
 * Shutdown (the layer's scope closing: SIGTERM under `NodeRuntime.runMain`): the runner stops
 * taking shards, lets its entities finish what they handle for at most `terminationTimeoutMs`,
 * then interrupts them and releases its shard locks; the messages they had not answered stay in
 * storage and the shards' next owners deliver them (the turn replays its journal).
 *
 * @since 0.1.0
 */
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import {
  type MessageStorage,
  RunnerAddress,
  RunnerHealth,
  Runners,
  type Sharding,
  ShardingConfig,
  SocketRunner,
  SqlMessageStorage,
  SqlRunnerStorage
} from "effect/cluster"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { RpcSerialization } from "effect/rpc"
import type { SocketServer } from "effect/socket"
import type { SqlClient, SqlError } from "effect/sql"

/**
 * Options of a runner or client. Durations in ms.
 *
 * - `prefix` (`toolgate_cluster`): the cluster's table prefix (see the module docs).
 * - `shardsPerGroup` (300): shards of the one shard group; the same on every runner.
 * - `lockExpirationMs` (35,000): how long a shard lock outlives a runner that stopped refreshing
 *   it (a frozen process); a killed one loses its locks when its connection closes.
 * - `refreshAssignmentsMs` (3,000): how often a runner reads the runners and shard assignments.
 * - `healthCheckMs` (60,000): how often runners ping each other (a runner that does not answer
 *   about 3 s of pings is marked unhealthy and its shards reassigned).
 * - `messagePollMs` (10,000): how often a runner reads its shards' unprocessed messages (a
 *   message is also pushed to its runner when it is sent).
 * - `terminationTimeoutMs` (15,000): how long a stopping runner lets its entities finish.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly prefix?: string | undefined
  readonly shardsPerGroup?: number | undefined
  readonly lockExpirationMs?: number | undefined
  readonly refreshAssignmentsMs?: number | undefined
  readonly healthCheckMs?: number | undefined
  readonly messagePollMs?: number | undefined
  readonly terminationTimeoutMs?: number | undefined
}

/**
 * The default table prefix.
 *
 * @since 0.1.0
 * @category defaults
 */
export const defaultPrefix = "toolgate_cluster"

const config = (options: Options, address: Option.Option<RunnerAddress.RunnerAddress>) => {
  const lockExpirationMs = options.lockExpirationMs ?? 35_000
  return ShardingConfig.layer({
    runnerAddress: address,
    shardsPerGroup: options.shardsPerGroup ?? 300,
    shardLockExpiration: Duration.millis(lockExpirationMs),
    shardLockRefreshInterval: Duration.millis(Math.max(100, Math.floor(lockExpirationMs / 3))),
    refreshAssignmentsInterval: Duration.millis(options.refreshAssignmentsMs ?? 3_000),
    runnerHealthCheckInterval: Duration.millis(options.healthCheckMs ?? 60_000),
    entityMessagePollInterval: Duration.millis(options.messagePollMs ?? 10_000),
    entityTerminationTimeout: Duration.millis(options.terminationTimeoutMs ?? 15_000),
    entityReplyPollInterval: Duration.millis(200)
  })
}

const storage = (options: Options) => {
  const prefix = options.prefix ?? defaultPrefix
  return Layer.merge(
    SqlMessageStorage.layerWith({ prefix }).pipe(Layer.provide(NodeCrypto.layerDigest)),
    SqlRunnerStorage.layerWith({ prefix })
  )
}

/**
 * A runner at `host:port` (it listens there; other runners and clients connect there).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options & { readonly host: string; readonly port: number }
): Layer.Layer<
  Sharding.Sharding | Runners.Runners | MessageStorage.MessageStorage,
  SocketServer.SocketServerError | SqlError.SqlError,
  SqlClient.SqlClient
> =>
  SocketRunner.layer.pipe(
    Layer.provide(RunnerHealth.layerPing.pipe(
      Layer.provide(Runners.layerRpc),
      Layer.provide(NodeClusterSocket.layerClientProtocol)
    )),
    Layer.provide([NodeClusterSocket.layerSocketServer, NodeClusterSocket.layerClientProtocol]),
    Layer.provideMerge(storage(options)),
    Layer.provide(config(options, Option.some(RunnerAddress.make(options.host, options.port)))),
    Layer.provide(RpcSerialization.layerSchemaBinary())
  )

/**
 * A client of the cluster: sends messages (persisted, then pushed to the owning runner) and reads
 * their replies; takes no shard.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (
  options: Options
): Layer.Layer<
  Sharding.Sharding | Runners.Runners | MessageStorage.MessageStorage,
  SqlError.SqlError,
  SqlClient.SqlClient
> =>
  SocketRunner.layerClientOnly.pipe(
    Layer.provide(NodeClusterSocket.layerClientProtocol),
    Layer.provideMerge(storage(options)),
    Layer.provide(config(options, Option.none())),
    Layer.provide(RpcSerialization.layerSchemaBinary())
  )
