import { PlatformError } from '../../contracts/errors';
import type { LabelEvent } from '../../contracts/events/records';
import type { Decider } from '../kit/decider';

export interface LabelState {
  readonly status: 'none' | 'active' | 'deleted';
  readonly labelId: number;
  readonly name: string;
  readonly color: string;
}

export type LabelCommand =
  | { readonly kind: 'CreateLabel'; readonly labelId: number; readonly name: string; readonly color: string }
  | { readonly kind: 'UpdateLabel'; readonly name?: string; readonly color?: string }
  | { readonly kind: 'DeleteLabel' };

export const labelDecider: Decider<LabelState, LabelCommand, LabelEvent> = {
  initialState: { status: 'none', labelId: 0, name: '', color: '' },

  decide(command, state) {
    if (command.kind === 'CreateLabel') {
      if (state.status !== 'none')
        throw new PlatformError('conflict', `label ${state.labelId} already exists`);
      return [
        {
          type: 'LabelCreated',
          data: { labelId: command.labelId, name: command.name, color: command.color },
        },
      ];
    }
    if (state.status !== 'active') throw new PlatformError('not_found', 'label not found');
    if (command.kind === 'DeleteLabel') return [{ type: 'LabelDeleted', data: { labelId: state.labelId } }];
    const change = {
      ...(command.name !== undefined && command.name !== state.name && { name: command.name }),
      ...(command.color !== undefined && command.color !== state.color && { color: command.color }),
    };
    return Object.keys(change).length === 0
      ? []
      : [{ type: 'LabelUpdated', data: { labelId: state.labelId, ...change } }];
  },

  evolve(state, event) {
    switch (event.type) {
      case 'LabelCreated':
        return { status: 'active', ...event.data };
      case 'LabelUpdated':
        return {
          ...state,
          name: event.data.name ?? state.name,
          color: event.data.color ?? state.color,
        };
      case 'LabelDeleted':
        return { ...state, status: 'deleted' };
    }
  },
};
