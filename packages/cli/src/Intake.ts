/**
 * `toolgate intake`: the lead cluster's HTTP intake (`@toolgate/cluster`'s `Intake`) served on
 * Node at `host:port`, sending each accepted lead event into the cluster whose storage is on the
 * PostgreSQL server `--store` names, as a client that takes no shard. On SIGTERM it stops
 * listening; what it accepted is already persisted.
 *
 * @since 0.1.0
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { PgClient } from "@effect/sql-pg"
import { Intake, Runner } from "@toolgate/cluster"
import { HttpRouter } from "effect/http"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { createServer } from "node:http"

/**
 * Options of an intake: the server's URL, the HTTP address, the cluster's settings (the same
 * `prefix` and `shardsPerGroup` as its workers).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly store: string
  readonly host: string
  readonly port: number
  readonly cluster: Runner.Options
}

/**
 * The intake: the route served on `host:port` (port 0: a free one), sending through a cluster
 * client. Launch it with `Layer.launch`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options) =>
  HttpRouter.serve(Intake.layer, { disableLogger: true }).pipe(
    Layer.provide(Runner.layerClient(options.cluster)),
    Layer.provide(PgClient.layer({ url: Redacted.make(options.store), maxConnections: 4 })),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port, host: options.host }))
  )
