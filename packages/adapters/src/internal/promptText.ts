/**
 * What the request encoders read from an effect/ai `Prompt` message today: its text. A system
 * message is its text; a user or assistant message is the text of its text parts, in order (an
 * assistant's reasoning parts are left out: neither format takes earlier reasoning back in this
 * form). Any other part (a file, an assistant's tool call, a tool result, an approval) and every
 * tool message is an `UnsupportedRequest` naming the message and the part.
 *
 * @internal
 */
import { ModelStreamError } from "@toolgate/core"
import { Result } from "effect"
import type { Prompt } from "effect/ai"

/** The texts of one message, or why the encoder cannot carry it. */
export const textsOf = (
  provider: string,
  message: Prompt.Message,
  position: number
): Result.Result<ReadonlyArray<string>, ModelStreamError.UnsupportedRequest> => {
  const unsupported = (what: string) =>
    Result.fail(
      new ModelStreamError.UnsupportedRequest({ provider, reason: `message ${position} (${message.role}): ${what}` })
    )
  switch (message.role) {
    case "system":
      return Result.succeed([message.content])
    case "tool":
      return unsupported("a tool message (tool results are not encoded yet)")
    case "user":
    case "assistant": {
      const texts: Array<string> = []
      for (const part of message.content) {
        if (part.type === "text") texts.push(part.text)
        else if (part.type !== "reasoning") return unsupported(`a ${part.type} part`)
      }
      return Result.succeed(texts)
    }
  }
}
