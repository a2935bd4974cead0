import { PlatformError } from '../../../contracts/errors';
import type { SpaceEvent } from '../../../contracts/events/records';
import type { Decider } from '../../kit/decider';
import { changedLabels, withLabels } from '../../records/domain/labelled';

export interface SpaceState {
  readonly status: 'none' | 'active' | 'deleted';
  readonly spaceId: number;
  readonly name: string;
  readonly description: string | null;
}

export type SpaceCommand =
  | {
      readonly kind: 'CreateSpace';
      readonly spaceId: number;
      readonly name: string;
      readonly description: string | null;
    }
  | { readonly kind: 'UpdateSpace'; readonly name?: string; readonly description?: string | null }
  /** `modules`: how many modules the space still holds (the route counts them). */
  | { readonly kind: 'DeleteSpace'; readonly modules: number };

export const spaceDecider: Decider<SpaceState, SpaceCommand, SpaceEvent> = {
  initialState: { status: 'none', spaceId: 0, name: '', description: null },

  decide(command, state) {
    if (command.kind === 'CreateSpace') {
      if (state.status !== 'none')
        throw new PlatformError('conflict', `space ${state.spaceId} already exists`);
      return [
        {
          type: 'SpaceCreated',
          data: { spaceId: command.spaceId, name: command.name, description: command.description },
        },
      ];
    }
    if (state.status !== 'active') throw new PlatformError('not_found', 'space not found');
    if (command.kind === 'DeleteSpace') {
      if (command.modules > 0)
        throw new PlatformError(
          'conflict',
          `space ${state.spaceId} still holds ${command.modules} module(s); delete them first`,
        );
      return [{ type: 'SpaceDeleted', data: { spaceId: state.spaceId } }];
    }
    const changes = changedLabels(state, command);
    return changes === null ? [] : [{ type: 'SpaceUpdated', data: { spaceId: state.spaceId, ...changes } }];
  },

  evolve(state, event) {
    switch (event.type) {
      case 'SpaceCreated':
        return {
          status: 'active',
          spaceId: event.data.spaceId,
          name: event.data.name,
          description: event.data.description,
        };
      case 'SpaceUpdated':
        return withLabels(state, event.data);
      case 'SpaceDeleted':
        return { ...state, status: 'deleted' };
    }
  },
};
