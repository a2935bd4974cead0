import { PlatformError } from '../../contracts/errors';
import type { ModuleEvent } from '../../contracts/events/records';
import type { Decider } from '../kit/decider';
import { changedLabels, withLabels } from './labelled';

export interface ModuleState {
  readonly status: 'none' | 'active' | 'deleted';
  readonly moduleId: number;
  readonly spaceId: number;
  readonly name: string;
  readonly description: string | null;
}

export type ModuleCommand =
  | {
      readonly kind: 'CreateModule';
      readonly moduleId: number;
      readonly spaceId: number;
      readonly spaceExists: boolean;
      readonly name: string;
      readonly description: string | null;
    }
  | { readonly kind: 'UpdateModule'; readonly name?: string; readonly description?: string | null }
  | { readonly kind: 'DeleteModule' };

export const moduleDecider: Decider<ModuleState, ModuleCommand, ModuleEvent> = {
  initialState: { status: 'none', moduleId: 0, spaceId: 0, name: '', description: null },

  decide(command, state) {
    if (command.kind === 'CreateModule') {
      if (state.status !== 'none')
        throw new PlatformError('conflict', `module ${state.moduleId} already exists`);
      if (!command.spaceExists)
        throw new PlatformError('validation_failed', `space ${command.spaceId} does not exist`, [
          { path: 'spaceId', message: 'no such space' },
        ]);
      return [
        {
          type: 'ModuleCreated',
          data: {
            moduleId: command.moduleId,
            spaceId: command.spaceId,
            name: command.name,
            description: command.description,
          },
        },
      ];
    }
    if (state.status !== 'active') throw new PlatformError('not_found', 'module not found');
    if (command.kind === 'DeleteModule')
      return [{ type: 'ModuleDeleted', data: { moduleId: state.moduleId, spaceId: state.spaceId } }];
    const changes = changedLabels(state, command);
    return changes === null
      ? []
      : [{ type: 'ModuleUpdated', data: { moduleId: state.moduleId, ...changes } }];
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ModuleCreated':
        return {
          status: 'active',
          moduleId: event.data.moduleId,
          spaceId: event.data.spaceId,
          name: event.data.name,
          description: event.data.description,
        };
      case 'ModuleUpdated':
        return withLabels(state, event.data);
      case 'ModuleDeleted':
        return { ...state, status: 'deleted' };
    }
  },
};
