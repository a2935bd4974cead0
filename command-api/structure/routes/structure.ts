import {
  createModuleBody,
  createSpaceBody,
  MODULE_OPERATIONS,
  SPACE_OPERATIONS,
  updateModuleBody,
  updateSpaceBody,
} from '../../../contracts/api/structure';
import type { ModuleEvent, SpaceEvent } from '../../../contracts/events/records';
import type { CommandDeps } from '../../deps';
import type { Resource } from '../../kit/resource-routes';
import {
  moduleCommandSpec,
  spaceCommandSpec,
  type CreateModule,
  type CreateSpace,
  type UpdateModule,
  type UpdateSpace,
} from '../commands';
import type { ModuleCommand, ModuleState } from '../domain/module';
import type { SpaceCommand, SpaceState } from '../domain/space';

/** Spaces and modules: the structure records live in. */
export function spaceResource(
  deps: CommandDeps,
): Resource<SpaceState, SpaceCommand, SpaceEvent, CreateSpace, UpdateSpace> {
  return {
    ...spaceCommandSpec(deps),
    idParam: 'spaceId',
    operations: SPACE_OPERATIONS,
    createBody: createSpaceBody,
    updateBody: updateSpaceBody,
  };
}

export function moduleResource(
  deps: CommandDeps,
): Resource<ModuleState, ModuleCommand, ModuleEvent, CreateModule, UpdateModule> {
  return {
    ...moduleCommandSpec(deps),
    idParam: 'moduleId',
    operations: MODULE_OPERATIONS,
    createBody: createModuleBody,
    updateBody: updateModuleBody,
  };
}
