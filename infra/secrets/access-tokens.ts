import jwt from 'jsonwebtoken';

/** What an OAuth access token says: user, system, client, grant, scope. */
export interface AccessTokenClaims {
  readonly userId: number;
  readonly tenant: string;
  readonly clientId: string;
  readonly grantId: string;
  readonly scope: string;
  /** Expiry, seconds since the epoch. */
  readonly exp: number;
  /** Issued at, seconds since the epoch. */
  readonly iat: number;
}

export interface AccessTokens {
  readonly lifetimeSeconds: number;
  sign(claims: Omit<AccessTokenClaims, 'exp' | 'iat'>, issuer: string): string;
  /** The claims of a well-signed, unexpired token of ours, else null (revocation is checked by the caller). */
  verify(token: string): AccessTokenClaims | null;
}

/** The `aud` of every access token: this platform's API. */
export const ACCESS_TOKEN_AUDIENCE = 'records-platform';

/** OAuth access tokens: JWTs (HS256 under a key derived from the secrets key). */
export function createAccessTokens(key: Buffer, lifetimeSeconds = 3600): AccessTokens {
  return {
    lifetimeSeconds,
    sign(claims, issuer) {
      return jwt.sign(
        { tnt: claims.tenant, cid: claims.clientId, gid: claims.grantId, scope: claims.scope },
        key,
        {
          algorithm: 'HS256',
          subject: String(claims.userId),
          audience: ACCESS_TOKEN_AUDIENCE,
          issuer,
          expiresIn: lifetimeSeconds,
          jwtid: claims.grantId + Date.now().toString(36),
        },
      );
    },
    verify(token) {
      try {
        const payload = jwt.verify(token, key, { algorithms: ['HS256'], audience: ACCESS_TOKEN_AUDIENCE });
        if (typeof payload !== 'object') return null;
        const { sub, tnt, cid, gid, scope, exp, iat } = payload as Record<string, unknown>;
        if (
          typeof tnt !== 'string' ||
          typeof cid !== 'string' ||
          typeof gid !== 'string' ||
          typeof exp !== 'number' ||
          typeof iat !== 'number'
        )
          return null;
        return {
          userId: Number(sub),
          tenant: tnt,
          clientId: cid,
          grantId: gid,
          scope: String(scope ?? ''),
          exp,
          iat,
        };
      } catch {
        return null;
      }
    },
  };
}
