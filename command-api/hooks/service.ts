import type { CommandDeps } from '../deps';
import type { FeatureApi } from '../kit/feature';
import { addWebhookRoutes } from './routes/webhooks';

/** Webhooks and mailhooks: their settings (the receivers are mounted on the hook host by the composition root). */
export function hooksApi(deps: CommandDeps): FeatureApi {
  return (router) => addWebhookRoutes(router, deps);
}
