#!/usr/bin/env node
// Keeps test/fixtures an exact copy of the shared fixture corpus (../shared/fixtures), so a fresh
// clone tests on its own. `node scripts/sync-fixtures.mjs` copies; `--check` only compares and
// exits 1 when the two differ (CI runs it when ../shared/fixtures exists, and skips otherwise).
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const shared = process.env.TOOLGATE_SHARED_FIXTURES ?? join(root, "..", "shared", "fixtures")
const local = join(root, "test", "fixtures")
const check = process.argv.includes("--check")

if (!existsSync(shared)) {
  console.log(`fixtures: ${relative(root, shared)} not found; nothing to ${check ? "compare" : "sync"}`)
  process.exit(0)
}

const list = (dir) => {
  const out = new Map()
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name)
      if (statSync(p).isDirectory()) walk(p)
      else out.set(relative(dir, p), readFileSync(p))
    }
  }
  if (existsSync(dir)) walk(dir)
  return out
}

if (check) {
  const a = list(shared)
  const b = list(local)
  const diffs = []
  for (const [name, bytes] of a) {
    if (!b.has(name)) diffs.push(`missing in test/fixtures: ${name}`)
    else if (!bytes.equals(b.get(name))) diffs.push(`differs: ${name}`)
  }
  for (const name of b.keys()) if (!a.has(name)) diffs.push(`not in the shared corpus: ${name}`)
  if (diffs.length > 0) {
    console.error(diffs.join("\n"))
    console.error(`fixtures: test/fixtures is out of date (${diffs.length} differences); run npm run fixtures:sync`)
    process.exit(1)
  }
  console.log(`fixtures: test/fixtures matches the shared corpus (${a.size} files)`)
} else {
  rmSync(local, { recursive: true, force: true })
  cpSync(shared, local, { recursive: true })
  console.log(`fixtures: copied ${list(local).size} files into test/fixtures`)
}
