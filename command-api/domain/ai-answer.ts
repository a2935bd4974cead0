import type { Decider, DomainEvent } from '../kit/decider';

/**
 * A model's answer kept under the digest of what it was asked (`aiAnswer-<tenant>.<digest>`): recorded once;
 * the same question asked again is answered from it and spends nothing.
 */
export interface KeptAnswer {
  readonly text: string;
  readonly model: string;
}

export interface KeepAnswer extends KeptAnswer {
  readonly digest: string;
  readonly promptTokens: number;
  readonly completionTokens: number;
}

export const aiAnswerDecider: Decider<KeptAnswer | null, KeepAnswer, DomainEvent> = {
  initialState: null,
  decide: (command, state) =>
    state === null
      ? [
          {
            type: 'AiAnswerRecorded',
            data: {
              digest: command.digest,
              text: command.text,
              model: command.model,
              promptTokens: command.promptTokens,
              completionTokens: command.completionTokens,
            },
          },
        ]
      : [],
  evolve: (state, event) => {
    if (event.type !== 'AiAnswerRecorded') return state;
    const data = event.data as KeptAnswer;
    return { text: data.text, model: data.model };
  },
};
