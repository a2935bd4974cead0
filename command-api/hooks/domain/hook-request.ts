import type {
  HookRequestEvent,
  WebhookRequestReceivedData,
  WebhookRequestRefusedData,
} from '../../../contracts/events/integrator';
import { orderedStreamName, streamName } from '../../../contracts/streams';
import {
  hookRequestValues,
  RECEIVED_REQUEST_PATHS,
  REFUSED_REQUEST_PATHS,
} from '../../../contracts/personal-data';
import { withPersonalValues, type Decider } from '../../kit/decider';

/**
 * A request that runs at once, or one that was refused, has a stream of its own: its one event, appended once.
 */
export interface HookRequestState {
  readonly received: boolean;
}

export type HookRequestCommand =
  | { readonly kind: 'ReceiveRequest'; readonly request: WebhookRequestReceivedData }
  | { readonly kind: 'RefuseRequest'; readonly refusal: WebhookRequestRefusedData };

export const hookRequestDecider: Decider<HookRequestState, HookRequestCommand, HookRequestEvent> = {
  initialState: { received: false },
  decide(command, state) {
    if (state.received) return [];
    return command.kind === 'ReceiveRequest'
      ? [
          withPersonalValues(
            { type: 'WebhookRequestReceived', data: { ...command.request, queued: false } },
            hookRequestValues(command.request.requestId, RECEIVED_REQUEST_PATHS),
          ),
        ]
      : [
          withPersonalValues(
            { type: 'WebhookRequestRefused', data: command.refusal },
            hookRequestValues(command.refusal.requestId, REFUSED_REQUEST_PATHS),
          ),
        ];
  },
  evolve() {
    return { received: true };
  },
};

/**
 * The stream of a request that runs at once. A sequential scenario's requests share their hook's ordering
 * group, so the stream carries them to the integrator in arrival order under one key; the others are
 * independent and may run side by side.
 */
export function hookRequestStream(tenant: string, webhookId: number, requestId: string, sequential: boolean) {
  return sequential
    ? orderedStreamName('hookRequest', tenant, String(webhookId), requestId)
    : streamName('hookRequest', tenant, requestId);
}
