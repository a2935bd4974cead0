import { randomBytes } from 'node:crypto';
import type { AccessTokens } from '../../../infra/secrets/access-tokens';
import type { CommandDeps } from '../../deps';
import type { CommandContext } from '../../kit/handler';
import type { OAuthGrantState } from '../domain/oauth-grant';

/** What a grant type gives the token endpoint: the grant as it now is, and the refresh token it now takes. */
export interface IssuedGrant {
  readonly grantId: string;
  readonly refreshToken: string;
  readonly grant: OAuthGrantState;
}

/**
 * A grant type of the token endpoint (`grant_type`): from the token request's parameters and the client that
 * authenticated, the grant it issues or renews.
 */
export type GrantHandler = (
  deps: Pick<CommandDeps, 'handler'>,
  clientId: string,
  parameters: unknown,
  context: CommandContext,
) => Promise<IssuedGrant>;

/** A new refresh token of grant `grantId`: the grant's id, then 256 random bits. */
export function newRefreshToken(grantId: string): string {
  return `rpr_${grantId}_${randomBytes(32).toString('base64url')}`;
}

/** The grant a refresh token names, if it has a refresh token's shape. */
export function grantOfRefreshToken(token: string): string | null {
  return /^rpr_([0-9a-f]{32})_[A-Za-z0-9_-]{43}$/.exec(token)?.[1] ?? null;
}

/** The grant a token belongs to (an access or a refresh token), if it is one of ours. */
export function grantOfToken(accessTokens: AccessTokens, token: string | undefined): string | null {
  if (token === undefined) return null;
  const refresh = /^rpr_([0-9a-f]{32})_/.exec(token);
  if (refresh) return refresh[1]!;
  return accessTokens.verify(token)?.grantId ?? null;
}
