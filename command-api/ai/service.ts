import type { CommandDeps } from '../deps';
import type { FeatureApi } from '../kit/feature';
import { addResourceRoutes } from '../kit/resource-routes';
import { addAiBalanceRoutes } from './routes/ai-balance';
import { aiConfigurationResources } from './routes/ai-configurations';
import { addAiExecuteRoutes } from './routes/ai-execute';
import { addAiGenerationRoutes } from './routes/ai-generation';
import { addSystemAiRoutes } from './routes/system-ai';

/** AI features: a system's model, column transforms and validations, their jobs, generations and balance. */
export function aiApi(deps: CommandDeps): FeatureApi {
  return (router) => {
    addSystemAiRoutes(router, deps, deps.ai.systems, deps.ai.deployment);
    const ai = aiConfigurationResources(deps.handler, deps.hooks.now);
    addResourceRoutes(router, deps, ai.transform);
    addResourceRoutes(router, deps, ai.validation);
    addResourceRoutes(router, deps, ai.validationResult);
    addAiBalanceRoutes(router, deps);
    addAiExecuteRoutes(router, deps, deps.ai.executeWaitMs);
    addAiGenerationRoutes(router, deps);
  };
}
