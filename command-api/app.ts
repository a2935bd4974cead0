import { Router } from 'express';
import type { CommandDeps } from './deps';
import { RECORD_COMMENT_ROUTES } from '../contracts/api/removed';
import { mountRemoved } from '../infra/http/operations';
import { addBulkRecordRoutes } from './routes/bulk';
import { catalogueResources } from './routes/catalogue-entities';
import { addFieldRoutes } from './routes/fields';
import { addFileRoutes } from './routes/files';
import { addTokenRoutes } from './routes/tokens';
import { addUserRoutes } from './routes/users';
import { addSystemRoutes } from './routes/systems';
import { addSessionRoutes } from './routes/sessions';
import { addTwoFactorRoutes } from './routes/two-factor';
import { addTokenPriorityRoute } from './routes/token-priority';
import { addOAuthClientRoutes } from './routes/oauth-clients';
import { addOAuthGrantRoutes, addOAuthRoutes } from './routes/oauth';
import { addSocialLoginRoutes } from './routes/social-login';
import { addLabelRoutes, labelResource } from './routes/labels';
import { addRemoteLinkRoutes } from './routes/remote-links';
import { segmentResource } from './routes/segments';
import { addButtonRoute, addRecordRestoreRoute, recordResource } from './routes/records';
import { addResourceRoutes } from './routes/resource';
import { moduleResource, spaceResource } from './routes/structure';

/** The command API: every write of the platform. Routes turn requests into commands; deciders rule. */
export function createCommandRouter(deps: CommandDeps): Router {
  const router = Router();
  addSystemRoutes(router, deps);
  addSessionRoutes(router, deps);
  addTokenPriorityRoute(router, deps);
  addOAuthClientRoutes(router, deps);
  addOAuthRoutes(router, deps);
  addOAuthGrantRoutes(router, deps);
  addSocialLoginRoutes(router, deps, deps.socialLogin);
  addUserRoutes(router, deps);
  addTwoFactorRoutes(router, deps);
  addTokenRoutes(router, deps);
  addResourceRoutes(router, deps, spaceResource(deps));
  addResourceRoutes(router, deps, moduleResource(deps));
  addFieldRoutes(router, deps);
  // Before the record routes: `bulk` is not a record id.
  addBulkRecordRoutes(router, deps);
  addRemoteLinkRoutes(router, deps);
  addResourceRoutes(router, deps, recordResource(deps.handler));
  addRecordRestoreRoute(router, deps);
  addButtonRoute(router, deps);
  addFileRoutes(router, deps);
  for (const removed of RECORD_COMMENT_ROUTES) if (removed.method !== 'get') mountRemoved(router, removed);
  addResourceRoutes(router, deps, labelResource());
  addResourceRoutes(router, deps, segmentResource(deps));
  const catalogue = catalogueResources(deps);
  addResourceRoutes(router, deps, catalogue.category);
  addResourceRoutes(router, deps, catalogue.team);
  addResourceRoutes(router, deps, catalogue.menu);
  addResourceRoutes(router, deps, catalogue.fieldGroup);
  addLabelRoutes(router, deps);
  return router;
}
