/**
 * What a stream costs after another contender's: on one generated input, every ordered pair of
 * contenders (the floor, toolgate and the input's SDKs) runs as "the first, then the second", and
 * the second's time is kept (`timeOne`: wall ms, its result checked), `INTERLEAVE_PAIRS` times
 * (default 200) after 40 untimed streams of each. Prints the median of each "B after A"; then, for
 * each other contender, toolgate's 1st to 4th stream in a row after one stream of it; then each step
 * of the gap ladder (`bench/gap.ts`) and toolgate right after one stream of the input's first SDK
 * and right after a stream of its own; then the floor, the ladder's step "+ decoder + assembler, no
 * Effect" and toolgate right after a walk over 6 MiB of a `Uint8Array` (one write per 64-byte line:
 * no allocation, no collection, only the CPU's caches emptied of what the stream uses) and right
 * after themselves; then that ladder step run inside `Effect.runPromise(Effect.callback(...))`
 * (what the Effect runtime's entry and one resume add) right after the SDK and right after itself.
 * The stream table of `npm run bench` rotates the contenders stream by stream, so every floor and
 * toolgate stream in it runs with an SDK stream since its previous one; the gap ladder runs only
 * the floor and toolgate's steps.
 *
 *   npx tsc -b bench && npx node --expose-gc bench/dist/interleave.js [provider] [size]
 *
 * Defaults: `anthropic small`.
 */
import { Effect } from "effect"
import { type Contender, contenders } from "./contenders.js"
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
const walked = new Uint8Array(6 << 20)
/** Writes one byte per 64-byte line of 6 MiB: the caches lose what the next stream uses; the heap is untouched. */
const walk = () => {
  for (let i = 0; i < walked.length; i += 64) walked[i] = (walked[i]! + 1) & 255
}
const hand = steps.find((c) => c.name === "+ decoder + assembler, no Effect")!
const inEffect: Contender = {
  name: "+ decoder + assembler inside Effect.runPromise(Effect.callback)",
  providers: hand.providers,
  run: (body, p) =>
    Effect.runPromise(
      Effect.callback<Awaited<ReturnType<Contender["run"]>>, unknown>((resume) => {
        hand.run(body, p).then((result) => resume(Effect.succeed(result)), (error) => resume(Effect.fail(error)))
      })
    )
}
for (let i = 0; i < 40; i++) await timeOne(inEffect, input)
for (let r = 0; r < pairs; r++) {
  for (const contender of [group[0]!, hand, toolgate]) {
    walk()
    await record(`${contender.name} right after a 6 MiB walk`, contender)
    await timeOne(contender, input)
    await record(`${contender.name} right after itself (walk section)`, contender)
  }
  for (const contender of [hand, inEffect]) {
    await timeOne(sdk, input)
    await record(`${contender.name} right after ${sdk.name} (Effect section)`, contender)
    await timeOne(contender, input)
    await record(`${contender.name} right after itself (Effect section)`, contender)
  }
}
process.stdout.write(`${provider}/${size}, median ms of ${pairs} streams each\n`)
for (const [key, list] of times) process.stdout.write(`${key.padEnd(84)} ${median(list).toFixed(3)}\n`)
