import type { Request, Response, Router } from 'express';
import { exchangeToken, renewToken } from '../../../contracts/api/oauth';
import { OAuthError, type GrantType } from '../../../contracts/oauth';
import { contextOf } from '../../../infra/http/context';
import { issuerOf } from '../../../infra/http/issuer';
import { mount } from '../../../infra/http/operations';
import { sendJson } from '../../../infra/http/respond';
import type { CommandDeps } from '../../deps';
import { commandContext } from '../../kit/route-context';
import { clientPrincipal } from '../commands';
import { redeemAuthorizationCode } from '../grants/authorization-code';
import { refreshGrant } from '../grants/refresh-token';
import type { GrantHandler } from '../grants/tokens';
import { param } from '../parameters';
import type { AuthenticatedClient } from './client-authentication';
import { noStore, oauthEndpoint } from './oauth-answers';

/** The grant types the token endpoint serves, by `grant_type`. */
const GRANTS: ReadonlyMap<string, { readonly type: GrantType; readonly handler: GrantHandler }> = new Map(
  [
    { type: 'authorization_code' as const, handler: redeemAuthorizationCode },
    { type: 'refresh_token' as const, handler: refreshGrant },
  ].map((grant) => [grant.type, grant]),
);

/** The token endpoint (`POST /auth/oauth/token`) and the spec's renew (`POST /auth/oauth/renew`). */
export function addTokenEndpoints(
  router: Router,
  deps: CommandDeps,
  authenticateClient: (req: Request) => Promise<AuthenticatedClient>,
): void {
  const exchange = oauthEndpoint(async (req: Request, res: Response) => {
    const { client } = await authenticateClient(req);
    const tenant = contextOf(req).tenant;
    const grantType = GRANTS.get(param(req.body, 'grant_type') ?? '');
    if (grantType === undefined)
      throw new OAuthError(
        'unsupported_grant_type',
        'grant_type must be authorization_code or refresh_token',
      );
    if (!client.grantTypes.includes(grantType.type))
      throw new OAuthError('unauthorized_client', `this client may not use the ${grantType.type} grant`);
    const { grantId, refreshToken, grant } = await grantType.handler(
      deps,
      client.clientId,
      req.body,
      commandContext(req, clientPrincipal(tenant, client.clientId), deps.newCommandId()),
    );
    const accessToken = deps.accessTokens.sign(
      { userId: grant.code!.userId, tenant, clientId: client.clientId, grantId, scope: grant.scope },
      issuerOf(req),
    );
    noStore(res);
    sendJson(res, 200, {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: deps.accessTokens.lifetimeSeconds,
      refresh_token: refreshToken,
      scope: grant.scope,
    });
  });
  mount(router, exchangeToken, exchange);
  // The spec's renew is the refresh_token grant by another name (OA-23).
  mount(
    router,
    renewToken,
    async (req, _res, next) => {
      req.body = { grant_type: 'refresh_token', ...(req.body as Record<string, unknown>) };
      next();
    },
    exchange,
  );
}
