/**
 * Where toolgate's time over the floor goes: a ladder of contenders that add toolgate's layers to
 * the floor one at a time, all checked against the ground truth like the real contenders. Each
 * step names the step it adds to (`base`).
 *
 * 1. `floor`: the floor proper.
 * 2. `+ effect Sse framing` (on `floor`): the floor's logic, but the `data:` payloads come from
 *    effect's `Sse.makeParser` instead of an `indexOf` line split. The framing toolgate used before
 *    `eventsource-parser`, kept as the comparison that chose it.
 * 3. `+ eventsource-parser framing` (on `floor`): the same with `eventsource-parser`'s
 *    `createParser`, the framing `Decoder.decodeSse` uses.
 * 4. `+ decoder + assembler, no Effect` (on 3): the provider decoder's `onEvent` on each event of
 *    that parser, each core event pushed into `Assembler.make()` and the verdict from `end()`,
 *    driven by a plain `async` loop over the reads. The difference to step 3 is toolgate's
 *    per-event checks, its `StreamEvent` objects, the assembler and the released turn's classes.
 * 5. `toolgate` (on 4): the real thing, as users call it: the adapter's `decodeReadableStream()`
 *    piped into the assembler, which drives the body's reader itself (one promise per read, Effect
 *    at the boundary of the body). The difference to step 4 is what `decodeSse` does per read on top
 *    of the framing (the event-size guard and the `NotAnEventStream` probe) and Effect's run of one
 *    effect per body.
 * 6. `Stream pipeline` (on 5): toolgate before `decodeReadableStream`: `Stream.fromReadableStream` →
 *    `decode()` → the assembler. The difference to step 5 is Effect's `Stream` plumbing (an
 *    `AbortController` per read, the pull loop, channels, fiber, scope, an async cancel at the end).
 *
 * Step 4 mirrors `Decoder.decodeSse`'s framing by hand; if that changes, change step 4.
 */
import { Anthropic, OpenAiChat } from "@toolgate/adapters"
import { Assembler } from "@toolgate/core"
import { createParser } from "eventsource-parser"
import { type Contender, floor, floorRun, fromTurn, streamPipeline, toolgate } from "./contenders.js"

const handDriven: Contender["run"] = async (body, provider) => {
  const decoder = provider === "openai-chat" ? OpenAiChat.decoder() : Anthropic.decoder()
  const machine = Assembler.make()
  const text = new TextDecoder("utf-8")
  const reader = body.getReader()
  const parser = createParser({
    onEvent: (message) => {
      const decoded = decoder.onEvent({ event: message.event ?? "message", data: message.data })
      if (decoded !== undefined) machine.push(decoded)
    }
  })
  parser.feed("\n")
  for (;;) {
    const { done, value } = await reader.read()
    parser.feed(done ? text.decode() : text.decode(value, { stream: true }))
    if (done) break
  }
  const verdict = machine.end()
  if (verdict._tag === "Failure") throw verdict.failure
  return fromTurn(verdict.success)
}

/** One step of the ladder and the step it adds to. */
export interface Step {
  readonly contender: Contender
  readonly base?: string | undefined
}

/** The ladder, bottom to top. */
export const ladder: ReadonlyArray<Step> = [
  { contender: floor },
  {
    contender: { name: "+ effect Sse framing", providers: floor.providers, run: floorRun("effect-sse") },
    base: "floor"
  },
  {
    contender: {
      name: "+ eventsource-parser framing",
      providers: floor.providers,
      run: floorRun("eventsource-parser")
    },
    base: "floor"
  },
  {
    contender: { name: "+ decoder + assembler, no Effect", providers: floor.providers, run: handDriven },
    base: "+ eventsource-parser framing"
  },
  { contender: toolgate, base: "+ decoder + assembler, no Effect" },
  { contender: streamPipeline, base: "toolgate" }
]
