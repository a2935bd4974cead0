import type { Request, Router } from 'express';
import { revokeOAuthToken } from '../../../contracts/api/oauth';
import { contextOf } from '../../../infra/http/context';
import { mount } from '../../../infra/http/operations';
import { sendJson } from '../../../infra/http/respond';
import type { CommandDeps } from '../../deps';
import { commandContext } from '../../kit/route-context';
import { clientPrincipal, revokeGrantOfClient } from '../commands';
import { grantOfToken } from '../grants/tokens';
import { param } from '../parameters';
import type { AuthenticatedClient } from './client-authentication';
import { oauthEndpoint } from './oauth-answers';

/** The revocation endpoint (RFC 7009): answers the same whether or not the token was one of the client's. */
export function addRevokeEndpoint(
  router: Router,
  deps: CommandDeps,
  authenticateClient: (req: Request) => Promise<AuthenticatedClient>,
): void {
  mount(
    router,
    revokeOAuthToken,
    oauthEndpoint(async (req, res) => {
      const { client } = await authenticateClient(req);
      const tenant = contextOf(req).tenant;
      const grantId = grantOfToken(deps.accessTokens, param(req.body, 'token'));
      if (grantId)
        await revokeGrantOfClient(
          deps,
          tenant,
          client.clientId,
          grantId,
          commandContext(req, clientPrincipal(tenant, client.clientId), deps.newCommandId()),
        );
      res.setHeader('Cache-Control', 'no-store');
      sendJson(res, 200, { revoked: true });
    }),
  );
}
