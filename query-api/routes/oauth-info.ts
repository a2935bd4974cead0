import { Router } from 'express';
import { getAuthorizationServerMetadata, getTokenInfo, getUserinfo } from '../../contracts/api/oauth';
import { mount } from '../../infra/http/operations';
import { sendJson } from '../../infra/http/respond';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import { scopeTokens } from '../../contracts/oauth';
import { PlatformError } from '../../contracts/errors';
import { contextOf, principalOf } from '../../infra/http/context';
import { issuerOf } from '../../infra/http/issuer';
import type { AccessTokens } from '../../infra/secrets/access-tokens';
import type { EntityReadDeps } from './entities';
import { awaitConsistency, CREDENTIAL_PROJECTIONS } from '../consistency';

export interface OAuthInfoDeps extends EntityReadDeps {
  readonly accessTokens: AccessTokens;
}

/** `GET /auth/oauth/token-info?token=`: the spec's token check, `{client_id, scope: [...], exp}`. */
export function addOAuthInfoRoutes(router: Router, deps: OAuthInfoDeps): void {
  mount(router, getTokenInfo, async (req, res) => {
    const { tenant } = contextOf(req);
    const token = typeof req.query.token === 'string' ? req.query.token : undefined;
    const claims = token === undefined ? null : deps.accessTokens.verify(token);
    // A token issued, a grant revoked or a client deleted a moment ago, by any process, counts already.
    if (claims) await awaitConsistency(req, deps.consistency, CREDENTIAL_PROJECTIONS);
    const grant =
      claims && claims.tenant === tenant
        ? await deps.readModels.get(tenant, READ_MODELS.oauthGrants, documentId(tenant, claims.grantId))
        : null;
    const client = claims
      ? await deps.readModels.get(tenant, READ_MODELS.oauthClients, documentId(tenant, claims.clientId))
      : null;
    res.setHeader('Cache-Control', 'no-store');
    if (!claims || grant?.status !== 'active' || !client) {
      sendJson(res, 400, {
        error: 'invalid_token',
        error_description: 'the token is invalid, expired or revoked',
      });
      return;
    }
    sendJson(res, 200, { client_id: claims.clientId, scope: scopeTokens(claims.scope), exp: claims.exp });
  });
}

/**
 * `GET /auth/oauth/userinfo` (OpenID Connect userinfo, for clients that sign users in with this platform):
 * who the access token's user is. Users' addresses are set by administrators, so they count as verified.
 */
export function addUserinfoRoute(router: Router, deps: OAuthInfoDeps): void {
  mount(router, getUserinfo, async (req, res) => {
    const principal = principalOf(req);
    if (principal.credential.kind !== 'oauth-access-token')
      throw new PlatformError('unauthorized', 'userinfo answers to an OAuth access token');
    await awaitConsistency(req, deps.consistency, ['identity']);
    const user = await deps.readModels.get(
      principal.tenant,
      READ_MODELS.users,
      documentId(principal.tenant, Number(principal.userId)),
    );
    if (!user) throw new PlatformError('not_found', 'user not found');
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, 200, { sub: principal.userId, email: user.email, email_verified: true, name: user.name });
  });
}

/** `/.well-known/oauth-authorization-server` (RFC 8414), for clients that discover the endpoints. */
export function oauthMetadataRouter(): Router {
  const router = Router();
  mount(router, getAuthorizationServerMetadata, (req, res) => {
    const issuer = issuerOf(req);
    sendJson(res, 200, {
      issuer,
      authorization_endpoint: `${issuer}/auth/oauth/authorize`,
      token_endpoint: `${issuer}/auth/oauth/token`,
      revocation_endpoint: `${issuer}/auth/oauth/revoke`,
      introspection_endpoint: `${issuer}/auth/oauth/introspect`,
      userinfo_endpoint: `${issuer}/auth/oauth/userinfo`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      authorization_response_iss_parameter_supported: true,
    });
  });
  return router;
}
