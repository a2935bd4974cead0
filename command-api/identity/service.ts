import type { CommandDeps } from '../deps';
import type { FeatureApi } from '../kit/feature';
import { addSessionRoutes } from './routes/sessions';
import { addSocialLoginRoutes } from './routes/social-login';
import { addTokenPriorityRoute } from './routes/token-priority';
import { addTokenRoutes } from './routes/tokens';
import { addTwoFactorRoutes } from './routes/two-factor';
import { addUserRoutes } from './routes/users';

/** Users, sessions, two-factor, private API tokens and social sign-in. */
export function identityApi(deps: CommandDeps): FeatureApi {
  return (router) => {
    addSessionRoutes(router, deps);
    addTokenPriorityRoute(router, deps);
    addSocialLoginRoutes(router, deps, deps.socialLogin);
    addUserRoutes(router, deps);
    addTwoFactorRoutes(router, deps);
    addTokenRoutes(router, deps);
  };
}
