/**
 * CPU profile of one contender on one generated input: runs it `count` times (after two untimed
 * runs) under the V8 sampling profiler, writes the `.cpuprofile` (open it in Chrome DevTools or
 * speedscope) and prints where the time went: self time by area and the top functions.
 *
 *   npx tsc -b bench && node --no-turbo-inlining bench/dist/profile.js [provider] [size] [contender] [count]
 *
 * Defaults: `openai-chat large toolgate 15`. The contender may also be a step of the gap ladder
 * (`bench/gap.ts`), e.g. "+ decoder + assembler, no Effect". `--no-turbo-inlining` keeps the self time on the
 * function that spends it (with inlining, a caller absorbs its inlined callees); the timing it
 * prints is then a little slower than the benchmark's.
 */
import { writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { contenders } from "./contenders.js"
import { ladder } from "./gap.js"
import { generate, type Provider, readableStream, type Size } from "./generator.js"
import { median } from "./measure.js"
import { fmt, textTable } from "./report.js"

const [provider = "openai-chat", size = "large", name = "toolgate", count = "15"] = process.argv.slice(2)
const contender = [...contenders, ...ladder.map((step) => step.contender)].find((c) => c.name === name)
if (contender === undefined) throw new Error(`no contender ${name}`)
const input = generate(provider as Provider, size as Size)

for (let i = 0; i < 2; i++) await contender.run(readableStream(input.reads), input.provider)

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
}

const session = new Session()
session.connect()
await session.post("Profiler.setSamplingInterval", { interval: 200 })
await session.post("Profiler.enable")
await session.post("Profiler.start")
const times: Array<number> = []
for (let i = 0; i < Number(count); i++) {
  const start = performance.now()
  await contender.run(readableStream(input.reads), input.provider)
  times.push(performance.now() - start)
}
const { profile } = (await session.post("Profiler.stop")) as unknown as { profile: Profile }
session.disconnect()

const file = `${name}-${provider}-${size}.cpuprofile`
writeFileSync(file, JSON.stringify(profile))

/** Which part of the pipeline a function belongs to, from its script. */
const area = (frame: ProfileNode["callFrame"]): string => {
  const { functionName, url } = frame
  if (functionName === "(garbage collector)") return "GC"
  if (functionName === "(program)" || functionName === "(idle)" || functionName === "(root)") return "(program)"
  if (/eventsource-parser\//.test(url)) return "eventsource-parser"
  if (/effect\/dist\/(Schema|SchemaAST|SchemaParser)\.js/.test(url)) return "effect Schema (the result's classes)"
  if (/effect\/dist\//.test(url)) return "effect runtime and Stream"
  if (/adapters\/dist\/(Decoder|internal\/sseReader|internal\/eventStreamProbe)|core\/dist\/EventReader/.test(url)) {
    return "Decoder.decodeSse (reads, size guard, probe)"
  }
  if (/adapters\/dist\//.test(url)) return "provider decoder (with JSON.parse)"
  if (/core\/dist\//.test(url)) return "Assembler"
  if (/webstreams/.test(url)) return "web streams"
  if (functionName === "decode" && (url === "" || /encoding/.test(url))) return "TextDecoder"
  if (/bench\/dist\//.test(url)) return "bench code (the floor's loop)"
  if (/node_modules\//.test(url)) return url.replace(/.*node_modules\/((@[^/]+\/)?[^/]+).*/, "$1")
  return "other"
}
const where = (frame: ProfileNode["callFrame"]) =>
  `${frame.functionName || "(anonymous)"} ${
    frame.url.replace(/.*node_modules\//, "").replace(/.*\/(packages|bench)\//, "$1/")
  }:${frame.lineNumber + 1}`

const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const byArea = new Map<string, number>()
const byFunction = new Map<string, number>()
for (const id of profile.samples) {
  const frame = byId.get(id)!.callFrame
  byArea.set(area(frame), (byArea.get(area(frame)) ?? 0) + 1)
  byFunction.set(where(frame), (byFunction.get(where(frame)) ?? 0) + 1)
}
const top = (counts: Map<string, number>, n: number) =>
  [...counts].toSorted((a, b) => b[1] - a[1]).slice(0, n).map(([key, c]) => [
    fmt((100 * c) / profile.samples.length, 1),
    key
  ])

process.stdout.write(
  `${name} on ${provider}/${size}: median ${fmt(median(times), 1)} ms over ${count} streams; profile in ${file}\n\n` +
    `${textTable(["% self", "area"], top(byArea, 12))}\n\n${textTable(["% self", "function"], top(byFunction, 20))}\n`
)
