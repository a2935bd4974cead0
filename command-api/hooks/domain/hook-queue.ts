import { PlatformError } from '../../../contracts/errors';
import type { HookQueueEvent, WebhookRequestReceivedData } from '../../../contracts/events/integrator';
import { HOOK_QUEUE_FULL } from '../../../contracts/integrator';
import { hookRequestValues, RECEIVED_REQUEST_PATHS } from '../../../contracts/personal-data';
import { withPersonalValues, type Decider } from '../../kit/decider';

/** A hook's queue: the requests waiting for a scheduled run (or for their scenario), in arrival order. */
export interface HookQueueState {
  readonly requestIds: readonly string[];
  /** Failed runs of the queued requests that have any (a scheduled run leaves a failed item queued). */
  readonly failures: Readonly<Record<string, number>>;
}

export type HookQueueCommand =
  | { readonly kind: 'Enqueue'; readonly request: WebhookRequestReceivedData; readonly capacity: number }
  | {
      readonly kind: 'RemoveItems';
      readonly webhookId: number;
      readonly requestIds: readonly string[];
      readonly reason: 'processed' | 'deleted' | 'cleared';
    }
  | {
      readonly kind: 'RecordFailure';
      readonly webhookId: number;
      readonly requestId: string;
      readonly runId: string;
      readonly message: string;
    };

/** The run id of a queued request's next run: the request's id, then `<id>~2`, `<id>~3`… after failures. */
export function queuedRunId(state: HookQueueState, requestId: string): { runId: string; attempt: number } {
  const attempt = (state.failures[requestId] ?? 0) + 1;
  return { runId: attempt === 1 ? requestId : `${requestId}~${attempt}`, attempt };
}

export const hookQueueDecider: Decider<HookQueueState, HookQueueCommand, HookQueueEvent> = {
  initialState: { requestIds: [], failures: {} },

  decide(command, state) {
    if (command.kind === 'Enqueue') {
      // The spec's rule and answer: a full queue stays as it is, the request is refused with this text.
      if (state.requestIds.length >= command.capacity)
        throw new PlatformError('bad_request', HOOK_QUEUE_FULL);
      return [
        withPersonalValues(
          { type: 'WebhookRequestReceived', data: { ...command.request, queued: true } },
          hookRequestValues(command.request.requestId, RECEIVED_REQUEST_PATHS),
        ),
      ];
    }
    if (command.kind === 'RecordFailure') {
      if (!state.requestIds.includes(command.requestId)) return [];
      const { runId, attempt } = queuedRunId(state, command.requestId);
      // A failure of a run already counted (a repeat) changes nothing.
      if (runId !== command.runId) return [];
      const { webhookId, requestId, message } = command;
      // Why a run failed may quote what the request carried.
      return [
        withPersonalValues(
          { type: 'WebhookQueueItemFailed', data: { webhookId, requestId, runId, attempt, message } },
          hookRequestValues(requestId, [['message']]),
        ),
      ];
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
    switch (event.type) {
      case 'WebhookRequestReceived':
        return { ...state, requestIds: [...state.requestIds, event.data.requestId] };
      case 'WebhookQueueItemFailed': {
        const { requestId } = event.data;
        return {
          ...state,
          failures: { ...state.failures, [requestId]: (state.failures[requestId] ?? 0) + 1 },
        };
      }
      case 'WebhookQueueItemsRemoved': {
        const removed = new Set(event.data.requestIds);
        const failures = Object.fromEntries(
          Object.entries(state.failures).filter(([requestId]) => !removed.has(requestId)),
        );
        return { requestIds: state.requestIds.filter((requestId) => !removed.has(requestId)), failures };
      }
    }
  },
};
