import { PlatformError } from '../../contracts/errors';
import type { SegmentEvent } from '../../contracts/events/records';
import type { Decider } from '../kit/decider';

export interface SegmentState {
  readonly status: 'none' | 'active' | 'deleted';
  readonly segmentId: number;
  readonly spaceId: number;
  readonly name: string;
  /** In the list language, checked when saved; null: every record of the space. */
  readonly filter: string | null;
  readonly order: string | null;
}

export type SegmentCommand =
  | {
      readonly kind: 'CreateSegment';
      readonly segmentId: number;
      readonly spaceId: number;
      readonly spaceExists: boolean;
      readonly name: string;
      readonly filter: string | null;
      readonly order: string | null;
    }
  | {
      readonly kind: 'UpdateSegment';
      readonly name?: string;
      readonly filter?: string | null;
      readonly order?: string | null;
    }
  | { readonly kind: 'DeleteSegment' };

export const segmentDecider: Decider<SegmentState, SegmentCommand, SegmentEvent> = {
  initialState: { status: 'none', segmentId: 0, spaceId: 0, name: '', filter: null, order: null },

  decide(command, state) {
    if (command.kind === 'CreateSegment') {
      if (state.status !== 'none')
        throw new PlatformError('conflict', `segment ${state.segmentId} already exists`);
      if (!command.spaceExists)
        throw new PlatformError('validation_failed', `space ${command.spaceId} does not exist`, [
          { path: 'spaceId', message: 'no such space' },
        ]);
      const { segmentId, spaceId, name, filter, order } = command;
      return [{ type: 'SegmentCreated', data: { segmentId, spaceId, name, filter, order } }];
    }
    if (state.status !== 'active') throw new PlatformError('not_found', 'segment not found');
    if (command.kind === 'DeleteSegment')
      return [{ type: 'SegmentDeleted', data: { segmentId: state.segmentId } }];
    const change = {
      ...(command.name !== undefined && command.name !== state.name && { name: command.name }),
      ...(command.filter !== undefined && command.filter !== state.filter && { filter: command.filter }),
      ...(command.order !== undefined && command.order !== state.order && { order: command.order }),
    };
    return Object.keys(change).length === 0
      ? []
      : [{ type: 'SegmentUpdated', data: { segmentId: state.segmentId, ...change } }];
  },

  evolve(state, event) {
    switch (event.type) {
      case 'SegmentCreated':
        return { status: 'active', ...event.data };
      case 'SegmentUpdated': {
        const { name, filter, order } = event.data;
        return {
          ...state,
          ...(name !== undefined && { name }),
          ...(filter !== undefined && { filter }),
          ...(order !== undefined && { order }),
        };
      }
      case 'SegmentDeleted':
        return { ...state, status: 'deleted' };
    }
  },
};
