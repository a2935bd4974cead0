import type { Router } from 'express';

/**
 * One feature of the command API, ready to serve: it mounts its routes on the command router (in its own order,
 * literal paths before the parameterised ones they would match). Each feature's `service.ts` makes one from the
 * command API's dependencies, and `command-api/app.ts` lists them.
 */
export type FeatureApi = (router: Router) => void;
