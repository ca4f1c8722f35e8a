/**
 * Where toolgate's time over the floor goes: a ladder of contenders that add toolgate's layers to
 * the floor one at a time, all checked against the ground truth like the real contenders.
 *
 * 1. `floor`: the floor proper.
 * 2. `+ effect Sse framing`: the floor's logic, but the `data:` payloads come from effect's
 *    `Sse.makeParser` instead of an `indexOf` line split. The difference is the framing.
 * 3. `+ decoder + assembler, no Effect`: what `Decoder.decodeSse` does per read (one streaming
 *    `TextDecoder`, `Sse.makeParser`, the provider decoder's `onEvent`), with each event pushed into
 *    `Assembler.make()` and the verdict from `end()`, driven by a plain `async` loop. The difference
 *    to step 2 is toolgate's per-event checks, its `StreamEvent` objects and the assembler.
 * 4. `toolgate`: the real thing, as users call it. The difference to step 3 is Effect's `Stream`
 *    plumbing (pull loop, channel, fiber, scope).
 *
 * Step 3 mirrors `Decoder.decodeSse` by hand; if that function changes its framing, change step 3.
 */
import { Anthropic, OpenAiChat } from "@toolgate/adapters"
import { Assembler } from "@toolgate/core"
import { Sse } from "effect/encoding"
import { type Contender, floor, floorRun, fromTurn, toolgate } from "./contenders.js"

const handDriven: Contender["run"] = async (body, provider) => {
  const decoder = provider === "openai-chat" ? OpenAiChat.decoder() : Anthropic.decoder()
  const machine = Assembler.make()
  const text = new TextDecoder("utf-8")
  const reader = body.getReader()
  const parser = Sse.makeParser((event) => {
    if (event._tag !== "Event") return
    const decoded = decoder.onEvent(event)
    if (decoded !== undefined) machine.push(decoded)
  }, { maxEventSize: 16 * 1024 * 1024 })
  for (;;) {
    const { done, value } = await reader.read()
    parser.feed(done ? text.decode() : text.decode(value, { stream: true }))
    if (done) break
  }
  const verdict = machine.end()
  if (verdict._tag === "Failure") throw verdict.failure
  return fromTurn(verdict.success)
}

/** The ladder, bottom to top. */
export const ladder: ReadonlyArray<Contender> = [
  floor,
  { name: "+ effect Sse framing", providers: floor.providers, run: floorRun("effect-sse") },
  { name: "+ decoder + assembler, no Effect", providers: floor.providers, run: handDriven },
  toolgate
]
