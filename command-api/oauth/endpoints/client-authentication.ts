import { timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { OAuthError } from '../../../contracts/oauth';
import { hashToken } from '../../../contracts/secrets';
import { contextOf } from '../../../infra/http/context';
import type { CommandDeps } from '../../deps';
import { ClientAuthThrottle } from '../../identity/login-throttle';
import { activeClient } from '../commands';
import type { OAuthClientState } from '../domain/oauth-client';
import { param } from '../parameters';

/** A client that proved who it is: its registration is active and present. */
export type AuthenticatedClient = OAuthClientState & {
  readonly client: NonNullable<OAuthClientState['client']>;
};

const sha256Equal = (a: string, b: string) => timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));

/** The client's id and secret as it sent them: HTTP Basic, or the body (never the query string). */
function presentedCredentials(req: Request): { clientId: string | undefined; secret: string | undefined } {
  const header = req.headers.authorization;
  if (header === undefined || !/^Basic /i.test(header))
    return { clientId: param(req.body, 'client_id'), secret: param(req.body, 'client_secret') };
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new OAuthError('invalid_client', 'malformed Basic credentials');
  try {
    // RFC 6749 §2.3.1: both parts are form-urlencoded before they are joined.
    return {
      clientId: decodeURIComponent(decoded.slice(0, colon)),
      secret: decodeURIComponent(decoded.slice(colon + 1)),
    };
  } catch {
    throw new OAuthError('invalid_client', 'malformed Basic credentials');
  }
}

/**
 * How the token, revoke and introspect endpoints know their caller: the client authenticates with its id and
 * secret. Failures are counted in the attempt log every command-api process shares, under keys of their own;
 * past the limits the secret is not even checked.
 */
export function clientAuthentication(deps: CommandDeps): (req: Request) => Promise<AuthenticatedClient> {
  const throttle = new ClientAuthThrottle({
    log: deps.attempts,
    keySecret: deps.sealer.derivedKey('client-auth-attempts'),
  });
  return async (req) => {
    const { clientId, secret } = presentedCredentials(req);
    const { tenant } = contextOf(req);
    const attempt = await throttle.begin(tenant, clientId ?? '', req.ip ?? 'unknown');
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
    const client = clientId === undefined ? null : await activeClient(deps.handler, tenant, clientId);
    // The hash is compared in constant time; an unknown client costs the same comparison.
    const matches = sha256Equal(hashToken(secret ?? ''), client?.secretHash || '0'.repeat(64));
    if (!client?.client || secret === undefined || !matches) {
      await attempt.failed();
      deps.logger.warn(
        { event: 'oauth.client-auth.failed', tenant, clientId },
        'client authentication failed',
      );
      throw new OAuthError('invalid_client', 'unknown client or wrong client credentials');
    }
    await attempt.succeeded();
    return { ...client, client: client.client };
  };
}
