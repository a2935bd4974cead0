import type { CommandDeps } from '../deps';
import type { FeatureApi } from '../kit/feature';
import { addSubscriptionRoutes } from './routes/subscriptions';

/** Outgoing subscriptions: their settings and signing secrets (delivery is the integrator's). */
export function subscriptionsApi(deps: CommandDeps): FeatureApi {
  return (router) => addSubscriptionRoutes(router, deps);
}
