import { Context, Effect, Layer, Result } from "effect";
import { IdempotencyStore } from "./IdempotencyStore.js";
import * as ClaimLoop from "./internal/executor/claimLoop.js";
import { configure } from "./internal/executor/config.js";
export { 
/**
 * A handler failure after which the outcome is unknown (see `ToolHandler.Ambiguous`).
 *
 * @since 0.1.0
 * @category errors
 */
Ambiguous, 
/**
 * A handler failure known not to have applied (see `ToolHandler.NotApplied`).
 *
 * @since 0.1.0
 * @category errors
 */
NotApplied } from "./ToolHandler.js";
/**
 * The tool executor service.
 *
 * @since 0.1.0
 * @category services
 */
export class ToolExecutor extends Context.Service()("@toolgate/runtime/ToolExecutor") {
}
/**
 * Builds an executor for a toolkit's handlers over the `IdempotencyStore` in context. The
 * handlers' own services are captured here and provided to every run. Fails with
 * `InvalidExecutorOptions` when an option or a handler's override breaks its rule (see
 * {@link Options}) or a tool of the toolkit has no handler.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (toolkit, handlers, options = {}) => Effect.gen(function* () {
    const configured = configure(toolkit, handlers, options);
    if (Result.isFailure(configured))
        return yield* configured.failure;
    const store = yield* IdempotencyStore;
    const services = yield* Effect.context();
    const loop = ClaimLoop.make({
        store,
        config: configured.success,
        services: services.mapUnsafe.size > 0 ? services : undefined
    });
    return ToolExecutor.of({
        execute: loop.execute,
        executeAll: loop.executeAll
    });
});
/**
 * The {@link ToolExecutor} layer of a toolkit's handlers (see {@link make}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (toolkit, handlers, options) => Layer.effect(ToolExecutor, make(toolkit, handlers, options));
/**
 * Executes one validated call through the {@link ToolExecutor} in context; the result is typed
 * by the call's tool. See the module docs for the flow and the errors.
 *
 * @since 0.1.0
 * @category execution
 */
export const execute = (call, options) => ToolExecutor.use((executor) => executor.execute(call, options));
/**
 * Executes the validated calls of one turn through the {@link ToolExecutor} in context, with
 * bounded concurrency; one `Result` per call, in call order. The calls that start at once are
 * claimed in one store operation (see {@link Service}).
 *
 * @since 0.1.0
 * @category execution
 */
export const executeAll = (calls, options) => ToolExecutor.use((executor) => executor.executeAll(calls, options));
//# sourceMappingURL=ToolExecutor.js.map