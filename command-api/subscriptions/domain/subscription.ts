import { PlatformError } from '../../../contracts/errors';
import type { StoredSubscriptionSettings, SubscriptionEvent } from '../../../contracts/events/subscriptions';
import type { Decider } from '../../kit/decider';

/** A subscription's extra headers as the decider sees them: names, and the values sealed. */
export type SealedHeaders = Pick<StoredSubscriptionSettings, 'headerNames' | 'sealedHeaders'>;

export interface SubscriptionState {
  readonly status: 'none' | 'live' | 'deleted';
  readonly subscriptionId: number;
  readonly settings: StoredSubscriptionSettings;
  readonly active: boolean;
  /** Why it was disabled (null: active, or turned off without one). */
  readonly disabledReason: string | null;
  readonly sealedSecret: string;
  /** The secret rotated out, still signing until `previousExpiresAt` (null: none). */
  readonly previousSealedSecret: string | null;
  readonly previousExpiresAt: string | null;
}

export type SubscriptionCommand =
  | {
      readonly kind: 'CreateSubscription';
      readonly subscriptionId: number;
      /** Header values sealed by the caller, as the secret is. */
      readonly settings: StoredSubscriptionSettings;
      readonly active: boolean;
      /** Sealed by the caller: the decider never sees a secret in clear. */
      readonly sealedSecret: string;
      readonly now: Date;
    }
  | {
      readonly kind: 'UpdateSubscription';
      readonly settings: Partial<Omit<StoredSubscriptionSettings, keyof SealedHeaders>>;
      /**
       * Only when the headers differ from the current ones: the caller compares them in clear, since sealing
       * the same map twice gives different text.
       */
      readonly headers?: SealedHeaders | undefined;
      readonly active?: boolean | undefined;
    }
  | {
      readonly kind: 'RotateSubscriptionSecret';
      readonly sealedSecret: string;
      readonly overlapMinutes: number;
      readonly now: Date;
    }
  | { readonly kind: 'DisableSubscription'; readonly reason: string }
  | {
      readonly kind: 'RequestReplay';
      readonly replayId: string;
      readonly after: bigint;
      readonly until: bigint | null;
      readonly eventId: string | null;
    }
  | { readonly kind: 'EnableSubscription' }
  | { readonly kind: 'DeleteSubscription' };

/** Why an update that turns a subscription off disabled it. */
export const TURNED_OFF_BY_UPDATE = 'set inactive';

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export const subscriptionDecider: Decider<SubscriptionState, SubscriptionCommand, SubscriptionEvent> = {
  initialState: {
    status: 'none',
    subscriptionId: 0,
    settings: { name: '', url: '', events: [], filter: null, headerNames: [], sealedHeaders: null },
    active: false,
    disabledReason: null,
    sealedSecret: '',
    previousSealedSecret: null,
    previousExpiresAt: null,
  },

  decide(command, state) {
    if (command.kind === 'CreateSubscription') {
      if (state.status !== 'none')
        throw new PlatformError('conflict', `subscription ${state.subscriptionId} exists`);
      return [
        {
          type: 'SubscriptionCreated',
          data: {
            subscriptionId: command.subscriptionId,
            ...command.settings,
            active: command.active,
            sealedSecret: command.sealedSecret,
            createdAt: command.now.toISOString(),
          },
        },
      ];
    }
    if (state.status !== 'live') throw new PlatformError('not_found', 'subscription not found');
    const { subscriptionId } = state;
    switch (command.kind) {
      case 'UpdateSubscription': {
        const changed = Object.fromEntries(
          Object.entries(command.settings).filter(
            ([key, value]) =>
              value !== undefined &&
              !sameJson(value, state.settings[key as keyof StoredSubscriptionSettings]),
          ),
        );
        // The headers change as one, names beside the sealed map, even when only a value differs.
        if (command.headers !== undefined && command.headers.sealedHeaders !== state.settings.sealedHeaders)
          Object.assign(changed, command.headers);
        const events: SubscriptionEvent[] =
          Object.keys(changed).length === 0
            ? []
            : [{ type: 'SubscriptionChanged', data: { subscriptionId, ...changed } }];
        if (command.active === true && !state.active)
          events.push({ type: 'SubscriptionEnabled', data: { subscriptionId } });
        if (command.active === false && state.active)
          events.push({
            type: 'SubscriptionDisabled',
            data: { subscriptionId, reason: TURNED_OFF_BY_UPDATE },
          });
        return events;
      }
      case 'RotateSubscriptionSecret':
        return [
          {
            type: 'SubscriptionSecretRotated',
            data: {
              subscriptionId,
              sealedSecret: command.sealedSecret,
              previousSealedSecret: state.sealedSecret,
              previousExpiresAt: new Date(
                command.now.getTime() + command.overlapMinutes * 60_000,
              ).toISOString(),
            },
          },
        ];
      case 'DisableSubscription':
        return state.active || state.disabledReason !== command.reason
          ? [{ type: 'SubscriptionDisabled', data: { subscriptionId, reason: command.reason } }]
          : [];
      case 'RequestReplay':
        return [
          {
            type: 'SubscriptionReplayRequested',
            data: {
              subscriptionId,
              replayId: command.replayId,
              after: command.after.toString(),
              until: command.until === null ? null : command.until.toString(),
              eventId: command.eventId,
            },
          },
        ];
      case 'EnableSubscription':
        return state.active ? [] : [{ type: 'SubscriptionEnabled', data: { subscriptionId } }];
      case 'DeleteSubscription':
        return [{ type: 'SubscriptionDeleted', data: { subscriptionId } }];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'SubscriptionCreated': {
        const { subscriptionId, active, sealedSecret, createdAt: _createdAt, ...settings } = event.data;
        return {
          ...state,
          status: 'live',
          subscriptionId,
          settings,
          active,
          disabledReason: null,
          sealedSecret,
        };
      }
      case 'SubscriptionChanged': {
        const { subscriptionId: _id, ...settings } = event.data;
        const defined = Object.fromEntries(
          Object.entries(settings).filter(([, value]) => value !== undefined),
        );
        return { ...state, settings: { ...state.settings, ...defined } };
      }
      case 'SubscriptionSecretRotated':
        return {
          ...state,
          sealedSecret: event.data.sealedSecret,
          previousSealedSecret: event.data.previousSealedSecret,
          previousExpiresAt: event.data.previousExpiresAt,
        };
      case 'SubscriptionDisabled':
        return { ...state, active: false, disabledReason: event.data.reason };
      case 'SubscriptionEnabled':
        return { ...state, active: true, disabledReason: null };
      case 'SubscriptionDeleted':
        return { ...state, status: 'deleted' };
      case 'SubscriptionReplayRequested':
        return state;
    }
  },
};
