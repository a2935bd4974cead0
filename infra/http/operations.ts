import type { RequestHandler, Router } from 'express';
import { PlatformError } from '../../contracts/errors';
import { expressPath, type Operation } from '../../contracts/api/operation';
import type { RemovedRoute } from '../../contracts/api/removed';

/** Where the API's operations are served; `root` operations are served at the host's root. */
export const API_BASE = '/api';

/** What express routers and apps have in common for adding a route. */
type Routes = Pick<Router, 'get' | 'post' | 'put' | 'patch' | 'delete'>;

/**
 * Mounts `handlers` as the route of `op`: the one way a route comes to exist, so each has its contract
 * (test/unit/api-description.test.ts walks the app's routes against the operation table both ways).
 */
export function mount(routes: Routes, op: Operation, ...handlers: RequestHandler[]): void {
  routes[op.method](expressPath(op.path), ...handlers);
}

/** Mounts a route the API removed: 410 Gone, whoever asks. */
export function mountRemoved(routes: Routes, removed: RemovedRoute): void {
  routes[removed.method](expressPath(removed.path), (req) => {
    throw new PlatformError(
      'gone',
      `${req.method} ${req.baseUrl}${req.path}: ${removed.what} were removed from the API in ${removed.removedIn}`,
    );
  });
}
