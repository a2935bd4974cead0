import { PlatformError } from '../../../contracts/errors';
import type { DataStructure } from '../../../languages/data-structure';
import type { WebhookEvent, WebhookKeyEvent } from '../../../contracts/events/integrator';
import {
  DEFAULT_WEBHOOK_SETTINGS,
  HOOK_UNBOUND_LIFETIME_MS,
  type HookKind,
  type WebhookSettings,
  type WebhookStatus,
} from '../../../contracts/integrator';
import type { Decider } from '../../kit/decider';

export interface WebhookState {
  readonly status: 'none' | WebhookStatus | 'deleted';
  readonly webhookId: number;
  readonly key: string;
  readonly udid: string;
  /** What it receives, fixed at creation: HTTP requests or email. */
  readonly kind: HookKind;
  readonly settings: WebhookSettings;
  /** The scenario it triggers (null: none). */
  readonly scenarioId: number | null;
  /** Since when no scenario is bound (null: one is): after 120 hours the hook is deactivated. */
  readonly unboundSince: string | null;
  /** The next request's shape is to be stored (Re-determine data structure). */
  readonly redetermining: boolean;
  /** The shape stored by Re-determine or the first request: for mapping only, never validated against. */
  readonly determinedStructure: DataStructure | null;
}

export type WebhookCommand =
  | {
      readonly kind: 'CreateWebhook';
      readonly webhookId: number;
      readonly key: string;
      readonly udid: string;
      readonly hookKind: HookKind;
      readonly settings: WebhookSettings;
      readonly now: Date;
    }
  | { readonly kind: 'UpdateWebhook'; readonly settings: Partial<WebhookSettings> }
  | { readonly kind: 'EnableWebhook'; readonly now: Date }
  | { readonly kind: 'DisableWebhook' }
  | { readonly kind: 'BindScenario'; readonly scenarioId: number }
  | { readonly kind: 'UnbindScenario'; readonly scenarioId: number; readonly now: Date }
  /** The time-driven rule: unbound for more than 120 hours → deactivated. */
  | { readonly kind: 'DeactivateIfUnbound'; readonly now: Date }
  | { readonly kind: 'Redetermine' }
  | { readonly kind: 'RecordStructure'; readonly structure: DataStructure; readonly requestId: string }
  | { readonly kind: 'DeleteWebhook' };

/** Whether the hook has been without a scenario for longer than its lifetime at `now`. */
export function unboundTooLong(state: Pick<WebhookState, 'unboundSince'>, now: Date): boolean {
  return (
    state.unboundSince !== null && now.getTime() - Date.parse(state.unboundSince) > HOOK_UNBOUND_LIFETIME_MS
  );
}

/** What a request to the hook meets: deactivated (by the event, or by the clock already), disabled, enabled. */
export function effectiveStatus(state: WebhookState, now: Date): WebhookStatus | 'none' {
  if (state.status === 'none' || state.status === 'deleted') return 'none';
  if (state.status === 'deactivated' || unboundTooLong(state, now)) return 'deactivated';
  return state.status;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export const webhookDecider: Decider<WebhookState, WebhookCommand, WebhookEvent> = {
  initialState: {
    status: 'none',
    webhookId: 0,
    key: '',
    udid: '',
    kind: 'web',
    settings: { name: '', ...DEFAULT_WEBHOOK_SETTINGS },
    scenarioId: null,
    unboundSince: null,
    redetermining: false,
    determinedStructure: null,
  },

  decide(command, state) {
    if (command.kind === 'CreateWebhook') {
      if (state.status !== 'none') throw new PlatformError('conflict', `webhook ${state.webhookId} exists`);
      return [
        {
          type: 'WebhookCreated',
          data: {
            webhookId: command.webhookId,
            key: command.key,
            udid: command.udid,
            kind: command.hookKind,
            ...command.settings,
            createdAt: command.now.toISOString(),
          },
        },
      ];
    }
    if (state.status === 'none' || state.status === 'deleted')
      throw new PlatformError('not_found', 'webhook not found');
    const webhookId = state.webhookId;
    switch (command.kind) {
      case 'UpdateWebhook': {
        const changed = Object.fromEntries(
          Object.entries(command.settings).filter(
            ([key, value]) =>
              value !== undefined && !sameJson(value, state.settings[key as keyof WebhookSettings]),
          ),
        );
        return Object.keys(changed).length === 0
          ? []
          : [{ type: 'WebhookUpdated', data: { webhookId, ...changed } }];
      }
      case 'EnableWebhook':
        return state.status === 'enabled' && !unboundTooLong(state, command.now)
          ? []
          : [
              {
                type: 'WebhookEnabled',
                data: {
                  webhookId,
                  at: command.now.toISOString(),
                  unboundSince: state.scenarioId === null ? command.now.toISOString() : null,
                },
              },
            ];
      case 'DisableWebhook':
        if (state.status === 'deactivated')
          throw new PlatformError(
            'conflict',
            `webhook ${webhookId} is deactivated; enable it to use it again`,
          );
        return state.status === 'disabled' ? [] : [{ type: 'WebhookDisabled', data: { webhookId } }];
      case 'BindScenario':
        if (state.scenarioId === command.scenarioId) return [];
        if (state.scenarioId !== null)
          throw new PlatformError(
            'conflict',
            `webhook ${webhookId} already triggers scenario ${state.scenarioId}; a webhook serves one scenario`,
          );
        return [{ type: 'WebhookBound', data: { webhookId, scenarioId: command.scenarioId } }];
      case 'UnbindScenario':
        return state.scenarioId !== command.scenarioId
          ? []
          : [
              {
                type: 'WebhookUnbound',
                data: { webhookId, scenarioId: command.scenarioId, at: command.now.toISOString() },
              },
            ];
      case 'DeactivateIfUnbound':
        return state.status === 'deactivated' || !unboundTooLong(state, command.now)
          ? []
          : [
              {
                type: 'WebhookDeactivated',
                data: {
                  webhookId,
                  reason: 'no scenario for more than 120 hours',
                  unboundSince: state.unboundSince!,
                },
              },
            ];
      case 'Redetermine':
        return state.redetermining ? [] : [{ type: 'WebhookStructureRedetermining', data: { webhookId } }];
      case 'RecordStructure':
        // Stored once after creation, and once after each Re-determine: not on every request.
        if (!state.redetermining && state.determinedStructure !== null) return [];
        return [
          {
            type: 'WebhookStructureDetermined',
            data: { webhookId, structure: command.structure, requestId: command.requestId },
          },
        ];
      case 'DeleteWebhook':
        if (state.scenarioId !== null)
          throw new PlatformError(
            'conflict',
            `webhook ${webhookId} triggers scenario ${state.scenarioId}; change that scenario's trigger first`,
          );
        return [{ type: 'WebhookDeleted', data: { webhookId } }];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'WebhookCreated': {
        const { webhookId, key, udid, kind, createdAt, ...settings } = event.data;
        return {
          ...state,
          status: 'enabled',
          webhookId,
          key,
          udid,
          kind: kind ?? 'web',
          settings,
          scenarioId: null,
          unboundSince: createdAt,
        };
      }
      case 'WebhookUpdated': {
        const { webhookId: _id, ...settings } = event.data;
        const defined = Object.fromEntries(
          Object.entries(settings).filter(([, value]) => value !== undefined),
        );
        return { ...state, settings: { ...state.settings, ...defined } };
      }
      case 'WebhookEnabled':
        return { ...state, status: 'enabled', unboundSince: event.data.unboundSince };
      case 'WebhookDisabled':
        return { ...state, status: 'disabled' };
      case 'WebhookBound':
        return { ...state, scenarioId: event.data.scenarioId, unboundSince: null };
      case 'WebhookUnbound':
        return { ...state, scenarioId: null, unboundSince: event.data.at };
      case 'WebhookDeactivated':
        return { ...state, status: 'deactivated' };
      case 'WebhookStructureRedetermining':
        return { ...state, redetermining: true };
      case 'WebhookStructureDetermined':
        return { ...state, redetermining: false, determinedStructure: event.data.structure };
      case 'WebhookDeleted':
        return { ...state, status: 'deleted' };
    }
  },
};

export interface WebhookKeyState {
  readonly tenant: string | null;
  readonly webhookId: number;
}

/** A hook's address names its tenant and webhook: the claim stream of the key keeps that, once. */
export const webhookKeyDecider: Decider<
  WebhookKeyState,
  { readonly kind: 'AssignKey'; readonly key: string; readonly tenant: string; readonly webhookId: number },
  WebhookKeyEvent
> = {
  initialState: { tenant: null, webhookId: 0 },
  decide(command, state) {
    if (state.tenant === command.tenant && state.webhookId === command.webhookId) return [];
    if (state.tenant !== null) throw new PlatformError('conflict', 'this hook address is taken');
    return [
      {
        type: 'WebhookKeyAssigned',
        data: { key: command.key, tenant: command.tenant, webhookId: command.webhookId },
      },
    ];
  },
  evolve(_state, event) {
    return { tenant: event.data.tenant, webhookId: event.data.webhookId };
  },
};
