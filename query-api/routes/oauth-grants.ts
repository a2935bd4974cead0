import type { Router } from 'express';
import { PlatformError } from '../../contracts/errors';
import { mayManageOwnGrants } from '../../contracts/oauth';
import { equals } from '../../languages/filter/store-query';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import { principalOf } from '../../infra/http/context';
import { sendJson } from '../../infra/http/respond';
import { listOAuthGrants } from '../../contracts/api/oauth';
import { mount } from '../../infra/http/operations';
import { awaitConsistency } from '../consistency';
import type { EntityReadDeps } from './entities';

/** More grants than anyone gives by hand; the newest first. */
const MAX_GRANTS = 1000;

/**
 * `GET /auth/oauth/grant` (OA-33): the OAuth grants the calling user gave that still work, per client: which
 * client, what scope, since and until when. Never a hash of a code or token.
 */
export function addOAuthGrantReadRoutes(router: Router, deps: EntityReadDeps): void {
  mount(router, listOAuthGrants, async (req, res) => {
    const principal = principalOf(req);
    if (!mayManageOwnGrants(principal, 'read'))
      throw new PlatformError('forbidden', 'this credential may not read the OAuth grants of its user');
    const { tenant } = principal;
    await awaitConsistency(req, deps.consistency, ['oauth']);
    const { items } = await deps.readModels.find(tenant, READ_MODELS.oauthGrants, {
      filter: {
        kind: 'and',
        children: [equals('userId', Number(principal.userId)), equals('status', 'active')],
      },
      sort: [{ path: 'createdAt', direction: 'desc' }],
      limit: MAX_GRANTS,
      withTotal: false,
    });
    const now = new Date().toISOString();
    const clientNames = new Map<string, string | null>();
    const grants = [];
    for (const grant of items) {
      if (typeof grant.expiresAt !== 'string' || grant.expiresAt <= now) continue;
      const clientId = String(grant.clientId);
      if (!clientNames.has(clientId)) {
        const client = await deps.readModels.get(
          tenant,
          READ_MODELS.oauthClients,
          documentId(tenant, clientId),
        );
        clientNames.set(clientId, typeof client?.clientName === 'string' ? client.clientName : null);
      }
      const clientName = clientNames.get(clientId);
      // A deleted client's tokens work no more: nothing left to revoke.
      if (clientName === null || clientName === undefined) continue;
      grants.push({
        grantId: grant.grantId,
        clientId,
        clientName,
        scope: grant.scope,
        createdAt: grant.createdAt,
        expiresAt: grant.expiresAt,
      });
    }
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, 200, { items: grants });
  });
}
