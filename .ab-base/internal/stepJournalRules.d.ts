import * as StepJournal from "../StepJournal.js";
/**
 * The first rule a claim breaks: a step from 1, a lease of more than 0 ms, a finite retention
 * ≥ 0 ms.
 *
 * @internal
 */
export declare const checkClaim: (request: StepJournal.ClaimRequest) => StepJournal.InvalidStepRequest | undefined;
/** The rule a heartbeat breaks: its new lease must be more than 0 ms. @internal */
export declare const checkHeartbeat: (lease: StepJournal.StepRef, leaseMs: number) => StepJournal.InvalidStepRequest | undefined;
/**
 * The JSON text an output is stored as and its UTF-8 size, or `StepOutputTooLarge`.
 *
 * @internal
 */
export declare const outputText: (lease: StepJournal.StepRef, output: StepJournal.StepOutput) => {
    readonly text: string;
    readonly bytes: number;
} | StepJournal.StepOutputTooLarge;
/** A stored output's JSON text decoded; `undefined` when it does not decode. @internal */
export declare const readOutput: (text: string) => StepJournal.StepOutput | undefined;
/** What a claim compares against an existing step. @internal */
export interface Existing {
    readonly status: StepJournal.Status;
    readonly fingerprint: string;
    readonly owner: string | null;
    /** ms since the epoch, or `null`. */
    readonly leaseExpiresAt: number | null;
}
/**
 * How a claim at `now` (ms) by (`fingerprint`, `owner`) treats an existing step:
 *
 * - `resume`: this owner's own live lease (a claim whose response was lost);
 * - `take`: the same fingerprint, and the step `released` or its lease expired;
 * - `refuse`: anything else (recorded, leased elsewhere, another fingerprint); the claim answers
 *   the step.
 *
 * @internal
 */
export declare const claimOn: (step: Existing, request: {
    readonly fingerprint: string;
    readonly owner: string;
}, now: number) => "resume" | "take" | "refuse";
//# sourceMappingURL=stepJournalRules.d.ts.map