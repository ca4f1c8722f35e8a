/**
 * @toolgate/demo: the fault-injection demo (`toolgate demo`, `npm start`): inbound leads through
 * toolgate and through a naive pipeline, against a fake provider and a fake CRM; with `--workers N`, on a lead cluster of N worker processes
 * (`@toolgate/demo/ClusterDemo`, imported on its own so the other commands do not load `effect/cluster`).
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Demo from "./Demo.js"

/** @since 0.1.0 */
export * as DemoScenario from "./DemoScenario.js"

/** @since 0.1.0 */
export * as NaivePipeline from "./NaivePipeline.js"
