import type { CommandDeps } from '../deps';
import type { FeatureApi } from '../kit/feature';
import { addOAuthClientRoutes } from './routes/oauth-clients';
import { addOAuthGrantRoutes, addOAuthRoutes } from './routes/oauth';

/** The OAuth 2.0 authorization server: clients, the authorize and token endpoints, grants. */
export function oauthApi(deps: CommandDeps): FeatureApi {
  return (router) => {
    addOAuthClientRoutes(router, deps);
    addOAuthRoutes(router, deps);
    addOAuthGrantRoutes(router, deps);
  };
}
