/**
 * The agent loop, step by step. A step is acquired from the journal (a won claim: ask the model;
 * a recorded step: replay it; a lease elsewhere: wait and claim again), then decided (its calls
 * validated — and, for a step asked now, its output recorded under the lease) and executed; the
 * next step's prompt is the transcript so far. The outputs are one pull-based stream: nothing of
 * step n + 1 happens before the consumer pulls past step n's `StepCompleted`, so a consumer that
 * stops there (a worker shutting down) leaves no step claimed.
 *
 * (Why one long module: acquiring, deciding and executing a step share the turn's state, the
 * transcript, the occurrences and the cost, and read in the order a step runs.)
 *
 * @internal
 */
import { Assembler, IdempotencyKey, ModelStream, ModelStreamError, ToolCall } from "@toolgate/core";
import { Clock, Data, Duration, Effect, Metric, Result, Schedule, Stream } from "effect";
import { randomUUID } from "node:crypto";
import * as Agent from "../../Agent.js";
import * as StepJournal from "../../StepJournal.js";
import * as ToolCallPipeline from "../../ToolCallPipeline.js";
import * as ToolExecutor from "../../ToolExecutor.js";
import * as MetricSeries from "../metricSeries.js";
import * as StepStream from "../stepStream.js";
import { configure } from "./config.js";
import * as Transcript from "./transcript.js";
/** A live lease elsewhere, or a step to claim again (an internal signal for the wait schedule). */
class Busy extends Data.TaggedError("Busy") {
}
const noFailures = { attempts: 0, inputTokens: 0, outputTokens: 0 };
/** Fails with `StreamAborted` when the caller's signal fires (at once when it has): a wait ends there. */
const aborted = (signal) => Effect.callback((resume) => {
    if (signal.aborted) {
        resume(Effect.void);
        return;
    }
    const onAbort = () => resume(Effect.void);
    signal.addEventListener("abort", onAbort, { once: true });
    return Effect.sync(() => signal.removeEventListener("abort", onAbort));
}).pipe(Effect.andThen(Effect.fail(new ModelStreamError.StreamAborted({
    finishReason: null,
    reason: "the caller's signal fired while another worker held the step"
}))));
/** A step whose lease is lost more often than this fails with `StepLeaseLost`. */
const maxLeaseLosses = 3;
const storeRetry = Schedule.exponential(Duration.millis(50), 2).pipe(Schedule.upTo({ times: 3 }));
/** A journal operation, retried while the store is unavailable for a retryable reason (each is safe to repeat). */
const retryStore = (effect) => Effect.retry(effect, {
    schedule: storeRetry,
    while: (e) => e._tag === "StoreUnavailable" && e.retryable
});
/** The assembled turn of a recorded output, so its calls are validated as a live turn's are. */
const assembledOf = (output) => {
    const toolCalls = [];
    for (const call of output.calls) {
        let parsed;
        try {
            parsed = call.argumentsText === "" ? {} : JSON.parse(call.argumentsText);
        }
        catch {
            parsed = undefined;
        }
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
            return ToolCall.argumentsInvalid(call, [{ path: [], message: "the journaled arguments are not a JSON object" }]);
        }
        toolCalls.push(new Assembler.AssembledToolCall({ ...call, arguments: parsed }));
    }
    return new Assembler.AssembledTurn({
        text: output.text,
        toolCalls,
        finishReason: output.finishReason,
        ...(output.usage === null ? {} : { usage: output.usage })
    }, { disableChecks: true });
};
const sum = (values) => values.some((v) => v !== undefined) ? values.reduce((n, v) => n + (v ?? 0), 0) : undefined;
/** The turn's usage: each field summed over the steps that reported it. */
const usageOf = (steps) => {
    const out = {};
    for (const field of ["inputTokens", "outputTokens", "totalTokens", "cachedInputTokens"]) {
        const total = sum(steps.map((s) => s.usage?.[field]));
        if (total !== undefined)
            out[field] = total;
    }
    return out;
};
/** The agent's `run`, over the services in context. @internal */
export const make = Effect.gen(function* () {
    const model = yield* ModelStream.ModelStream;
    const executor = yield* ToolExecutor.ToolExecutor;
    const journal = yield* StepJournal.StepJournal;
    const provider = { provider: model.provider };
    const instance = randomUUID().slice(0, 8);
    let runs = 0;
    const count = (metric, by, attributes) => MetricSeries.count(metric, by, { ...provider, ...attributes });
    const turnOf = (request, options, config) => Stream.unwrap(Effect.gen(function* () {
        const deadline = (yield* Clock.currentTimeMillis) + config.deadlineMs;
        const owner = `${instance}:${++runs}`;
        const ref = { tenant: options.scope.tenant, turn: options.scope.turn };
        const fingerprint = Transcript.fingerprint(request.prompt);
        const tools = request.tools ?? ModelStream.toolsOf(options.toolkit);
        const occurrences = new IdempotencyKey.Occurrences();
        const steps = [];
        let prompt = request.prompt;
        let requests = 0;
        let requestsSaved = 0;
        // this run's requests, counted where they are made
        const respond = StepStream.make({
            provider: model.provider,
            stream: (req, attempt) => Stream.suspend(() => {
                requests++;
                return model.stream(req, attempt);
            })
        });
        const budget = {
            deadline,
            deadlineMs: config.deadlineMs,
            signal: options.signal,
            retry: options.retry,
            assembly: options.assembly,
            isRetryable: options.retry?.isRetryable ?? ToolCallPipeline.isRetryable
        };
        const failStep = (step) => (error) => new Agent.StepFailed({ step, error });
        /** One claim round: the lease, the recorded output, or `Busy`. */
        const round = (step) => retryStore(journal.claim({
            ...ref,
            step,
            fingerprint,
            owner,
            leaseMs: config.leaseMs,
            retentionMs: config.retentionMs
        })).pipe(Effect.flatMap((claim) => {
            if (claim._tag === "Claimed")
                return Effect.succeed({ _tag: "Live", lease: claim.lease });
            const found = claim.step;
            if (found.fingerprint !== fingerprint) {
                return Effect.fail(new StepJournal.JournalMismatch({
                    turn: ref.turn,
                    step,
                    storedFingerprint: found.fingerprint,
                    fingerprint
                }));
            }
            if (found.status === "recorded" && found.output !== null) {
                return Effect.succeed({ _tag: "Replay", output: found.output });
            }
            // a live lease elsewhere: wait; a step released or expired meanwhile: claim again
            return Effect.fail(new Busy({ retryAfterMs: found.status === "in_progress" && !found.leaseExpired ? found.retryAfterMs : 0 }));
        }));
        /** Claims the step, waiting (bounded by `waitMs` and the deadline) while another worker holds it. */
        const acquire = (step) => Effect.gen(function* () {
            const started = yield* Clock.currentTimeMillis;
            return yield* round(step).pipe(Effect.catchTag("Busy", (first) => {
                let pending = first;
                const again = Effect.suspend(() => {
                    if (pending === undefined)
                        return round(step);
                    const busy = pending;
                    pending = undefined;
                    return Effect.fail(busy);
                });
                const waitMs = Math.max(0, Math.min(config.waitMs, deadline - started));
                const waited = Effect.retry(again, {
                    schedule: config.wait.pipe(Schedule.upTo({ duration: Duration.millis(waitMs) })),
                    while: (e) => e._tag === "Busy"
                });
                const signal = options.signal;
                return (signal === undefined ? waited : Effect.raceFirst(waited, aborted(signal))).pipe(Effect.catchTag("Busy", (busy) => Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(new StepJournal.StepInProgress({
                    turn: ref.turn,
                    step,
                    retryAfterMs: busy.retryAfterMs,
                    waitedMs: now - started
                })))));
            }));
        });
        /** Extends the lease while the model streams; fails with `StepLeaseLost` once it is taken over. */
        const heartbeat = (lease) => Effect.gen(function* () {
            for (;;) {
                yield* Effect.sleep(Duration.millis(config.heartbeatMs));
                yield* journal.heartbeat(lease, { leaseMs: config.leaseMs }).pipe(
                // an unreachable store is tried again at the next beat (the lease may lapse meanwhile)
                Effect.catchTag("StoreUnavailable", () => Effect.void), 
                // the lease was checked with the options; the journal cannot refuse it
                Effect.catchTag("InvalidStepRequest", Effect.die));
            }
        });
        const stepAt = (step, leaseLosses = 0) => Stream.unwrap(acquire(step).pipe(Effect.mapError(failStep(step)), Effect.map((acquired) => acquired._tag === "Replay" ? replayed(step, acquired.output) : live(step, acquired.lease, leaseLosses))));
        /** A journaled step: its text, then its calls as recorded, validated again. */
        const replayed = (step, output) => {
            const started = [{ _tag: "StepStarted", step, replayed: true }];
            if (output.text !== "")
                started.push({ _tag: "TextDelta", step, text: output.text, attempt: output.attempts });
            const decide = Effect.gen(function* () {
                const turn = assembledOf(output);
                if (turn instanceof ToolCall.ToolArgumentsInvalid)
                    return yield* turn;
                const calls = yield* ToolCall.validate(options.toolkit)(turn);
                return {
                    output,
                    calls: calls,
                    replayed: true,
                    attempts: output.attempts,
                    failed: noFailures
                };
            }).pipe(Effect.mapError(failStep(step)));
            return Stream.fromIterable(started).pipe(Stream.concat(Stream.unwrap(Effect.map(decide, (decision) => execute(step, decision)))));
        };
        /**
         * A step asked of the model under its lease: the stream (with a heartbeat beside it), then
         * validation and the fenced record. Until it is recorded, any exit releases the lease; a lease
         * lost on the way claims the step again.
         */
        const live = (step, lease, leaseLosses) => {
            const stepRequest = { ...request, prompt, tools };
            let assembled;
            let decision;
            let lost;
            const record = Effect.gen(function* () {
                const { attempts, failed, turn } = assembled;
                const calls = yield* ToolCall.validate(options.toolkit)(turn);
                const output = {
                    text: turn.text,
                    calls: turn.toolCalls.map((c) => ({
                        index: c.index,
                        id: c.id,
                        name: c.name,
                        argumentsText: c.argumentsText
                    })),
                    finishReason: turn.finishReason,
                    usage: turn.usage ?? null,
                    attempts
                };
                yield* retryStore(journal.record(lease, { output, retentionMs: config.retentionMs }));
                decision = {
                    output,
                    calls: calls,
                    replayed: false,
                    attempts,
                    failed
                };
            });
            const phase = Stream.make({ _tag: "StepStarted", step, replayed: false }).pipe(Stream.concat(respond(stepRequest, budget).pipe(Stream.merge(Stream.fromEffectDrain(heartbeat(lease)), { haltStrategy: "left" }), Stream.filterMap((emitted) => {
                switch (emitted._tag) {
                    case "Assembled":
                        assembled = emitted;
                        return Result.failVoid;
                    case "TextDelta":
                        return Result.succeed({ _tag: "TextDelta", step, text: emitted.text, attempt: emitted.attempt });
                    case "AttemptFailed":
                        return Result.succeed({
                            _tag: "AttemptFailed",
                            step,
                            attempt: emitted.attempt,
                            error: emitted.error,
                            retryInMs: emitted.retryInMs
                        });
                }
            }))), Stream.concat(Stream.fromEffectDrain(record)), 
            // nothing was decided: let the next claimant ask (a lost lease changes nothing: ignored)
            Stream.onExit(() => decision === undefined ? Effect.ignore(journal.release(lease)) : Effect.void), Stream.catch((error) => {
                if (error._tag === "StepLeaseLost" && leaseLosses + 1 < maxLeaseLosses) {
                    lost = error;
                    return Stream.make({
                        _tag: "AttemptFailed",
                        step,
                        attempt: assembled?.attempts ?? 0,
                        error,
                        retryInMs: 0
                    });
                }
                return Stream.fail(failStep(step)(error));
            }));
            return phase.pipe(Stream.concat(Stream.unwrap(Effect.sync(() => lost !== undefined ? stepAt(step, leaseLosses + 1) : execute(step, decision)))));
        };
        /** Runs a decided step's calls, appends it to the transcript, and goes on or ends the turn. */
        const execute = (step, decision) => Stream.unwrap(Effect.gen(function* () {
            const { calls, output } = decision;
            const results = calls.length === 0 ? [] : yield* executor.executeAll(calls, {
                scope: options.scope,
                strategy: options.strategy,
                occurrences,
                concurrency: options.concurrency
            });
            const callResults = calls.map((call, i) => ({
                index: call.index,
                id: call.id,
                name: call.name,
                arguments: call.arguments,
                outcome: ToolCallPipeline.toOutcome(results[i])
            }));
            const result = {
                step,
                replayed: decision.replayed,
                text: output.text,
                finishReason: output.finishReason,
                usage: output.usage ?? undefined,
                attempts: decision.attempts,
                failed: decision.failed,
                calls: callResults
            };
            steps.push(result);
            prompt = Transcript.append(prompt, output, callResults);
            yield* count(Agent.metrics.steps, 1, { source: decision.replayed ? "journal" : "model" });
            if (decision.replayed) {
                requestsSaved += output.attempts;
                yield* count(Agent.metrics.requestsSaved, output.attempts, {});
                yield* count(Agent.metrics.tokensSaved, output.usage?.inputTokens ?? 0, { kind: "input" });
                yield* count(Agent.metrics.tokensSaved, output.usage?.outputTokens ?? 0, { kind: "output" });
            }
            else {
                for (const kind of ["input", "output"]) {
                    const tokens = output.usage?.[kind === "input" ? "inputTokens" : "outputTokens"];
                    if (tokens !== undefined) {
                        yield* Metric.update(MetricSeries.withAttributes(Agent.metrics.stepTokens, { ...provider, kind }), tokens);
                    }
                }
            }
            const outputs = callResults.map((call) => ({ _tag: "CallCompleted", step, call }));
            outputs.push({ _tag: "StepCompleted", result });
            const stoppedBy = calls.length === 0
                ? "answer"
                : options.stopWhen?.(result, steps) === true
                    ? "stop_predicate"
                    : step >= config.maxSteps
                        ? "max_steps"
                        : undefined;
            if (stoppedBy === undefined)
                return Stream.fromIterable(outputs).pipe(Stream.concat(stepAt(step + 1)));
            yield* count(Agent.metrics.turns, 1, { outcome: stoppedBy });
            outputs.push({ _tag: "TurnCompleted", result: turnResult(stoppedBy) });
            return Stream.fromIterable(outputs);
        }));
        const turnResult = (stoppedBy) => {
            const last = steps[steps.length - 1];
            const asked = steps.filter((s) => !s.replayed);
            const replays = steps.filter((s) => s.replayed);
            const total = (list, f) => list.reduce((n, s) => n + f(s), 0);
            return {
                text: last.text,
                finishReason: last.finishReason,
                stoppedBy,
                steps,
                transcript: prompt,
                usage: usageOf(steps),
                cost: {
                    modelRequests: requests,
                    inputTokens: total(asked, (s) => s.usage?.inputTokens ?? 0),
                    outputTokens: total(asked, (s) => s.usage?.outputTokens ?? 0),
                    failedAttempts: total(steps, (s) => s.failed.attempts),
                    failedInputTokens: total(steps, (s) => s.failed.inputTokens),
                    failedOutputTokens: total(steps, (s) => s.failed.outputTokens),
                    stepsReplayed: replays.length,
                    requestsSaved,
                    savedInputTokens: total(replays, (s) => s.usage?.inputTokens ?? 0),
                    savedOutputTokens: total(replays, (s) => s.usage?.outputTokens ?? 0)
                }
            };
        };
        return stepAt(1).pipe(Stream.tapError((error) => count(Agent.metrics.turns, 1, { outcome: error._tag === "StepFailed" ? error.error._tag : error._tag })));
    }));
    return (request, options) => {
        const config = configure(options);
        return Result.isFailure(config) ? Stream.fail(config.failure) : turnOf(request, options, config.success);
    };
});
//# sourceMappingURL=loop.js.map