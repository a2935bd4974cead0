import type { RequestErasureEvent, WebhookRequestErasedData } from '../../../contracts/events/integrator';
import { hookRequestValues } from '../../../contracts/personal-data';
import { streamName } from '../../../contracts/streams';
import { withPersonalValues, type Decider } from '../../kit/decider';

/**
 * A hook request's erasure, in a stream of its own (the request itself may be in a queue's stream, or one it
 * shares with its hook's ordered requests): recorded once, naming only its subject.
 */
export interface RequestErasureState {
  readonly erased: boolean;
}

export interface EraseRequest {
  readonly kind: 'EraseRequest';
  readonly erasure: WebhookRequestErasedData;
}

export const requestErasureDecider: Decider<RequestErasureState, EraseRequest, RequestErasureEvent> = {
  initialState: { erased: false },
  decide(command, state) {
    if (state.erased) return [];
    return [
      withPersonalValues(
        { type: 'WebhookRequestErased', data: command.erasure },
        hookRequestValues(command.erasure.requestId, []),
      ),
    ];
  },
  evolve() {
    return { erased: true };
  },
};

export function requestErasureStream(tenant: string, requestId: string): string {
  return streamName('hookRequestErasure', tenant, requestId);
}
