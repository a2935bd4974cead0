import { Router } from 'express';
import type { CommandDeps } from './deps';
import type { FeatureApi } from './kit/feature';
import { aiApi } from './ai/service';
import { catalogueApi } from './catalogue/service';
import { hooksApi } from './hooks/service';
import { identityApi } from './identity/service';
import { oauthApi } from './oauth/service';
import { recordsApi } from './records/service';
import { scenariosApi } from './scenarios/service';
import { structureApi } from './structure/service';
import { subscriptionsApi } from './subscriptions/service';
import { systemsApi } from './systems/service';

/** The features of the command API, in the order they mount their routes. */
const FEATURES: ReadonlyArray<(deps: CommandDeps) => FeatureApi> = [
  systemsApi,
  // Before identity: `/auth/oauth/token` is not a user's `/auth/{userId}/token`.
  oauthApi,
  identityApi,
  structureApi,
  recordsApi,
  catalogueApi,
  hooksApi,
  subscriptionsApi,
  scenariosApi,
  aiApi,
];

/** The command API: every write of the platform. Routes turn requests into commands; deciders rule. */
export function createCommandRouter(deps: CommandDeps): Router {
  const router = Router();
  for (const feature of FEATURES) feature(deps)(router);
  return router;
}
