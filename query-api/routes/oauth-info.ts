import { Router } from 'express';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import { scopeTokens } from '../../contracts/oauth';
import { contextOf } from '../../infra/http/context';
import { issuerOf } from '../../infra/http/issuer';
import type { AccessTokens } from '../../infra/secrets/access-tokens';
import type { EntityReadDeps } from './entities';

export interface OAuthInfoDeps extends EntityReadDeps {
  readonly accessTokens: AccessTokens;
}

/** `GET /auth/oauth/token-info?token=`: the spec's token check, `{client_id, scope: [...], exp}`. */
export function addOAuthInfoRoutes(router: Router, deps: OAuthInfoDeps): void {
  router.get('/auth/oauth/token-info', async (req, res) => {
    const { tenant } = contextOf(req);
    const token = typeof req.query.token === 'string' ? req.query.token : undefined;
    const claims = token === undefined ? null : deps.accessTokens.verify(token);
    const grant =
      claims && claims.tenant === tenant
        ? await deps.readModels.get(tenant, READ_MODELS.oauthGrants, documentId(tenant, claims.grantId))
        : null;
    const client = claims
      ? await deps.readModels.get(tenant, READ_MODELS.oauthClients, documentId(tenant, claims.clientId))
      : null;
    res.setHeader('Cache-Control', 'no-store');
    if (!claims || grant?.status !== 'active' || !client) {
      res
        .status(400)
        .json({ error: 'invalid_token', error_description: 'the token is invalid, expired or revoked' });
      return;
    }
    res.status(200).json({ client_id: claims.clientId, scope: scopeTokens(claims.scope), exp: claims.exp });
  });
}

/** `/.well-known/oauth-authorization-server` (RFC 8414), for clients that discover the endpoints. */
export function oauthMetadataRouter(): Router {
  const router = Router();
  router.get('/oauth-authorization-server', (req, res) => {
    const issuer = issuerOf(req);
    res.json({
      issuer,
      authorization_endpoint: `${issuer}/auth/oauth/authorize`,
      token_endpoint: `${issuer}/auth/oauth/token`,
      revocation_endpoint: `${issuer}/auth/oauth/revoke`,
      introspection_endpoint: `${issuer}/auth/oauth/introspect`,
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
