/**
 * The provider wire formats toolgate reads, by name, each with its decoder.
 *
 * @since 0.1.0
 */
import type { StreamEvent } from "@toolgate/core"
import type { Stream } from "effect"
import type * as Decoder from "./Decoder.js"
import * as OpenAiChat from "./OpenAiChat.js"

/**
 * A provider wire format.
 *
 * @since 0.1.0
 * @category models
 */
export type Name = "openai-chat"

/**
 * Every supported format, in the order `toolgate inspect --help` lists them.
 *
 * @since 0.1.0
 * @category constants
 */
export const names: ReadonlyArray<Name> = ["openai-chat"]

/**
 * Options shared by every provider decoder.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends Decoder.DecodeOptions {
  /** OpenAI Chat only: the choice to read when `n > 1`. Default 0. */
  readonly choice?: number | undefined
  /** `auto` only: called once with the format recognised from the first events. */
  readonly onDetected?: ((name: Name) => void) | undefined
}

/**
 * Decodes a response body of the named format into core events.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (name: Name | "auto", options?: Options) =>
<E, R>(bytes: Stream.Stream<Uint8Array, E, R>): Stream.Stream<StreamEvent.StreamEvent, E, R> => {
  switch (name) {
    case "auto":
    case "openai-chat":
      return OpenAiChat.decode(options)(bytes)
  }
}
