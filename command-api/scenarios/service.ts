import type { CommandDeps } from '../deps';
import type { FeatureApi } from '../kit/feature';
import { addScenarioRoutes } from './routes/scenarios';

/** Scenarios: their definitions, runs and run controls. */
export function scenariosApi(deps: CommandDeps): FeatureApi {
  return (router) => addScenarioRoutes(router, deps);
}
