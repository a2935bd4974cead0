import { PlatformError } from '../../contracts/errors';
import type { HookQueueEvent, WebhookRequestReceivedData } from '../../contracts/events/integrator';
import { HOOK_QUEUE_FULL } from '../../contracts/integrator';
import type { Decider } from '../kit/decider';

/** A hook's queue: the requests waiting for a scheduled run (or for their scenario), in arrival order. */
export interface HookQueueState {
  readonly requestIds: readonly string[];
}

export type HookQueueCommand =
  | { readonly kind: 'Enqueue'; readonly request: WebhookRequestReceivedData; readonly capacity: number }
  | {
      readonly kind: 'RemoveItems';
      readonly webhookId: number;
      readonly requestIds: readonly string[];
      readonly reason: 'processed' | 'deleted' | 'cleared';
    };

export const hookQueueDecider: Decider<HookQueueState, HookQueueCommand, HookQueueEvent> = {
  initialState: { requestIds: [] },

  decide(command, state) {
    if (command.kind === 'Enqueue') {
      // The spec's rule and answer: a full queue stays as it is, the request is refused with this text.
      if (state.requestIds.length >= command.capacity)
        throw new PlatformError('bad_request', HOOK_QUEUE_FULL);
      return [{ type: 'WebhookRequestReceived', data: { ...command.request, queued: true } }];
    }
    const queued = new Set(state.requestIds);
    const present = command.requestIds.filter((requestId) => queued.has(requestId));
    return present.length === 0
      ? []
      : [
          {
            type: 'WebhookQueueItemsRemoved',
            data: { webhookId: command.webhookId, requestIds: present, reason: command.reason },
          },
        ];
  },

  evolve(state, event) {
    if (event.type === 'WebhookRequestReceived')
      return { requestIds: [...state.requestIds, event.data.requestId] };
    const removed = new Set(event.data.requestIds);
    return { requestIds: state.requestIds.filter((requestId) => !removed.has(requestId)) };
  },
};
