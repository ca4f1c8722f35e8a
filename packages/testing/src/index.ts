/**
 * @toolgate/testing: the fakes, the seeded random source, the SSE script generator and the
 * fixture loader that toolgate's tests, demo and benchmarks share.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as FakeCrm from "./FakeCrm.js"

/** @since 0.1.0 */
export * as FakeReceiver from "./FakeReceiver.js"

/** @since 0.1.0 */
export * as FakeProvider from "./FakeProvider.js"

/** @since 0.1.0 */
export * as Fixture from "./Fixture.js"

/** @since 0.1.0 */
export * as LoopbackServer from "./LoopbackServer.js"

/** @since 0.1.0 */
export * as Random from "./Random.js"

/** @since 0.1.0 */
export * as SseScript from "./SseScript.js"

/** @since 0.1.0 */
export * as NonStreaming from "./NonStreaming.js"

/** @since 0.1.0 */
export * as ValidatedCall from "./ValidatedCall.js"
