/**
 * What a stream costs after another contender's: on one generated input, every ordered pair of
 * contenders (the floor, toolgate and the input's SDKs) runs as "the first, then the second", and
 * the second's time is kept (`timeOne`: wall ms, its result checked), `INTERLEAVE_PAIRS` times
 * (default 200) after 40 untimed streams of each. Prints the median of each "B after A"; then, for
 * each other contender, toolgate's 1st to 4th stream in a row after one stream of it; then each step
 * of the gap ladder (`bench/gap.ts`) and toolgate right after one stream of the input's first SDK
 * and right after a stream of its own. The stream table of `npm run bench` rotates the contenders
 * stream by stream, so its medians mix these; the gap ladder runs only the floor and toolgate's
 * steps.
 *
 *   npx tsc -b bench && npx node --expose-gc bench/dist/interleave.js [provider] [size]
 *
 * Defaults: `anthropic small`.
 */
import { contenders } from "./contenders.js"
import { ladder } from "./gap.js"
import { generate, type Provider, type Size } from "./generator.js"
import { median, timeOne } from "./measure.js"

const [provider = "anthropic", size = "small"] = process.argv.slice(2)
const input = generate(provider as Provider, size as Size)
const group = contenders.filter((c) => c.providers.includes(input.provider) && c.name !== "Stream pipeline")
const pairs = Number(process.env.INTERLEAVE_PAIRS ?? 200)

for (const contender of group) {
  for (let i = 0; i < 40; i++) await timeOne(contender, input)
}
const times = new Map<string, Array<number>>()
/** Times one stream of `contender` and keeps its wall ms under `key`. */
const record = async (key: string, contender: (typeof group)[number]) => {
  const ms = (await timeOne(contender, input)).ms
  const list = times.get(key)
  if (list === undefined) times.set(key, [ms])
  else list.push(ms)
}
for (let r = 0; r < pairs; r++) {
  for (const first of group) {
    for (const second of group) {
      await timeOne(first, input)
      await record(`${second.name} after ${first.name}`, second)
    }
  }
}
const toolgate = group.find((c) => c.name === "toolgate")!
const others = group.filter((c) => c !== toolgate)
for (let r = 0; r < pairs; r++) {
  for (const other of others) {
    await timeOne(other, input)
    for (let k = 1; k <= 4; k++) await record(`toolgate #${k} in a row after ${other.name}`, toolgate)
  }
}
const sdk = others.find((c) => c.name !== "floor")!
const steps = ladder.map((step) => step.contender).filter((c) => c.name !== "Stream pipeline")
for (const step of steps) {
  for (let i = 0; i < 40; i++) await timeOne(step, input)
}
for (let r = 0; r < pairs; r++) {
  for (const step of steps) {
    for (const before of [sdk, step]) {
      await timeOne(before, input)
      await record(`${step.name} right after ${before === sdk ? sdk.name : "itself"}`, step)
    }
  }
}
process.stdout.write(`${provider}/${size}, median ms of ${pairs} streams each\n`)
for (const [key, list] of times) process.stdout.write(`${key.padEnd(56)} ${median(list).toFixed(3)}\n`)
