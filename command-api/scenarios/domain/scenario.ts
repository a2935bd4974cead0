import { PlatformError } from '../../../contracts/errors';
import type { ScenarioEvent } from '../../../contracts/events/integrator';
import { everyStep, type ScenarioSettings } from '../../../contracts/integrator';
import { hookRequestValues } from '../../../contracts/personal-data';
import { withPersonalValues, type Decider } from '../../kit/decider';

export interface ScenarioState {
  readonly status: 'none' | 'active' | 'inactive' | 'deleted';
  readonly scenarioId: number;
  /** Who made it: its record steps act with this user's rights (null: made before owners were kept). */
  readonly ownerId: number | null;
  readonly settings: ScenarioSettings;
  /** Why it was last deactivated (null: by its owner, or never). */
  readonly deactivatedBecause: string | null;
  /** The interval slot of the last scheduled run started (-1: none). */
  readonly lastSlot: number;
  /** Scheduled runs that failed in a row since the last one that did not (or since activation). */
  readonly consecutiveErrors: number;
}

/** Scheduled runs failing in a row that deactivate a scenario. */
export const MAX_CONSECUTIVE_ERRORS = 3;

/** The interval slot `at` falls in: scheduled runs are due once per slot. */
export function slotOf(at: Date, minutes: number): number {
  return Math.floor(at.getTime() / (minutes * 60_000));
}

export type ScenarioCommand =
  | {
      readonly kind: 'CreateScenario';
      readonly scenarioId: number;
      readonly ownerId: number;
      readonly active: boolean;
      readonly settings: ScenarioSettings;
    }
  | { readonly kind: 'UpdateScenario'; readonly settings: Partial<ScenarioSettings> }
  | { readonly kind: 'ActivateScenario' }
  | { readonly kind: 'DeactivateScenario'; readonly reason: string }
  | { readonly kind: 'DeleteScenario' }
  /** Claims the slot's scheduled run: a second integrator that tries the same slot gets a conflict. */
  | { readonly kind: 'StartScheduledRun'; readonly slot: number; readonly now: Date }
  | {
      readonly kind: 'EndScheduledRun';
      readonly slot: number;
      readonly processed: number;
      readonly failure: {
        readonly runId: string;
        /** The request the failed run was for: its message may quote what it sent. */
        readonly requestId: string;
        readonly message: string;
      } | null;
    };

export function hasWebhookResponse(settings: Pick<ScenarioSettings, 'steps'>): boolean {
  return everyStep(settings.steps).some(({ step }) => step.kind === 'webhookResponse');
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export const scenarioDecider: Decider<ScenarioState, ScenarioCommand, ScenarioEvent> = {
  initialState: {
    status: 'none',
    scenarioId: 0,
    ownerId: null,
    settings: {
      name: '',
      webhookId: null,
      schedule: { kind: 'instant' },
      sequential: false,
      autoCommit: false,
      steps: [],
    },
    deactivatedBecause: null,
    lastSlot: -1,
    consecutiveErrors: 0,
  },

  decide(command, state) {
    if (command.kind === 'CreateScenario') {
      if (state.status !== 'none') throw new PlatformError('conflict', `scenario ${state.scenarioId} exists`);
      return [
        {
          type: 'ScenarioCreated',
          data: {
            scenarioId: command.scenarioId,
            ownerId: command.ownerId,
            active: command.active,
            ...command.settings,
          },
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
      case 'StartScheduledRun':
        if (state.status !== 'active' || state.settings.schedule.kind !== 'interval')
          throw new PlatformError('conflict', `scenario ${scenarioId} is not an active scheduled scenario`);
        if (command.slot <= state.lastSlot)
          throw new PlatformError('conflict', `scenario ${scenarioId} has run in slot ${command.slot}`);
        return [
          {
            type: 'ScenarioScheduledRunStarted',
            data: { scenarioId, slot: command.slot, startedAt: command.now.toISOString() },
          },
        ];
      case 'EndScheduledRun': {
        const { failure } = command;
        const consecutiveErrors = failure === null ? 0 : state.consecutiveErrors + 1;
        const endedData = {
          scenarioId,
          slot: command.slot,
          processed: command.processed,
          failedRunId: failure?.runId ?? null,
          message: failure?.message ?? null,
          consecutiveErrors,
        };
        const ended: ScenarioEvent =
          failure === null
            ? { type: 'ScenarioScheduledRunEnded', data: endedData }
            : withPersonalValues(
                { type: 'ScenarioScheduledRunEnded', data: endedData },
                hookRequestValues(failure.requestId, [['message']]),
              );
        if (failure === null || consecutiveErrors < MAX_CONSECUTIVE_ERRORS || state.status !== 'active')
          return [ended];
        // The run, not its message: that may quote what the request sent (and is erased with it).
        const reason = `${consecutiveErrors} scheduled runs failed in a row; the last: run ${failure.runId}`;
        return [ended, { type: 'ScenarioDeactivated', data: { scenarioId, reason } }];
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ScenarioCreated': {
        const { scenarioId, ownerId, active, ...settings } = event.data;
        return {
          ...scenarioDecider.initialState,
          status: active ? 'active' : 'inactive',
          scenarioId,
          ownerId: ownerId ?? null,
          settings,
        };
      }
      case 'ScenarioUpdated': {
        const { scenarioId: _id, ...settings } = event.data;
        const defined = Object.fromEntries(
          Object.entries(settings).filter(([, value]) => value !== undefined),
        );
        return { ...state, settings: { ...state.settings, ...defined } };
      }
      case 'ScenarioActivated':
        return { ...state, status: 'active', deactivatedBecause: null, consecutiveErrors: 0 };
      case 'ScenarioDeactivated':
        return { ...state, status: 'inactive', deactivatedBecause: event.data.reason };
      case 'ScenarioDeleted':
        return { ...state, status: 'deleted' };
      case 'ScenarioScheduledRunStarted':
        return { ...state, lastSlot: event.data.slot };
      case 'ScenarioScheduledRunEnded':
        return { ...state, consecutiveErrors: event.data.consecutiveErrors };
    }
  },
};
