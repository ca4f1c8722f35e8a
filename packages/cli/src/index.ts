/**
 * @toolgate/cli: the `toolgate` command (demo, run, inspect, corpus, records, resolve, purge) and its
 * building blocks.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Capture from "./Capture.js"

/** @since 0.1.0 */
export * as Cli from "./Cli.js"

/** @since 0.1.0 */
export * as Corpus from "./Corpus.js"

/** @since 0.1.0 */
export * as Help from "./Help.js"

/** @since 0.1.0 */
export * as Inspect from "./Inspect.js"

/** @since 0.1.0 */
export * as Operator from "./Operator.js"

/** @since 0.1.0 */
export * as Run from "./Run.js"
