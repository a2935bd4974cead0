import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { OAuthError, redirectUriMatches, scopeWithin, type GrantType } from '../../contracts/oauth';
import { hashToken } from '../../contracts/secrets';
import { streamName } from '../../contracts/streams';
import type { Principal } from '../../contracts/auth';
import { contextOf, principalOf } from '../../infra/http/context';
import { issuerOf } from '../../infra/http/issuer';
import type { CommandDeps } from '../deps';
import { oauthClientDecider, type OAuthClientState } from '../domain/oauth-client';
import { oauthGrantDecider } from '../domain/oauth-grant';
import { commandContext } from './context';

/** The OAuth endpoints that take form bodies and authenticate clients themselves (see the HTTP kit). */
export const OAUTH_CLIENT_ROUTES = [/^\/auth\/oauth\/(token|renew|revoke|introspect)\/?$/];
/** A GET that writes (it issues a code): routed to the command API. */
export const OAUTH_AUTHORIZE_ROUTE = /^\/auth\/oauth\/authorize\/?$/;

const CODE_LIFETIME_MS = 60_000;
const GRANT_LIFETIME_MS = 30 * 24 * 3_600_000;

/** One query or body parameter: absent, or exactly one string (a repeated parameter is refused). */
function param(source: unknown, name: string): string | undefined {
  const value = (source as Record<string, unknown> | undefined)?.[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string')
    throw new OAuthError('invalid_request', `${name} must be given once, as text`);
  return value;
}

function sendOAuthError(res: Response, error: OAuthError, basicAuth = false): void {
  if (error.status === 401 && basicAuth) res.setHeader('WWW-Authenticate', 'Basic realm="records-platform"');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  res.status(error.status).json({ error: error.code, error_description: error.message });
}

const sha256Equal = (a: string, b: string) => timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));

/** The OAuth 2.0 authorization server: authorize (code + PKCE), token, renew, revoke, introspect. */
export function addOAuthRoutes(router: Router, deps: CommandDeps): void {
  const loadClient = async (tenant: string, clientId: string): Promise<OAuthClientState | null> => {
    if (!/^rpc_[0-9a-f]{24}$/.test(clientId)) return null;
    const { state } = await deps.handler.load(
      streamName('oauthClient', tenant, clientId),
      oauthClientDecider,
    );
    return state.status === 'active' ? state : null;
  };

  /** The calling client (HTTP Basic or `client_id` + `client_secret` in the body; never the query string). */
  const authenticateClient = async (req: Request): Promise<OAuthClientState> => {
    const header = req.headers.authorization;
    let clientId: string | undefined;
    let secret: string | undefined;
    const basic = header !== undefined && /^Basic /i.test(header);
    if (basic) {
      const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) throw new OAuthError('invalid_client', 'malformed Basic credentials');
      try {
        // RFC 6749 §2.3.1: both parts are form-urlencoded before they are joined.
        clientId = decodeURIComponent(decoded.slice(0, colon));
        secret = decodeURIComponent(decoded.slice(colon + 1));
      } catch {
        throw new OAuthError('invalid_client', 'malformed Basic credentials');
      }
    } else {
      clientId = param(req.body, 'client_id');
      secret = param(req.body, 'client_secret');
    }
    const client = clientId === undefined ? null : await loadClient(contextOf(req).tenant, clientId);
    // The hash is compared in constant time; an unknown client costs the same comparison.
    const matches = sha256Equal(hashToken(secret ?? ''), client?.secretHash || '0'.repeat(64));
    if (!client || secret === undefined || !matches)
      throw new OAuthError('invalid_client', 'unknown client or wrong client credentials');
    return client;
  };

  const oauthEndpoint =
    (handler: (req: Request, res: Response) => Promise<void>) => async (req: Request, res: Response) => {
      try {
        await handler(req, res);
      } catch (error) {
        if (!(error instanceof OAuthError)) throw error;
        sendOAuthError(res, error, /^Basic /i.test(req.headers.authorization ?? ''));
      }
    };

  router.get('/auth/oauth/authorize', async (req, res) => {
    // OA-09: never framed, never leaking the code in a Referer.
    res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
    res.setHeader('Referrer-Policy', 'no-referrer');
    const tenant = contextOf(req).tenant;
    let clientId: string | undefined;
    let redirectUri: string | undefined;
    let state: string | undefined;
    try {
      clientId = param(req.query, 'client_id');
      redirectUri = param(req.query, 'redirect_uri');
      state = param(req.query, 'state');
    } catch (error) {
      return sendOAuthError(res, error as OAuthError);
    }
    // Without a known client and one of its redirect URIs there is nowhere safe to send the answer (OA-02).
    const client = clientId === undefined ? null : await loadClient(tenant, clientId);
    if (!client?.client)
      return sendOAuthError(res, new OAuthError('invalid_request', 'unknown or missing client_id'));
    if (
      redirectUri === undefined ||
      !client.client.redirectUris.some((uri) => redirectUriMatches(uri, redirectUri!))
    )
      return sendOAuthError(
        res,
        new OAuthError('invalid_request', 'redirect_uri is missing or not registered for this client'),
      );
    const back = (parameters: Record<string, string | undefined>) => {
      const target = new URL(redirectUri!);
      for (const [name, value] of Object.entries({ ...parameters, state, iss: issuerOf(req) }))
        if (value !== undefined) target.searchParams.append(name, value);
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(302, target.toString());
    };
    try {
      const responseType = param(req.query, 'response_type');
      if (responseType !== 'code')
        throw new OAuthError('unsupported_response_type', 'only response_type=code is supported');
      if (!client.client.grantTypes.includes('authorization_code' satisfies GrantType))
        throw new OAuthError('unauthorized_client', 'this client may not use the authorization code grant');
      const scope = param(req.query, 'scope') ?? client.client.scope;
      if (!scopeWithin(scope, client.client.scope))
        throw new OAuthError('invalid_scope', 'the scope asks for more than the client is registered for');
      const challenge = param(req.query, 'code_challenge');
      const method = param(req.query, 'code_challenge_method');
      if (challenge !== undefined || method !== undefined) {
        if (method !== 'S256') throw new OAuthError('invalid_request', 'code_challenge_method must be S256');
        if (challenge === undefined || !/^[A-Za-z0-9_-]{43}$/.test(challenge))
          throw new OAuthError(
            'invalid_request',
            'code_challenge must be a base64url SHA-256 (43 characters)',
          );
      }
      const principal = principalOf(req);
      const code = randomBytes(32).toString('base64url');
      const codeHash = hashToken(code);
      const grantId = codeHash.slice(0, 32);
      await deps.handler.handle(
        streamName('oauthGrant', tenant, grantId),
        oauthGrantDecider,
        {
          kind: 'IssueCode',
          code: {
            grantId,
            clientId: client.client.clientId,
            userId: Number(principal.userId),
            redirectUri,
            scope,
            codeHash,
            codeChallenge: challenge ?? null,
            codeExpiresAt: new Date(Date.now() + CODE_LIFETIME_MS).toISOString(),
          },
        },
        commandContext(req, principal, deps.newCommandId()),
        { newStream: true },
      );
      back({ code });
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      back({ error: error.code, error_description: error.message });
    }
  });

  const exchange = oauthEndpoint(async (req, res) => {
    const client = await authenticateClient(req);
    const tenant = contextOf(req).tenant;
    const grantType = param(req.body, 'grant_type');
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token')
      throw new OAuthError(
        'unsupported_grant_type',
        'grant_type must be authorization_code or refresh_token',
      );
    if (!client.client!.grantTypes.includes(grantType))
      throw new OAuthError('unauthorized_client', `this client may not use the ${grantType} grant`);
    const now = new Date();
    const refreshSecret = randomBytes(32).toString('base64url');
    let grantId: string;
    let refreshToken: string;
    let result;
    const context = commandContext(
      req,
      clientPrincipal(tenant, client.client!.clientId),
      deps.newCommandId(),
    );
    if (grantType === 'authorization_code') {
      const code = param(req.body, 'code');
      if (code === undefined) throw new OAuthError('invalid_request', 'code is missing');
      grantId = hashToken(code).slice(0, 32);
      refreshToken = `rpr_${grantId}_${refreshSecret}`;
      result = await deps.handler.handle(
        streamName('oauthGrant', tenant, grantId),
        oauthGrantDecider,
        {
          kind: 'RedeemCode',
          clientId: client.client!.clientId,
          redirectUri: param(req.body, 'redirect_uri'),
          codeVerifier: param(req.body, 'code_verifier'),
          refreshHash: hashToken(refreshToken),
          now: now.toISOString(),
          expiresAt: new Date(now.getTime() + GRANT_LIFETIME_MS).toISOString(),
        },
        context,
      );
      if (result.state.status === 'revoked')
        throw new OAuthError(
          'invalid_grant',
          'the code was used already: every token issued from it is revoked',
        );
    } else {
      const presented = param(req.body, 'refresh_token');
      const match = presented === undefined ? null : /^rpr_([0-9a-f]{32})_[A-Za-z0-9_-]{43}$/.exec(presented);
      if (!presented || !match) throw new OAuthError('invalid_grant', 'the refresh token is not valid');
      grantId = match[1]!;
      refreshToken = `rpr_${grantId}_${refreshSecret}`;
      result = await deps.handler.handle(
        streamName('oauthGrant', tenant, grantId),
        oauthGrantDecider,
        {
          kind: 'RefreshGrant',
          clientId: client.client!.clientId,
          refreshHash: hashToken(presented),
          newRefreshHash: hashToken(refreshToken),
          scope: param(req.body, 'scope'),
          now: now.toISOString(),
        },
        context,
      );
      if (result.state.status === 'revoked')
        throw new OAuthError(
          'invalid_grant',
          'the refresh token was used already: the whole grant is revoked',
        );
    }
    const grant = result.state;
    const accessToken = deps.accessTokens.sign(
      { userId: grant.code!.userId, tenant, clientId: client.client!.clientId, grantId, scope: grant.scope },
      issuerOf(req),
    );
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Pragma', 'no-cache');
    res.status(200).json({
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: deps.accessTokens.lifetimeSeconds,
      refresh_token: refreshToken,
      scope: grant.scope,
    });
  });
  router.post('/auth/oauth/token', exchange);
  // The spec's renew is the refresh_token grant by another name (OA-23).
  router.post(
    '/auth/oauth/renew',
    async (req, _res, next) => {
      req.body = { grant_type: 'refresh_token', ...(req.body as Record<string, unknown>) };
      next();
    },
    exchange,
  );

  /** The grant a token belongs to (an access or a refresh token), if it is one of ours. */
  const grantOfToken = (token: string | undefined): string | null => {
    if (token === undefined) return null;
    const refresh = /^rpr_([0-9a-f]{32})_/.exec(token);
    if (refresh) return refresh[1]!;
    return deps.accessTokens.verify(token)?.grantId ?? null;
  };

  router.post(
    '/auth/oauth/revoke',
    oauthEndpoint(async (req, res) => {
      const client = await authenticateClient(req);
      const tenant = contextOf(req).tenant;
      const grantId = grantOfToken(param(req.body, 'token'));
      if (grantId) {
        const stream = streamName('oauthGrant', tenant, grantId);
        const grant = await deps.handler.load(stream, oauthGrantDecider);
        // Another client's token is left alone, and the answer says nothing about it (RFC 7009 §2.1).
        if (grant.state.code?.clientId === client.client!.clientId && grant.state.status !== 'revoked')
          await deps.handler.handle(
            stream,
            oauthGrantDecider,
            { kind: 'RevokeGrant' },
            commandContext(req, clientPrincipal(tenant, client.client!.clientId), deps.newCommandId()),
          );
      }
      res.setHeader('Cache-Control', 'no-store');
      res.status(200).json({ revoked: true });
    }),
  );

  router.post(
    '/auth/oauth/introspect',
    oauthEndpoint(async (req, res) => {
      await authenticateClient(req);
      const tenant = contextOf(req).tenant;
      const token = param(req.body, 'token');
      const claims = token === undefined ? null : deps.accessTokens.verify(token);
      const grantId = grantOfToken(token);
      const grant = grantId
        ? (await deps.handler.load(streamName('oauthGrant', tenant, grantId), oauthGrantDecider)).state
        : null;
      const client = grant?.code ? await loadClient(tenant, grant.code.clientId) : null;
      const isRefresh = token?.startsWith('rpr_') === true;
      const active =
        grant?.status === 'active' &&
        client !== null &&
        (isRefresh ? hashToken(token!) === grant.refreshHash : claims !== null && claims.tenant === tenant);
      res.setHeader('Cache-Control', 'no-store');
      res.status(200).json(
        active
          ? {
              active: true,
              client_id: grant.code!.clientId,
              scope: grant.scope,
              sub: String(grant.code!.userId),
              token_type: isRefresh ? 'refresh_token' : 'Bearer',
              ...(claims && { exp: claims.exp }),
            }
          : { active: false },
      );
    }),
  );
}

/**
 * OA-29: a change to how a user signs in (password, two-factor, deactivation) revokes the OAuth grants they
 * gave, with every access and refresh token of them.
 */
export async function revokeGrantsOf(
  deps: CommandDeps,
  req: Request,
  principal: Principal,
  userId: number,
): Promise<void> {
  for (const grantId of await deps.reads.liveGrantsOf(principal.tenant, userId))
    await deps.handler.handle(
      streamName('oauthGrant', principal.tenant, grantId),
      oauthGrantDecider,
      { kind: 'RevokeGrant' },
      commandContext(req, principal, deps.newCommandId()),
    );
}

/** Who acts at the token endpoints: the client itself. */
function clientPrincipal(tenant: string, clientId: string): Principal {
  return {
    tenant,
    userId: `client:${clientId}`,
    role: 'member',
    credential: { kind: 'oauth-access-token', id: `client:${clientId}`, clientId },
  };
}
