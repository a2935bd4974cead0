import { Router } from 'express';
import type { CommandDeps } from './deps';
import { recordResource } from './routes/records';
import { resourceRoutes } from './routes/resource';
import { moduleResource, spaceResource } from './routes/structure';

/** The command API: every write of the platform. Routes turn requests into commands; deciders rule. */
export function createCommandRouter(deps: CommandDeps): Router {
  const router = Router();
  router.use(resourceRoutes(deps, spaceResource()));
  router.use(resourceRoutes(deps, moduleResource(deps)));
  router.use(resourceRoutes(deps, recordResource(deps)));
  return router;
}
