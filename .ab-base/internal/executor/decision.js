import { claimOn } from "../storeRules.js";
const mismatch = { _tag: "Mismatch" };
const replay = { _tag: "Replay" };
const replayFailure = { _tag: "ReplayFailure" };
const exhausted = { _tag: "Exhausted" };
const claimAgain = { _tag: "ClaimAgain" };
/**
 * Decides what a call does with `record`, read at the store clock's `now`.
 *
 * @internal
 */
export const decide = (record, caller, now) => {
    const at = now.getTime();
    const leaseExpiresAt = record.leaseExpiresAt?.getTime() ?? null;
    if (claimOn({ ...record, leaseExpiresAt, expiresAt: record.expiresAt.getTime() }, caller, at) !== "refuse") {
        return claimAgain;
    }
    if (record.fingerprint !== caller.fingerprint)
        return mismatch;
    const exhaustedAttempts = record.attempt >= record.maxAttempts;
    switch (record.status) {
        case "succeeded":
            return replay;
        case "failed":
            return replayFailure;
        case "released":
            return exhausted;
        case "unknown":
            return { _tag: "Unknown", reason: exhaustedAttempts ? "attempts_exhausted" : "manual" };
        case "in_progress":
            return leaseExpiresAt !== null && leaseExpiresAt > at
                ? { _tag: "Wait", retryAfterMs: Math.ceil(leaseExpiresAt - at) }
                : { _tag: "ParkExpired", reason: exhaustedAttempts ? "attempts_exhausted" : "abandoned" };
    }
};
//# sourceMappingURL=decision.js.map