import type { CommandDeps } from '../deps';
import type { FeatureApi } from '../kit/feature';
import { addResourceRoutes } from '../kit/resource-routes';
import { dataStructureResource } from './routes/data-structures';
import { addFieldRoutes } from './routes/fields';
import { moduleResource, spaceResource } from './routes/structure';

/** Spaces, modules, their fields, and data structures. */
export function structureApi(deps: CommandDeps): FeatureApi {
  return (router) => {
    addResourceRoutes(router, deps, spaceResource(deps));
    addResourceRoutes(router, deps, moduleResource(deps));
    addFieldRoutes(router, deps);
    addResourceRoutes(router, deps, dataStructureResource());
  };
}
