/**
 * A test `EventReader` that emits one text event per read that decodes to any text (the read's
 * bytes as UTF-8, split characters joined across reads), and never fails.
 */
import type { EventReader, StreamEvent } from "@toolgate/core"

export const textReader = (): EventReader.EventReader<Uint8Array, never> => {
  const decoder = new TextDecoder()
  let pending: Array<StreamEvent.StreamEvent> | undefined
  return {
    read: (chunks) => {
      for (const chunk of chunks) {
        const text = decoder.decode(chunk, { stream: true })
        if (text.length > 0) (pending ??= []).push({ text })
      }
      return undefined
    },
    end: () => undefined,
    take: () => {
      const out = pending
      pending = undefined
      return out
    }
  }
}
