import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import {
  CODE_LIFETIME_SECONDS,
  GRANT_LIFETIME_DAYS,
  mayManageOwnGrants,
  OAuthError,
  redirectUriMatches,
  scopeWithin,
  type GrantType,
} from '../../../contracts/oauth';
import { PlatformError } from '../../../contracts/errors';
import { hashToken } from '../../../contracts/secrets';
import { validate } from '../../../contracts/validation';
import { streamName } from '../../../contracts/streams';
import type { Principal } from '../../../contracts/auth';
import { contextOf, principalOf } from '../../../infra/http/context';
import { issuerOf } from '../../../infra/http/issuer';
import { ACCESS_TOKEN_AUDIENCE } from '../../../infra/secrets/access-tokens';
import type { CommandDeps } from '../../deps';
import { oauthClientDecider, type OAuthClientState } from '../domain/oauth-client';
import { oauthConsentDecider } from '../domain/oauth-consent';
import { oauthGrantDecider } from '../domain/oauth-grant';
import { ClientAuthThrottle } from '../../identity/login-throttle';
import { commandContext, sendResult } from '../../kit/route-context';
import {
  answerConsent,
  authorize,
  consentBody,
  exchangeToken,
  grantIdParams,
  introspectToken,
  renewToken,
  revokeOAuthGrant,
  revokeOAuthToken,
} from '../../../contracts/api/oauth';
import { mount } from '../../../infra/http/operations';
import { sendJson } from '../../../infra/http/respond';
import { sendConsentPage, sendConsentRefusal } from './oauth-consent-page';
import { AUTHORIZE_PARAMETERS, consentTickets, type ConsentTicket } from './oauth-consent';

const GRANT_LIFETIME_MS = GRANT_LIFETIME_DAYS * 24 * 3_600_000;
const MINUTE_MS = 60_000;

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
  if (error.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(error.retryAfterSeconds));
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  sendJson(res, error.status, { error: error.code, error_description: error.message });
}

/** Where an authorization's answer goes: a registered redirect URI of the client, with the client's state. */
interface Destination {
  readonly redirectUri: string;
  readonly state: string | undefined;
}

/** An authorization request that passed its checks, waiting for the resource owner's decision. */
interface AuthorizationRequest {
  readonly clientId: string;
  readonly clientName: string;
  readonly scope: string;
  readonly challenge: string | null;
  /** As the client sent them: what a consent ticket carries, to be checked again on the answer. */
  readonly parameters: ConsentTicket['request'];
}

/** A code (256 random bits) and what is kept of it: its hash, whose first half names the grant. */
function newCode(): { code: string; codeHash: string; grantId: string } {
  const code = randomBytes(32).toString('base64url');
  const codeHash = hashToken(code);
  return { code, codeHash, grantId: codeHash.slice(0, 32) };
}

/** The `host[:port]` of an Origin header, or null for `null` and anything that is not a URL. */
function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host || null;
  } catch {
    return null;
  }
}

const sha256Equal = (a: string, b: string) => timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));

/** The OAuth 2.0 authorization server: authorize (code + PKCE), token, renew, revoke, introspect. */
export function addOAuthRoutes(router: Router, deps: CommandDeps): void {
  // Counted in the attempt log every command-api process shares, under keys of their own.
  const clientThrottle = new ClientAuthThrottle({
    log: deps.attempts,
    keySecret: deps.sealer.derivedKey('client-auth-attempts'),
  });
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
    const { tenant } = contextOf(req);
    // Failures are counted in the log every process shares; past the limits the secret is not even checked.
    const attempt = await clientThrottle.begin(tenant, clientId ?? '', req.ip ?? 'unknown');
    if (attempt.waitSeconds > 0) {
      deps.logger.warn(
        { event: 'oauth.client-auth.throttled', tenant, clientId, retryAfter: attempt.waitSeconds },
        'client authentication refused: too many failures',
      );
      throw new OAuthError(
        'temporarily_unavailable',
        `too many failed client authentications; try again in ${attempt.waitSeconds} s`,
        429,
        attempt.waitSeconds,
      );
    }
    const client = clientId === undefined ? null : await loadClient(tenant, clientId);
    // The hash is compared in constant time; an unknown client costs the same comparison.
    const matches = sha256Equal(hashToken(secret ?? ''), client?.secretHash || '0'.repeat(64));
    if (!client || secret === undefined || !matches) {
      await attempt.failed();
      deps.logger.warn(
        { event: 'oauth.client-auth.failed', tenant, clientId },
        'client authentication failed',
      );
      throw new OAuthError('invalid_client', 'unknown client or wrong client credentials');
    }
    await attempt.succeeded();
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

  /**
   * An authorization request (from the query string, or from a consent ticket) checked up to the resource
   * owner's decision. Without a known client and one of its redirect URIs there is nowhere safe to send the
   * answer (OA-02): `to` is then null. Other faults go back to the client (OA-03).
   */
  const readAuthorization = async (
    tenant: string,
    source: unknown,
  ): Promise<
    | { to: null; error: OAuthError }
    | { to: Destination; error: OAuthError }
    | { to: Destination; request: AuthorizationRequest }
  > => {
    let clientId: string | undefined;
    let redirectUri: string | undefined;
    let state: string | undefined;
    try {
      clientId = param(source, 'client_id');
      redirectUri = param(source, 'redirect_uri');
      state = param(source, 'state');
    } catch (error) {
      return { to: null, error: error as OAuthError };
    }
    const client = clientId === undefined ? null : await loadClient(tenant, clientId);
    if (!client?.client)
      return { to: null, error: new OAuthError('invalid_request', 'unknown or missing client_id') };
    if (
      redirectUri === undefined ||
      !client.client.redirectUris.some((uri) => redirectUriMatches(uri, redirectUri!))
    )
      return {
        to: null,
        error: new OAuthError('invalid_request', 'redirect_uri is missing or not registered for this client'),
      };
    const to = { redirectUri, state };
    try {
      const responseType = param(source, 'response_type');
      if (responseType !== 'code')
        throw new OAuthError('unsupported_response_type', 'only response_type=code is supported');
      if (!client.client.grantTypes.includes('authorization_code' satisfies GrantType))
        throw new OAuthError('unauthorized_client', 'this client may not use the authorization code grant');
      const scope = param(source, 'scope') ?? client.client.scope;
      if (!scopeWithin(scope, client.client.scope))
        throw new OAuthError('invalid_scope', 'the scope asks for more than the client is registered for');
      const challenge = param(source, 'code_challenge');
      const method = param(source, 'code_challenge_method');
      if (challenge !== undefined || method !== undefined) {
        if (method !== 'S256') throw new OAuthError('invalid_request', 'code_challenge_method must be S256');
        if (challenge === undefined || !/^[A-Za-z0-9_-]{43}$/.test(challenge))
          throw new OAuthError(
            'invalid_request',
            'code_challenge must be a base64url SHA-256 (43 characters)',
          );
      }
      const request = Object.fromEntries(
        AUTHORIZE_PARAMETERS.flatMap((name) => {
          const value = param(source, name);
          return value === undefined ? [] : [[name, value]];
        }),
      );
      return {
        to,
        request: {
          clientId: client.client.clientId,
          clientName: client.client.clientName,
          scope,
          challenge: challenge ?? null,
          // The scope shown on a consent page is the one its answer grants, whatever the client changes.
          parameters: { ...request, scope },
        },
      };
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      return { to, error };
    }
  };

  /** Back to the client's redirect URI (302, with `state` and `iss`: OA-04, OA-10, OA-11). */
  const redirectBack = (
    req: Request,
    res: Response,
    to: Destination,
    parameters: Record<string, string | undefined>,
  ) => {
    const target = new URL(to.redirectUri);
    for (const [name, value] of Object.entries({ ...parameters, state: to.state, iss: issuerOf(req) }))
      if (value !== undefined) target.searchParams.append(name, value);
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, target.toString());
  };
  const errorParameters = (error: OAuthError) => ({ error: error.code, error_description: error.message });

  /** Records `code` as `principal`'s authorization of `request` (the grant's first event); answers the code. */
  const issueCode = async (
    req: Request,
    principal: Principal,
    to: Destination,
    request: AuthorizationRequest,
    { code, codeHash, grantId } = newCode(),
  ) => {
    await deps.handler.handle(
      streamName('oauthGrant', principal.tenant, grantId),
      oauthGrantDecider,
      {
        kind: 'IssueCode',
        code: {
          grantId,
          clientId: request.clientId,
          userId: Number(principal.userId),
          redirectUri: to.redirectUri,
          scope: request.scope,
          codeHash,
          codeChallenge: request.challenge,
          codeExpiresAt: new Date(Date.now() + CODE_LIFETIME_SECONDS * 1000).toISOString(),
        },
      },
      commandContext(req, principal, deps.newCommandId()),
      { newStream: true },
    );
    return code;
  };

  const tickets = consentTickets(deps.sealer.derivedKey('oauth-consent'));

  /**
   * The token holder consents by calling (Bearer / X-Authorization: the spec's programmatic shape): the code
   * comes at once. A browser, signed in by the session cookie, gets the consent page first (OA-08).
   */
  mount(router, authorize, async (req, res) => {
    // OA-09: never framed, never leaking the code in a Referer.
    res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
    res.setHeader('Referrer-Policy', 'no-referrer');
    const context = contextOf(req);
    const read = await readAuthorization(context.tenant, req.query);
    if (read.to === null) return sendOAuthError(res, read.error);
    if ('error' in read) return redirectBack(req, res, read.to, errorParameters(read.error));
    const principal = principalOf(req);
    if (context.credentialSource !== 'cookie')
      return redirectBack(req, res, read.to, {
        code: await issueCode(req, principal, read.to, read.request),
      });
    sendConsentPage(res, {
      clientId: read.request.clientId,
      clientName: read.request.clientName,
      scope: read.request.scope,
      redirectUri: read.to.redirectUri,
      action: `${issuerOf(req)}/auth/oauth/authorize`,
      ticket: tickets.issue(principal, read.request.parameters),
      accessTokenSeconds: deps.accessTokens.lifetimeSeconds,
    });
  });

  /**
   * The consent page's Allow / Deny (a form post, signed in by the session cookie: the kit lets it through
   * without X-CSRF-Token, and the ticket, bound to this session and answerable once, stands in for it).
   */
  mount(router, answerConsent, async (req, res) => {
    const context = contextOf(req);
    const principal = context.principal;
    const answer = consentBody.safeParse(req.body);
    if (!answer.success) return sendConsentRefusal(res, 'The consent form is malformed.');
    // The page posts to its own host; the scheme is left aside (a TLS proxy may hide it from req.protocol).
    const origin = req.headers.origin;
    if (origin !== undefined && hostOf(origin) !== req.get('host'))
      return sendConsentRefusal(res, 'The consent form was sent from another site.');
    if (!principal || context.credentialSource !== 'cookie' || principal.credential.kind !== 'session')
      return sendConsentRefusal(res, 'Consent is given in the browser session that was asked for it.');
    const ticket = tickets.open(answer.data.ticket, principal);
    if (!ticket)
      return sendConsentRefusal(res, 'The consent page is invalid, expired, or belongs to another session.');
    const read = await readAuthorization(context.tenant, ticket.request);
    if (read.to === null) return sendConsentRefusal(res, read.error.message);
    if ('error' in read) return redirectBack(req, res, read.to, errorParameters(read.error));
    // The code is drawn first so the consent names its grant; the ticket is spent before the code exists.
    const drawn = answer.data.decision === 'allow' ? newCode() : null;
    try {
      await deps.handler.handle(
        streamName('oauthConsent', context.tenant, ticket.ticketId),
        oauthConsentDecider,
        {
          kind: 'AnswerConsent',
          answer: {
            ticketId: ticket.ticketId,
            clientId: read.request.clientId,
            userId: Number(principal.userId),
            scope: read.request.scope,
            decision: answer.data.decision,
            grantId: drawn?.grantId ?? null,
          },
          now: new Date().toISOString(),
          expiresAt: ticket.expiresAt,
        },
        commandContext(req, principal, deps.newCommandId()),
        { newStream: true },
      );
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      return sendConsentRefusal(res, error.message);
    }
    if (!drawn)
      return redirectBack(req, res, read.to, {
        error: 'access_denied',
        error_description: 'the resource owner denied the request',
      });
    redirectBack(req, res, read.to, { code: await issueCode(req, principal, read.to, read.request, drawn) });
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

  /** The grant a token belongs to (an access or a refresh token), if it is one of ours. */
  const grantOfToken = (token: string | undefined): string | null => {
    if (token === undefined) return null;
    const refresh = /^rpr_([0-9a-f]{32})_/.exec(token);
    if (refresh) return refresh[1]!;
    return deps.accessTokens.verify(token)?.grantId ?? null;
  };

  mount(
    router,
    revokeOAuthToken,
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
      sendJson(res, 200, { revoked: true });
    }),
  );

  mount(
    router,
    introspectToken,
    oauthEndpoint(async (req, res) => {
      const caller = await authenticateClient(req);
      const tenant = contextOf(req).tenant;
      // OA-34: a client cannot scan for live tokens faster than its per-minute allowance, in any process.
      const now = Date.now();
      const { times } = await deps.attempts.add(
        `introspect:${tenant}:${caller.client!.clientId}`,
        now,
        now + MINUTE_MS,
      );
      const limit = deps.introspectionsPerMinute;
      if (times.length > limit) {
        const retryAfter = Math.max(1, Math.ceil((times[times.length - limit]! + MINUTE_MS - now) / 1000));
        res.setHeader('Retry-After', String(retryAfter));
        throw new OAuthError(
          'temporarily_unavailable',
          `more than ${limit} introspections a minute for this client: retry in ${retryAfter} s`,
          429,
        );
      }
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
      sendJson(
        res,
        200,
        active
          ? {
              active: true,
              client_id: grant.code!.clientId,
              scope: grant.scope,
              sub: String(grant.code!.userId),
              token_type: isRefresh ? 'refresh_token' : 'Bearer',
              ...(claims && { exp: claims.exp, iat: claims.iat, aud: ACCESS_TOKEN_AUDIENCE }),
            }
          : { active: false },
      );
    }),
  );
}

/**
 * `DELETE /auth/oauth/grant/{grantId}` (OA-33): users revoke a grant they gave (see `GET /auth/oauth/grant`);
 * its refresh and access tokens stop working on the next request. Another user's grant is a 404.
 */
export function addOAuthGrantRoutes(router: Router, deps: CommandDeps): void {
  mount(router, revokeOAuthGrant, async (req, res) => {
    const principal = principalOf(req);
    if (!mayManageOwnGrants(principal, 'delete'))
      throw new PlatformError('forbidden', 'this credential may not revoke the OAuth grants of its user');
    const { grantId } = validate(grantIdParams, req.params, 'path');
    const stream = streamName('oauthGrant', principal.tenant, grantId);
    const grant = await deps.handler.load(stream, oauthGrantDecider);
    if (grant.state.code?.userId !== Number(principal.userId))
      throw new PlatformError('not_found', `OAuth grant ${grantId} not found`);
    const result = await deps.handler.handle(
      stream,
      oauthGrantDecider,
      { kind: 'RevokeGrant' },
      commandContext(req, principal, deps.newCommandId()),
    );
    sendResult(res, 200, result, { grantId, revoked: true });
  });
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
