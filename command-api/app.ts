import { Router } from 'express';
import type { CommandDeps } from './deps';
import { recordRoutes } from './routes/records';
import { structureRoutes } from './routes/structure';

/** The command API: every write of the platform. Routes turn requests into commands; deciders rule. */
export function createCommandRouter(deps: CommandDeps): Router {
  const router = Router();
  router.use(structureRoutes(deps));
  router.use(recordRoutes(deps));
  return router;
}
