import { randomBytes } from 'node:crypto';
import {
  CODE_LIFETIME_SECONDS,
  GRANT_LIFETIME_DAYS,
  OAuthError,
  redirectUriMatches,
  scopeWithin,
  type GrantType,
} from '../../../contracts/oauth';
import { hashToken } from '../../../contracts/secrets';
import { streamName } from '../../../contracts/streams';
import type { CommandDeps } from '../../deps';
import type { AggregateLoader, CommandContext } from '../../kit/handler';
import { activeClient } from '../commands';
import { AUTHORIZE_PARAMETERS, type ConsentTicket } from '../consent-tickets';
import { oauthConsentDecider } from '../domain/oauth-consent';
import { oauthGrantDecider } from '../domain/oauth-grant';
import { param } from '../parameters';
import { newRefreshToken, type GrantHandler } from './tokens';

const GRANT_LIFETIME_MS = GRANT_LIFETIME_DAYS * 24 * 3_600_000;

/** Where an authorization's answer goes: a registered redirect URI of the client, with the client's state. */
export interface Destination {
  readonly redirectUri: string;
  readonly state: string | undefined;
}

/** An authorization request that passed its checks, waiting for the resource owner's decision. */
export interface AuthorizationRequest {
  readonly clientId: string;
  readonly clientName: string;
  readonly scope: string;
  readonly challenge: string | null;
  /** As the client sent them: what a consent ticket carries, to be checked again on the answer. */
  readonly parameters: ConsentTicket['request'];
}

/** A code (256 random bits) and what is kept of it: its hash, whose first half names the grant. */
export interface DrawnCode {
  readonly code: string;
  readonly codeHash: string;
  readonly grantId: string;
}

export function newCode(): DrawnCode {
  const code = randomBytes(32).toString('base64url');
  const codeHash = hashToken(code);
  return { code, codeHash, grantId: codeHash.slice(0, 32) };
}

/**
 * An authorization request (from the query string, or from a consent ticket) checked up to the resource
 * owner's decision. Without a known client and one of its redirect URIs there is nowhere safe to send the
 * answer (OA-02): `to` is then null. Other faults go back to the client (OA-03).
 */
export async function readAuthorization(
  aggregates: AggregateLoader,
  tenant: string,
  source: unknown,
): Promise<
  | { to: null; error: OAuthError }
  | { to: Destination; error: OAuthError }
  | { to: Destination; request: AuthorizationRequest }
> {
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
  const client = clientId === undefined ? null : await activeClient(aggregates, tenant, clientId);
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
        throw new OAuthError('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)');
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
}

/** Records `drawn` as user `userId`'s authorization of `request` (the grant's first event); gives the code. */
export async function issueCode(
  deps: Pick<CommandDeps, 'handler'>,
  userId: number,
  to: Destination,
  request: AuthorizationRequest,
  context: CommandContext,
  { code, codeHash, grantId }: DrawnCode = newCode(),
): Promise<string> {
  await deps.handler.handle(
    streamName('oauthGrant', context.tenant, grantId),
    oauthGrantDecider,
    {
      kind: 'IssueCode',
      code: {
        grantId,
        clientId: request.clientId,
        userId,
        redirectUri: to.redirectUri,
        scope: request.scope,
        codeHash,
        codeChallenge: request.challenge,
        codeExpiresAt: new Date(Date.now() + CODE_LIFETIME_SECONDS * 1000).toISOString(),
      },
    },
    context,
    { newStream: true },
  );
  return code;
}

/**
 * The resource owner's answer on a consent page, recorded once per ticket (a second answer is refused): an
 * allowance names the grant its code will start.
 */
export async function answerConsent(
  deps: Pick<CommandDeps, 'handler'>,
  answer: {
    readonly ticket: Pick<ConsentTicket, 'ticketId' | 'expiresAt'>;
    readonly request: AuthorizationRequest;
    readonly userId: number;
    readonly decision: 'allow' | 'deny';
    readonly grantId: string | null;
  },
  context: CommandContext,
): Promise<void> {
  await deps.handler.handle(
    streamName('oauthConsent', context.tenant, answer.ticket.ticketId),
    oauthConsentDecider,
    {
      kind: 'AnswerConsent',
      answer: {
        ticketId: answer.ticket.ticketId,
        clientId: answer.request.clientId,
        userId: answer.userId,
        scope: answer.request.scope,
        decision: answer.decision,
        grantId: answer.grantId,
      },
      now: new Date().toISOString(),
      expiresAt: answer.ticket.expiresAt,
    },
    context,
    { newStream: true },
  );
}

/** `grant_type=authorization_code`: the code (with its PKCE verifier) becomes the grant's tokens, once. */
export const redeemAuthorizationCode: GrantHandler = async (deps, clientId, parameters, context) => {
  const code = param(parameters, 'code');
  if (code === undefined) throw new OAuthError('invalid_request', 'code is missing');
  const grantId = hashToken(code).slice(0, 32);
  const refreshToken = newRefreshToken(grantId);
  const now = new Date();
  const result = await deps.handler.handle(
    streamName('oauthGrant', context.tenant, grantId),
    oauthGrantDecider,
    {
      kind: 'RedeemCode',
      clientId,
      redirectUri: param(parameters, 'redirect_uri'),
      codeVerifier: param(parameters, 'code_verifier'),
      refreshHash: hashToken(refreshToken),
      now: now.toISOString(),
      expiresAt: new Date(now.getTime() + GRANT_LIFETIME_MS).toISOString(),
    },
    context,
  );
  if (result.state.status === 'revoked')
    throw new OAuthError('invalid_grant', 'the code was used already: every token issued from it is revoked');
  return { grantId, refreshToken, grant: result.state };
};
