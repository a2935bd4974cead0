import { withPersonalValues, type Decider, type DomainEvent } from '../../kit/decider';

/**
 * A model's answer kept under the digest of what it was asked (`aiAnswer-<tenant>.<digest>`): recorded once;
 * the same question asked again is answered from it and spends nothing. An answer cut at its output limit
 * is kept for its payer only (a job run again after a crash), and a whole answer may replace it.
 */
export interface KeptAnswer {
  readonly text: string;
  readonly model: string;
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Whose call paid for it (absent on answers kept before payers were). */
  readonly paidBy?: string;
  /** The reservation its spending settles, and how much of it (absent: all of it). */
  readonly reservationId?: string;
  readonly settles?: number;
  readonly cut?: true;
}

export interface KeepAnswer extends KeptAnswer {
  readonly digest: string;
  /** The record whose data was asked about: the answer's text is sealed under its key. */
  readonly forRecord?: number;
}

export const aiAnswerDecider: Decider<KeptAnswer | null, KeepAnswer, DomainEvent> = {
  initialState: null,
  decide: ({ forRecord, ...data }, state) => {
    if (state !== null && state.cut !== true) return [];
    const recorded: DomainEvent = { type: 'AiAnswerRecorded', data };
    return [
      forRecord === undefined
        ? recorded
        : withPersonalValues(recorded, { kind: 'record', id: forRecord, paths: [['text']] }),
    ];
  },
  evolve: (state, event) => {
    if (event.type !== 'AiAnswerRecorded') return state;
    const { digest: _digest, ...kept } = event.data as KeepAnswer;
    return kept;
  },
};
