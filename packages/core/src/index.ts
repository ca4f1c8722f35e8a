/**
 * @toolgate/core: the provider-independent heart of toolgate. Pure: no I/O.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as AssemblyError from "./AssemblyError.js"

/** @since 0.1.0 */
export * as Assembler from "./Assembler.js"

/** @since 0.1.0 */
export * as EventReader from "./EventReader.js"

/** @since 0.1.0 */
export * as FinishReason from "./FinishReason.js"

/** @since 0.1.0 */
export * as IdempotencyKey from "./IdempotencyKey.js"

/** @since 0.1.0 */
export * as KeyPolicy from "./KeyPolicy.js"

/** @since 0.1.0 */
export * as ModelStream from "./ModelStream.js"

/** @since 0.1.0 */
export * as ModelStreamError from "./ModelStreamError.js"

/** @since 0.1.0 */
export * as StreamEvent from "./StreamEvent.js"

/** @since 0.1.0 */
export * as ToolCall from "./ToolCall.js"
