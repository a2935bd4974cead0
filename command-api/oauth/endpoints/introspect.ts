import type { Request, Router } from 'express';
import { introspectToken } from '../../../contracts/api/oauth';
import { OAuthError } from '../../../contracts/oauth';
import { contextOf } from '../../../infra/http/context';
import { mount } from '../../../infra/http/operations';
import { sendJson } from '../../../infra/http/respond';
import type { CommandDeps } from '../../deps';
import { introspection, introspectionWait } from '../commands';
import { param } from '../parameters';
import type { AuthenticatedClient } from './client-authentication';
import { oauthEndpoint } from './oauth-answers';

/** The introspection endpoint (RFC 7662), limited per client per minute (OA-34). */
export function addIntrospectEndpoint(
  router: Router,
  deps: CommandDeps,
  authenticateClient: (req: Request) => Promise<AuthenticatedClient>,
): void {
  mount(
    router,
    introspectToken,
    oauthEndpoint(async (req, res) => {
      const { client } = await authenticateClient(req);
      const tenant = contextOf(req).tenant;
      const retryAfter = await introspectionWait(deps, tenant, client.clientId);
      if (retryAfter > 0) {
        res.setHeader('Retry-After', String(retryAfter));
        throw new OAuthError(
          'temporarily_unavailable',
          `more than ${deps.introspectionsPerMinute} introspections a minute for this client: retry in ${retryAfter} s`,
          429,
        );
      }
      const answer = await introspection(deps, tenant, param(req.body, 'token'));
      res.setHeader('Cache-Control', 'no-store');
      sendJson(res, 200, answer);
    }),
  );
}
