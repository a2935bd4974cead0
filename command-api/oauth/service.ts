import type { CommandDeps } from '../deps';
import type { FeatureApi } from '../kit/feature';
import { addAuthorizeEndpoint } from './endpoints/authorize';
import { clientAuthentication } from './endpoints/client-authentication';
import { addOAuthClientRoutes } from './endpoints/clients';
import { addGrantEndpoints } from './endpoints/grants';
import { addIntrospectEndpoint } from './endpoints/introspect';
import { addRevokeEndpoint } from './endpoints/revoke';
import { addTokenEndpoints } from './endpoints/token';

/** The OAuth 2.0 authorization server: clients, the authorize and token endpoints, grants. */
export function oauthApi(deps: CommandDeps): FeatureApi {
  return (router) => {
    const authenticateClient = clientAuthentication(deps);
    addOAuthClientRoutes(router, deps);
    addAuthorizeEndpoint(router, deps);
    addTokenEndpoints(router, deps, authenticateClient);
    addRevokeEndpoint(router, deps, authenticateClient);
    addIntrospectEndpoint(router, deps, authenticateClient);
    addGrantEndpoints(router, deps);
  };
}
