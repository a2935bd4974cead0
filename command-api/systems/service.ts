import type { CommandDeps } from '../deps';
import type { FeatureApi } from '../kit/feature';
import { addDeadLetterRoutes } from './routes/dead-letters';
import { addSystemRoutes } from './routes/systems';

/** Systems (tenants) and the operator's tools: provisioning, dead letters. */
export function systemsApi(deps: CommandDeps): FeatureApi {
  return (router) => {
    addSystemRoutes(router, deps);
    addDeadLetterRoutes(router, deps, deps.deadLetters);
  };
}
