import type * as FollowUp from "../../FollowUp.js";
import type * as Outbox from "../../Outbox.js";
/** A message as the memory store keeps it. @internal */
export type MessageRow = {
    -readonly [K in keyof Outbox.OutboxMessage]: Outbox.OutboxMessage[K];
};
/** The outbox of one memory store. @internal */
export interface State {
    readonly messages: Array<MessageRow>;
    readonly byDeliveryKey: Map<string, MessageRow>;
    /** The store's fence sequence (message leases take their fences from it too). */
    readonly nextFence: () => bigint;
    nextId: bigint;
}
/** @internal */
export declare const makeState: (nextFence: () => bigint) => State;
/** Registers the outbox state of a memory store's service value. @internal */
export declare const register: (service: object, state: State) => void;
/** The outbox state of a memory store's service value, if it is one. @internal */
export declare const stateOf: (service: object) => State | undefined;
/** Writes a completion's messages at `now` (ms), skipping delivery keys already written. @internal */
export declare const write: (state: State, ref: {
    readonly scope: string;
    readonly key: string;
    readonly fence: bigint;
}, messages: ReadonlyArray<FollowUp.Message>, now: number) => void;
/** The `Outbox` service over one memory store's state. @internal */
export declare const service: (state: State) => Outbox.Service;
//# sourceMappingURL=memory.d.ts.map