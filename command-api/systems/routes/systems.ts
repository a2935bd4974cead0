import type { Router } from 'express';
import { provisionSystem, provisionSystemBody } from '../../../contracts/api/auth';
import { mount } from '../../../infra/http/operations';
import { isAdmin } from '../../../contracts/auth';
import { PlatformError } from '../../../contracts/errors';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import { ensureBootstrapAdmin } from '../../identity/bootstrap';
import { OneAtATime } from '../../kit/one-at-a-time';
import type { CommandDeps } from '../../deps';
import { tenantDecider } from '../domain/tenant';
import { userDecider } from '../../identity/domain/user';
import { authorize, commandContext, sendResult } from '../../kit/route-context';

/**
 * `POST /system`: an administrator of the operator system sets up another system with its first admin,
 * whose API token is in the answer (this once). Users of one system never see another.
 */
export function addSystemRoutes(router: Router, deps: CommandDeps): void {
  // Set-ups of one system in this process run one after the other, so the second finds the first's admin.
  const setUps = new OneAtATime();
  mount(router, provisionSystem, async (req, res) => {
    const principal = authorize(req, 'system', 'create');
    if (principal.tenant !== deps.operatorTenant || !isAdmin(principal))
      throw new PlatformError('forbidden', 'only administrators of the operator system set up systems');
    const body = validate(provisionSystemBody, req.body, 'body');
    await setUps.run(body.system, async () => {
      const firstUser = await deps.handler.load(streamName('user', body.system, 1), userDecider);
      const result = await deps.handler.handle(
        streamName('tenant', principal.tenant, body.system),
        tenantDecider,
        {
          kind: 'ProvisionTenant',
          tenant: body.system,
          adminEmail: body.adminEmail,
          hasUsers: firstUser.state.status !== 'none',
        },
        commandContext(req, principal, deps.newCommandId()),
      );
      const { generatedToken } = await ensureBootstrapAdmin(deps.handler, deps.ids, {
        tenant: body.system,
        email: body.adminEmail,
        ...(body.adminPassword !== undefined && { password: body.adminPassword }),
      });
      // A set-up running at the same time got there first: it has the token.
      if (generatedToken === undefined)
        throw new PlatformError('conflict', `the system ${body.system} exists already`);
      res.setHeader('Cache-Control', 'no-store');
      sendResult(res, 201, result, {
        system: body.system,
        adminUserId: 1,
        adminEmail: body.adminEmail,
        token: generatedToken,
      });
    });
  });
}
