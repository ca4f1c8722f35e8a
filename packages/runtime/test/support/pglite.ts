/**
 * PGlite for tests: an initialised data directory is created once per machine (initdb takes
 * seconds) under the OS temp dir, then copied for each test file (~60 ms) and reopened (~0.2 s),
 * so files never share a live directory and a run never pays initdb twice.
 */
import type { PgClient } from "@effect/sql-pg"
import { PGlite } from "@electric-sql/pglite"
import { EmbeddedPostgres } from "@toolgate/runtime"
import { Effect, Layer } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const root = path.join(os.tmpdir(), "toolgate-pglite")
const template = path.join(root, "template-0.5.14")

/** Creates the template once: initdb into a private directory, then an atomic rename. */
const ensureTemplate = async (): Promise<void> => {
  if (fs.existsSync(path.join(template, "PG_VERSION"))) return
  fs.mkdirSync(root, { recursive: true })
  const scratch = fs.mkdtempSync(path.join(root, "init-"))
  const db = await PGlite.create({ dataDir: scratch })
  await db.close()
  try {
    fs.renameSync(scratch, template)
  } catch {
    // another process won the race; its template is as good
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

/** A fresh copy of the initialised template, for a test that manages the directory itself. */
export const freshDir = async (): Promise<string> => {
  await ensureTemplate()
  const target = fs.mkdtempSync(path.join(root, "run-"))
  fs.cpSync(template, target, { recursive: true })
  return target
}

/**
 * A `PgClient`/`SqlClient` on a fresh copy of the initialised template, served by
 * `EmbeddedPostgres`; the copy is deleted when the layer is released.
 */
export const layer: Layer.Layer<
  PgClient.PgClient | SqlClient.SqlClient,
  SqlError.SqlError | EmbeddedPostgres.DataDirInUse
> = Layer.unwrap(
  Effect.gen(function*() {
    const dir = yield* Effect.acquireRelease(
      Effect.promise(freshDir),
      (target) => Effect.sync(() => fs.rmSync(target, { recursive: true, force: true }))
    )
    return EmbeddedPostgres.layer({ dataDir: dir })
  })
)

/**
 * A process that holds `dataDir`'s lock as an owner would, publishes its pid with a socket path
 * nobody listens on, and never serves: an owner that does not answer. Settles once it holds the
 * lock; kill it to let the directory go.
 */
export const unansweringOwner = (dataDir: string): Promise<ChildProcess> =>
  new Promise((resolve, reject) => {
    const holder = spawn(process.execPath, [
      "-e",
      `const { DatabaseSync } = require("node:sqlite")
       const db = new DatabaseSync(${JSON.stringify(path.join(dataDir, "toolgate-owner.lock"))})
       db.exec("PRAGMA locking_mode = EXCLUSIVE"); db.exec("BEGIN EXCLUSIVE")
       require("node:fs").writeFileSync(${JSON.stringify(path.join(dataDir, "toolgate-owner.json"))},
         JSON.stringify({ pid: process.pid, endpoint: ${
        JSON.stringify(path.join(dataDir, "nobody.sock"))
      }, since: "", version: 1 }))
       console.log("held"); setInterval(() => {}, 1000)`
    ], { stdio: ["ignore", "pipe", "ignore"] })
    holder.once("error", reject)
    holder.stdout!.once("data", () => resolve(holder))
  })
