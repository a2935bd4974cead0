import type { Router } from 'express';
import { grantIdParams, revokeOAuthGrant } from '../../../contracts/api/oauth';
import { PlatformError } from '../../../contracts/errors';
import { mayManageOwnGrants } from '../../../contracts/oauth';
import { validate } from '../../../contracts/validation';
import { principalOf } from '../../../infra/http/context';
import { mount } from '../../../infra/http/operations';
import type { CommandDeps } from '../../deps';
import { commandContext, sendResult } from '../../kit/route-context';
import { revokeOwnGrant } from '../commands';

/**
 * `DELETE /auth/oauth/grant/{grantId}` (OA-33): users revoke a grant they gave (see `GET /auth/oauth/grant`);
 * its refresh and access tokens stop working on the next request. Another user's grant is a 404.
 */
export function addGrantEndpoints(router: Router, deps: CommandDeps): void {
  mount(router, revokeOAuthGrant, async (req, res) => {
    const principal = principalOf(req);
    if (!mayManageOwnGrants(principal, 'delete'))
      throw new PlatformError('forbidden', 'this credential may not revoke the OAuth grants of its user');
    const { grantId } = validate(grantIdParams, req.params, 'path');
    const result = await revokeOwnGrant(
      deps,
      principal,
      grantId,
      commandContext(req, principal, deps.newCommandId()),
    );
    sendResult(res, 200, result, { grantId, revoked: true });
  });
}
