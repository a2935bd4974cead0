import { OAuthError } from '../../../contracts/oauth';
import { hashToken } from '../../../contracts/secrets';
import { streamName } from '../../../contracts/streams';
import { oauthGrantDecider } from '../domain/oauth-grant';
import { param } from '../parameters';
import { grantOfRefreshToken, newRefreshToken, type GrantHandler } from './tokens';

/**
 * `grant_type=refresh_token` (and the spec's renew): the refresh token rotates, optionally to a narrower scope;
 * a rotated one presented again revokes the whole grant (OA-25).
 */
export const refreshGrant: GrantHandler = async (deps, clientId, parameters, context) => {
  const presented = param(parameters, 'refresh_token');
  const grantId = presented ? grantOfRefreshToken(presented) : null;
  if (!presented || grantId === null) throw new OAuthError('invalid_grant', 'the refresh token is not valid');
  const refreshToken = newRefreshToken(grantId);
  const result = await deps.handler.handle(
    streamName('oauthGrant', context.tenant, grantId),
    oauthGrantDecider,
    {
      kind: 'RefreshGrant',
      clientId,
      refreshHash: hashToken(presented),
      newRefreshHash: hashToken(refreshToken),
      scope: param(parameters, 'scope'),
      now: new Date().toISOString(),
    },
    context,
  );
  if (result.state.status === 'revoked')
    throw new OAuthError('invalid_grant', 'the refresh token was used already: the whole grant is revoked');
  return { grantId, refreshToken, grant: result.state };
};
