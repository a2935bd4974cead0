import { PlatformError } from '../../contracts/errors';
import type { ScenarioEvent } from '../../contracts/events/integrator';
import type { ScenarioSettings } from '../../contracts/integrator';
import type { Decider } from '../kit/decider';

export interface ScenarioState {
  readonly status: 'none' | 'active' | 'inactive' | 'deleted';
  readonly scenarioId: number;
  readonly settings: ScenarioSettings;
  /** Why it was last deactivated (null: by its owner, or never). */
  readonly deactivatedBecause: string | null;
}

export type ScenarioCommand =
  | {
      readonly kind: 'CreateScenario';
      readonly scenarioId: number;
      readonly active: boolean;
      readonly settings: ScenarioSettings;
    }
  | { readonly kind: 'UpdateScenario'; readonly settings: Partial<ScenarioSettings> }
  | { readonly kind: 'ActivateScenario' }
  | { readonly kind: 'DeactivateScenario'; readonly reason: string }
  | { readonly kind: 'DeleteScenario' };

export function hasWebhookResponse(settings: Pick<ScenarioSettings, 'steps'>): boolean {
  return settings.steps.some((step) => step.kind === 'webhookResponse');
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export const scenarioDecider: Decider<ScenarioState, ScenarioCommand, ScenarioEvent> = {
  initialState: {
    status: 'none',
    scenarioId: 0,
    settings: {
      name: '',
      webhookId: null,
      schedule: { kind: 'instant' },
      sequential: false,
      autoCommit: false,
      steps: [],
    },
    deactivatedBecause: null,
  },

  decide(command, state) {
    if (command.kind === 'CreateScenario') {
      if (state.status !== 'none') throw new PlatformError('conflict', `scenario ${state.scenarioId} exists`);
      return [
        {
          type: 'ScenarioCreated',
          data: { scenarioId: command.scenarioId, active: command.active, ...command.settings },
        },
      ];
    }
    if (state.status === 'none' || state.status === 'deleted')
      throw new PlatformError('not_found', 'scenario not found');
    const scenarioId = state.scenarioId;
    switch (command.kind) {
      case 'UpdateScenario': {
        const changed = Object.fromEntries(
          Object.entries(command.settings).filter(
            ([key, value]) =>
              value !== undefined && !sameJson(value, state.settings[key as keyof ScenarioSettings]),
          ),
        );
        return Object.keys(changed).length === 0
          ? []
          : [{ type: 'ScenarioUpdated', data: { scenarioId, ...changed } }];
      }
      case 'ActivateScenario':
        return state.status === 'active' ? [] : [{ type: 'ScenarioActivated', data: { scenarioId } }];
      case 'DeactivateScenario':
        return state.status === 'inactive'
          ? []
          : [{ type: 'ScenarioDeactivated', data: { scenarioId, reason: command.reason } }];
      case 'DeleteScenario':
        return [{ type: 'ScenarioDeleted', data: { scenarioId } }];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ScenarioCreated': {
        const { scenarioId, active, ...settings } = event.data;
        return { status: active ? 'active' : 'inactive', scenarioId, settings, deactivatedBecause: null };
      }
      case 'ScenarioUpdated': {
        const { scenarioId: _id, ...settings } = event.data;
        const defined = Object.fromEntries(
          Object.entries(settings).filter(([, value]) => value !== undefined),
        );
        return { ...state, settings: { ...state.settings, ...defined } };
      }
      case 'ScenarioActivated':
        return { ...state, status: 'active', deactivatedBecause: null };
      case 'ScenarioDeactivated':
        return { ...state, status: 'inactive', deactivatedBecause: event.data.reason };
      case 'ScenarioDeleted':
        return { ...state, status: 'deleted' };
    }
  },
};
