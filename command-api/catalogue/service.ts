import type { CommandDeps } from '../deps';
import type { FeatureApi } from '../kit/feature';
import { addResourceRoutes } from '../kit/resource-routes';
import { catalogueResources } from './routes/catalogue-entities';

/** The catalogue: categories, teams, menus and field groups. */
export function catalogueApi(deps: CommandDeps): FeatureApi {
  return (router) => {
    const catalogue = catalogueResources(deps);
    addResourceRoutes(router, deps, catalogue.category);
    addResourceRoutes(router, deps, catalogue.team);
    addResourceRoutes(router, deps, catalogue.menu);
    addResourceRoutes(router, deps, catalogue.fieldGroup);
  };
}
