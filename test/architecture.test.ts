/**
 * The import picture, checked from the sources and the package manifests:
 *
 * ```
 * cli → {demo, cluster, runtime, adapters} → core        cluster → runtime
 * testing: only under demo, tests and bench
 * ```
 *
 * - a package's sources import only the `@toolgate` packages the picture allows it, and declare
 *   each in its `package.json` (runtime never imports adapters: an application wires an adapter's
 *   layer into the pipeline);
 * - nothing imports another package's `internal/` (by package path or by relative path), and
 *   every package's `exports` closes `./internal/*`;
 * - relative imports of a package's sources stay inside that package;
 * - core imports nothing but `effect` and its declared small libraries (no `node:` module: core
 *   does no I/O);
 * - every bare import of a package's sources is a dependency it declares, and every dependency it
 *   declares is imported (a stale one installs code for nothing);
 * - `@toolgate/testing` is imported only by demo, by tests and by bench, and no production
 *   package keeps test support of its own (a `src/testing/` folder);
 * - the `@toolgate` dependencies and the TypeScript project references of each package match the
 *   picture.
 *
 * Imports are read with TypeScript's own pre-processor (static, type-only, re-exports and
 * `import("…")` with a literal).
 */
import { describe, expect, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { builtinModules } from "node:module"
import { dirname, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = fileURLToPath(new URL("..", import.meta.url))

/** The picture: the `@toolgate` packages each package may import. */
const allowed: Readonly<Record<string, ReadonlyArray<string>>> = {
  core: [],
  adapters: ["core"],
  runtime: ["core"],
  cluster: ["core", "runtime"],
  testing: ["core", "adapters", "runtime"],
  demo: ["core", "adapters", "runtime", "cluster", "testing"],
  cli: ["core", "adapters", "runtime", "cluster", "demo"]
}

/** Packages whose sources may import `@toolgate/testing` (besides tests and bench). */
const mayUseTesting = new Set(["testing", "demo"])

interface Manifest {
  readonly name: string
  readonly dependencies?: Readonly<Record<string, string>>
  readonly exports?: Readonly<Record<string, unknown>>
}

const packagesDir = join(root, "packages")
const packages = readdirSync(packagesDir).filter((name) => existsSync(join(packagesDir, name, "package.json")))
const manifest = (pkg: string): Manifest => JSON.parse(readFileSync(join(packagesDir, pkg, "package.json"), "utf8"))

const walk = (dir: string): Array<string> =>
  !existsSync(dir) ? [] : readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry)
    if (entry === "node_modules" || entry === "dist" || entry === "fixtures") return []
    return statSync(path).isDirectory() ? walk(path) : /\.(ts|mts|mjs|js)$/.test(entry) ? [path] : []
  })

const importsOf = (file: string): ReadonlyArray<string> =>
  ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles.map((f) => f.fileName)

/** The npm package a bare specifier names: `@scope/name` or `name`. */
const packageOf = (specifier: string): string => {
  const parts = specifier.split("/")
  return specifier.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!
}

const isBuiltin = (specifier: string) =>
  specifier.startsWith("node:") || builtinModules.includes(specifier.split("/")[0]!)

/** The package directory a path lies in (`packages/<name>/…`), if any. */
const packageDirOf = (path: string): string | undefined => {
  const rel = relative(packagesDir, path)
  return rel.startsWith("..") ? undefined : rel.split(sep)[0]
}

/** Whether a path lies in a package's `src/internal/` or `dist/internal/`. */
const internalOf = (path: string): string | undefined => {
  const pkg = packageDirOf(path)
  if (pkg === undefined) return undefined
  const rest = relative(join(packagesDir, pkg), path).split(sep)
  return (rest[0] === "src" || rest[0] === "dist") && rest[1] === "internal" ? pkg : undefined
}

const sourcesOf = (pkg: string) => walk(join(packagesDir, pkg, "src"))

/** Every file that may import a package: sources, package tests, cross-package tests, bench, scripts. */
const everyFile = (): Array<string> => [
  ...packages.flatMap((pkg) => [...walk(join(packagesDir, pkg, "src")), ...walk(join(packagesDir, pkg, "test"))]),
  ...walk(join(root, "test")),
  ...walk(join(root, "bench")),
  ...walk(join(root, "scripts"))
]

describe("architecture", () => {
  it("the packages are those of the picture", () => {
    expect(packages.toSorted()).toEqual(Object.keys(allowed).toSorted())
  })

  it("a package's sources import only the @toolgate packages the picture allows, and declare them", () => {
    const broken: Array<string> = []
    for (const pkg of packages) {
      const declared = Object.keys(manifest(pkg).dependencies ?? {})
      for (const file of sourcesOf(pkg)) {
        for (const specifier of importsOf(file)) {
          if (!specifier.startsWith("@toolgate/")) continue
          const target = packageOf(specifier).slice("@toolgate/".length)
          if (target === pkg) broken.push(`${relative(root, file)} imports its own package as ${specifier}`)
          else if (!(allowed[pkg] ?? []).includes(target)) {
            broken.push(`${relative(root, file)} imports ${specifier}: ${pkg} may not depend on ${target}`)
          } else if (!declared.includes(`@toolgate/${target}`)) {
            broken.push(`${relative(root, file)} imports ${specifier}, which ${pkg}/package.json does not declare`)
          }
        }
      }
    }
    expect(broken).toEqual([])
  })

  it("nothing imports another package's internal/", () => {
    const broken: Array<string> = []
    for (const file of everyFile()) {
      const own = packageDirOf(file)
      for (const specifier of importsOf(file)) {
        if (specifier.startsWith("@toolgate/") && /^@toolgate\/[^/]+\/(.*\/)?internal(\/|$)/.test(specifier)) {
          broken.push(`${relative(root, file)} imports ${specifier}`)
        } else if (specifier.startsWith(".")) {
          const target = internalOf(resolve(dirname(file), specifier))
          if (target !== undefined && target !== own) broken.push(`${relative(root, file)} imports ${specifier}`)
        }
      }
    }
    expect(broken).toEqual([])
  })

  it("every package's exports close ./internal/*", () => {
    for (const pkg of packages) {
      expect({ pkg, internal: manifest(pkg).exports?.["./internal/*"] }).toEqual({ pkg, internal: null })
    }
  })

  it("relative imports of a package's sources stay inside its src/", () => {
    const broken: Array<string> = []
    for (const pkg of packages) {
      const src = join(packagesDir, pkg, "src")
      for (const file of sourcesOf(pkg)) {
        for (const specifier of importsOf(file)) {
          if (specifier.startsWith(".") && relative(src, resolve(dirname(file), specifier)).startsWith("..")) {
            broken.push(`${relative(root, file)} imports ${specifier}`)
          }
        }
      }
    }
    expect(broken).toEqual([])
  })

  it("core imports nothing but effect and its declared small libraries, and no node: module", () => {
    const declared = Object.keys(manifest("core").dependencies ?? {})
    const broken: Array<string> = []
    for (const file of sourcesOf("core")) {
      for (const specifier of importsOf(file)) {
        if (specifier.startsWith(".")) continue
        if (isBuiltin(specifier) || !declared.includes(packageOf(specifier))) {
          broken.push(`${relative(root, file)} imports ${specifier}`)
        }
      }
    }
    expect(broken).toEqual([])
  })

  it("every bare import of a package's sources is declared, and every declared dependency is imported", () => {
    const broken: Array<string> = []
    for (const pkg of packages) {
      const declared = Object.keys(manifest(pkg).dependencies ?? {})
      const used = new Set<string>()
      for (const file of sourcesOf(pkg)) {
        for (const specifier of importsOf(file)) {
          if (specifier.startsWith(".") || isBuiltin(specifier)) continue
          const name = packageOf(specifier)
          used.add(name)
          if (!declared.includes(name)) broken.push(`${relative(root, file)} imports ${name}, undeclared`)
        }
      }
      for (const name of declared) {
        if (!used.has(name)) broken.push(`${pkg}/package.json declares ${name}, which no source imports`)
      }
    }
    expect(broken).toEqual([])
  })

  it("no production package holds test support (a src/testing/ folder)", () => {
    const held = packages.filter((pkg) =>
      !mayUseTesting.has(pkg) && existsSync(join(packagesDir, pkg, "src", "testing"))
    )
    expect(held).toEqual([])
  })

  it("@toolgate/testing is imported only by demo, tests and bench", () => {
    const broken: Array<string> = []
    for (const pkg of packages) {
      if (mayUseTesting.has(pkg)) continue
      for (const file of sourcesOf(pkg)) {
        for (const specifier of importsOf(file)) {
          const testing = specifier.startsWith("@toolgate/testing") ||
            (specifier.startsWith(".") && packageDirOf(resolve(dirname(file), specifier)) === "testing")
          if (testing) broken.push(`${relative(root, file)} imports ${specifier}`)
        }
      }
    }
    expect(broken).toEqual([])
  })

  it("each package's @toolgate dependencies and project references match the picture", () => {
    for (const pkg of packages) {
      const deps = Object.keys(manifest(pkg).dependencies ?? {})
        .filter((d) => d.startsWith("@toolgate/"))
        .map((d) => d.slice("@toolgate/".length))
      const tsconfig = JSON.parse(readFileSync(join(packagesDir, pkg, "tsconfig.json"), "utf8")) as {
        readonly references?: ReadonlyArray<{ readonly path: string }>
      }
      const references = (tsconfig.references ?? []).map((r) => r.path.replace(/^\.\.\//, ""))
      expect({ pkg, deps: deps.filter((d) => !(allowed[pkg] ?? []).includes(d)) }).toEqual({ pkg, deps: [] })
      expect({ pkg, references: references.toSorted() }).toEqual({ pkg, references: deps.toSorted() })
    }
  })
})
