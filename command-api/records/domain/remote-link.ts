import { PlatformError } from '../../../contracts/errors';
import type { RemoteLinkEvent } from '../../../contracts/events/records';
import type { Decider } from '../../kit/decider';

export interface RemoteLinkState {
  /** The record the remote key points at (null: not linked yet). */
  readonly recordId: number | null;
}

export interface LinkRemote {
  readonly kind: 'LinkRemote';
  readonly remoteApplication: string;
  readonly remoteId: string;
  readonly recordId: number;
  /** Whether the record is live (the route reads it). */
  readonly recordExists: boolean;
}

export const remoteLinkDecider: Decider<RemoteLinkState, LinkRemote, RemoteLinkEvent> = {
  initialState: { recordId: null },

  decide(command, state) {
    if (!command.recordExists) throw new PlatformError('not_found', `record ${command.recordId} not found`);
    if (state.recordId === command.recordId) return [];
    const { remoteApplication, remoteId, recordId } = command;
    return [{ type: 'RemoteLinked', data: { remoteApplication, remoteId, recordId } }];
  },

  evolve(_state, event) {
    return { recordId: event.data.recordId };
  },
};
