import type { Decider, DomainEvent } from '../../kit/decider';

/** The model a system's AI features use, when an operator administrator set one (null: the deployment's). */
export interface SystemAiSettings {
  readonly baseUrl: string;
  readonly model: string;
  readonly sealedApiKey: string | null;
  readonly timeoutMs: number | null;
}

export type SystemAiCommand =
  | {
      readonly kind: 'SetSystemAi';
      readonly system: string;
      readonly baseUrl: string;
      readonly model: string;
      /** The new key, sealed; undefined: the key set before stays. */
      readonly sealedApiKey: string | undefined;
      readonly timeoutMs: number | null;
    }
  | { readonly kind: 'ClearSystemAi'; readonly system: string };

export const systemAiDecider: Decider<SystemAiSettings | null, SystemAiCommand, DomainEvent> = {
  initialState: null,

  decide(command, state) {
    if (command.kind === 'ClearSystemAi')
      return state === null ? [] : [{ type: 'SystemAiSettingsCleared', data: { system: command.system } }];
    const next = {
      baseUrl: command.baseUrl,
      model: command.model,
      sealedApiKey: command.sealedApiKey ?? state?.sealedApiKey ?? null,
      timeoutMs: command.timeoutMs,
    };
    if (state !== null && JSON.stringify(next) === JSON.stringify(state)) return [];
    return [{ type: 'SystemAiSettingsSet', data: { system: command.system, ...next } }];
  },

  evolve(state, event) {
    if (event.type === 'SystemAiSettingsCleared') return null;
    if (event.type !== 'SystemAiSettingsSet') return state;
    const { baseUrl, model, sealedApiKey, timeoutMs } = event.data as SystemAiSettings;
    return { baseUrl, model, sealedApiKey, timeoutMs };
  },
};
