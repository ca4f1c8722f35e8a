/**
 * The README's code examples compile: every ```ts block of `README.md` and of the packages'
 * READMEs stands verbatim in a file of `test/readme/` (between `// begin: FILE` and
 * `// end: FILE`), which `tsc -b` type-checks with the tests; and every such region is still in
 * its README, so neither can drift from the other.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const examples = join(root, "test/readme")

const blocksOf = (readme: string): Array<string> =>
  [...readFileSync(join(root, readme), "utf8").matchAll(/```ts\n(.*?)```\n/gs)].map((m) => m[1]!)

/** The regions of the example files, by README. */
const regions = readdirSync(examples).filter((f) => f.endsWith(".ts")).flatMap((file) =>
  [...readFileSync(join(examples, file), "utf8").matchAll(/^\/\/ begin: (\S+)\n(.*?)^\/\/ end: \1\n/gms)].map((m) => ({
    file,
    readme: m[1]!,
    code: m[2]!
  }))
)

const readmes = [
  "README.md",
  ...readdirSync(join(root, "packages")).map((pkg) => `packages/${pkg}/README.md`).filter((readme) => {
    try {
      return blocksOf(readme).length > 0
    } catch {
      return false
    }
  })
]

describe("README examples", () => {
  for (const readme of readmes) {
    it(`every ts block of ${readme} is type-checked in test/readme/`, () => {
      const checked = regions.filter((r) => r.readme === readme).map((r) => r.code)
      const blocks = blocksOf(readme)
      expect(blocks.length).toBeGreaterThan(0)
      for (const block of blocks) expect(checked).toContain(block)
    })
  }

  it("every example region is still in its README", () => {
    for (const region of regions) expect(blocksOf(region.readme)).toContain(region.code)
  })
})
