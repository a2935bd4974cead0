import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import type { createClientBody, updateClientBody } from '../../contracts/api/oauth';
import type { Principal } from '../../contracts/auth';
import { PlatformError } from '../../contracts/errors';
import { hashToken } from '../../contracts/secrets';
import { streamName } from '../../contracts/streams';
import { ACCESS_TOKEN_AUDIENCE } from '../../infra/secrets/access-tokens';
import type { CommandDeps } from '../deps';
import {
  withCommandId,
  type AggregateLoader,
  type CommandContext,
  type CommandOrigin,
  type CommandResult,
  type HandleOptions,
} from '../kit/handler';
import { oauthClientDecider, type OAuthClientState } from './domain/oauth-client';
import { oauthGrantDecider, type OAuthGrantState } from './domain/oauth-grant';
import { grantOfToken } from './grants/tokens';

/** A client registration of `tenant` that is active, or null (unknown, malformed id, deleted). */
export async function activeClient(
  aggregates: AggregateLoader,
  tenant: string,
  clientId: string,
): Promise<OAuthClientState | null> {
  if (!/^rpc_[0-9a-f]{24}$/.test(clientId)) return null;
  const { state } = await aggregates.load(streamName('oauthClient', tenant, clientId), oauthClientDecider);
  return state.status === 'active' ? state : null;
}

function newClientSecret(): string {
  return `rpcs_${randomBytes(32).toString('base64url')}`;
}

/** A new client registration, with its secret (kept only as a hash: this is the one time it is shown). */
export async function registerClient(
  deps: Pick<CommandDeps, 'handler'>,
  settings: z.infer<typeof createClientBody>,
  context: CommandContext,
): Promise<{ result: CommandResult<OAuthClientState>; clientId: string; clientSecret: string }> {
  const clientId = `rpc_${randomBytes(12).toString('hex')}`;
  const clientSecret = newClientSecret();
  const result = await deps.handler.handle(
    streamName('oauthClient', context.tenant, clientId),
    oauthClientDecider,
    { kind: 'RegisterClient', client: { clientId, ...settings, secretHash: hashToken(clientSecret) } },
    context,
    { newStream: true },
  );
  return { result, clientId, clientSecret };
}

/**
 * Changes client `clientId`'s settings, and its secret: one the caller chose, or a new one (`regenerateSecret`,
 * given back as `newSecret`), not both.
 */
export async function changeClient(
  deps: Pick<CommandDeps, 'handler'>,
  clientId: string,
  change: z.infer<typeof updateClientBody>,
  context: CommandContext,
  options: HandleOptions,
): Promise<{ result: CommandResult<OAuthClientState>; newSecret: string | undefined }> {
  const { clientSecret: chosenSecret, regenerateSecret, ...settings } = change;
  const secret = regenerateSecret ? newClientSecret() : chosenSecret;
  const result = await deps.handler.handle(
    streamName('oauthClient', context.tenant, clientId),
    oauthClientDecider,
    { kind: 'ChangeClient', ...settings, ...(secret !== undefined && { secretHash: hashToken(secret) }) },
    context,
    options,
  );
  return { result, newSecret: regenerateSecret ? secret : undefined };
}

/** Who acts at the token endpoints: the client itself. */
export function clientPrincipal(tenant: string, clientId: string): Principal {
  return {
    tenant,
    userId: `client:${clientId}`,
    role: 'member',
    credential: { kind: 'oauth-access-token', id: `client:${clientId}`, clientId },
  };
}

/**
 * OA-29: a change to how a user signs in (password, two-factor, deactivation) revokes the OAuth grants they
 * gave, with every access and refresh token of them. Each revocation is a command of its own, with a new
 * command id.
 */
export async function revokeGrantsOf(
  deps: Pick<CommandDeps, 'handler' | 'reads' | 'newCommandId'>,
  userId: number,
  origin: CommandOrigin,
): Promise<void> {
  const { tenant } = origin;
  for (const grantId of await deps.reads.liveGrantsOf(tenant, userId))
    await deps.handler.handle(
      streamName('oauthGrant', tenant, grantId),
      oauthGrantDecider,
      { kind: 'RevokeGrant' },
      withCommandId(origin, deps.newCommandId()),
    );
}

/**
 * RFC 7009: the client `clientId` revokes the grant `grantId` a token of its belongs to. Another client's grant
 * is left alone, and the caller's answer says nothing about it (§2.1).
 */
export async function revokeGrantOfClient(
  deps: Pick<CommandDeps, 'handler'>,
  tenant: string,
  clientId: string,
  grantId: string,
  context: CommandContext,
): Promise<void> {
  const stream = streamName('oauthGrant', tenant, grantId);
  const grant = await deps.handler.load(stream, oauthGrantDecider);
  if (grant.state.code?.clientId === clientId && grant.state.status !== 'revoked')
    await deps.handler.handle(stream, oauthGrantDecider, { kind: 'RevokeGrant' }, context);
}

/** OA-33: a user revokes a grant they gave; another user's grant is a 404. */
export async function revokeOwnGrant(
  deps: Pick<CommandDeps, 'handler'>,
  principal: Principal,
  grantId: string,
  context: CommandContext,
): Promise<CommandResult<OAuthGrantState>> {
  const stream = streamName('oauthGrant', principal.tenant, grantId);
  const grant = await deps.handler.load(stream, oauthGrantDecider);
  if (grant.state.code?.userId !== Number(principal.userId))
    throw new PlatformError('not_found', `OAuth grant ${grantId} not found`);
  return deps.handler.handle(stream, oauthGrantDecider, { kind: 'RevokeGrant' }, context);
}

/**
 * RFC 7662: what `token` (an access or a refresh token) grants while it is active in `tenant`, or
 * `{active: false}`.
 */
export async function introspection(
  deps: Pick<CommandDeps, 'handler' | 'accessTokens'>,
  tenant: string,
  token: string | undefined,
): Promise<Record<string, unknown>> {
  const claims = token === undefined ? null : deps.accessTokens.verify(token);
  const grantId = grantOfToken(deps.accessTokens, token);
  const grant = grantId
    ? (await deps.handler.load(streamName('oauthGrant', tenant, grantId), oauthGrantDecider)).state
    : null;
  const client = grant?.code ? await activeClient(deps.handler, tenant, grant.code.clientId) : null;
  const isRefresh = token?.startsWith('rpr_') === true;
  const active =
    grant?.status === 'active' &&
    client !== null &&
    (isRefresh ? hashToken(token!) === grant.refreshHash : claims !== null && claims.tenant === tenant);
  return active
    ? {
        active: true,
        client_id: grant.code!.clientId,
        scope: grant.scope,
        sub: String(grant.code!.userId),
        token_type: isRefresh ? 'refresh_token' : 'Bearer',
        ...(claims && { exp: claims.exp, iat: claims.iat, aud: ACCESS_TOKEN_AUDIENCE }),
      }
    : { active: false };
}

const MINUTE_MS = 60_000;

/**
 * OA-34: a client cannot scan for live tokens faster than its per-minute allowance, in any process. Counts
 * this introspection; the seconds to wait when it is one too many, else 0.
 */
export async function introspectionWait(
  deps: Pick<CommandDeps, 'attempts' | 'introspectionsPerMinute'>,
  tenant: string,
  clientId: string,
): Promise<number> {
  const now = Date.now();
  const { times } = await deps.attempts.add(`introspect:${tenant}:${clientId}`, now, now + MINUTE_MS);
  const limit = deps.introspectionsPerMinute;
  if (times.length <= limit) return 0;
  return Math.max(1, Math.ceil((times[times.length - limit]! + MINUTE_MS - now) / 1000));
}
