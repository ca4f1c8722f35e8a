import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const src = (pkg: string) => fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url))
const srcDir = (pkg: string) => fileURLToPath(new URL(`./packages/${pkg}/src/`, import.meta.url))

// Tests import the packages' sources, not their dist, so a test run never sees a stale build.
// (Tests that spawn the CLI use the built dist: `npm test` runs `tsc -b` first.)
export default defineConfig({
  resolve: {
    alias: ["core", "adapters", "runtime", "cluster", "testing", "demo", "cli"].flatMap((pkg) => [
      { find: new RegExp(`^@toolgate/${pkg}$`), replacement: src(pkg) },
      { find: new RegExp(`^@toolgate/${pkg}/(.*)$`), replacement: `${srcDir(pkg)}$1.ts` }
    ])
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
