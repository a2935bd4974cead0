import type { Router } from 'express';
import {
  provisionSystem as provisionSystemOperation,
  provisionSystemBody,
} from '../../../contracts/api/auth';
import { mount } from '../../../infra/http/operations';
import { isAdmin } from '../../../contracts/auth';
import { PlatformError } from '../../../contracts/errors';
import { validate } from '../../../contracts/validation';
import { OneAtATime } from '../../kit/one-at-a-time';
import type { CommandDeps } from '../../deps';
import { authorize, callerOf, sendResult } from '../../kit/route-context';
import { provisionSystem } from '../commands';

/**
 * `POST /system`: an administrator of the operator system sets up another system with its first admin,
 * whose API token is in the answer (this once). Users of one system never see another.
 */
export function addSystemRoutes(router: Router, deps: CommandDeps): void {
  // Set-ups of one system in this process run one after the other, so the second finds the first's admin.
  const setUps = new OneAtATime();
  mount(router, provisionSystemOperation, async (req, res) => {
    const principal = authorize(req, 'system', 'create');
    if (principal.tenant !== deps.operatorTenant || !isAdmin(principal))
      throw new PlatformError('forbidden', 'only administrators of the operator system set up systems');
    const body = validate(provisionSystemBody, req.body, 'body');
    await setUps.run(body.system, async () => {
      const { result, token } = await provisionSystem(deps, callerOf(req, principal), body);
      res.setHeader('Cache-Control', 'no-store');
      sendResult(res, 201, result, {
        system: body.system,
        adminUserId: 1,
        adminEmail: body.adminEmail,
        token,
      });
    });
  });
}
