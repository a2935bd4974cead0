import type { ModulePermissions, Principal, Role } from '../../contracts/auth';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import { hashToken } from '../../contracts/secrets';
import type { ReadModels } from '../read-store/read-models';

interface CachedCredential {
  readonly principal: Principal;
  readonly expiresAt: number;
}

const MAX_CACHED = 10_000;

/**
 * Bearer token → principal, from the `credentials` and `users` read models. A credential of another
 * tenant, an expired one, or one of a deactivated user is worth nothing.
 *
 * Principals are cached, stamped with the identity projection's position: any identity event (a revoked
 * token, a deactivated user) moves it and empties the cache, so a revocation applies on the next request.
 */
export function tokenAuthenticator(
  readModels: ReadModels,
  identityPosition: () => Promise<bigint> | bigint,
  now: () => number = Date.now,
) {
  const cache = new Map<string, CachedCredential | null>();
  let cachedAt = -1n;

  async function load(tenant: string, tokenHash: string): Promise<CachedCredential | null> {
    const credential = await readModels.get(tenant, READ_MODELS.credentials, tokenHash);
    if (!credential) return null;
    const user = await readModels.get(
      tenant,
      READ_MODELS.users,
      documentId(tenant, Number(credential.userId)),
    );
    if (!user || user.active !== true) return null;
    return {
      expiresAt: typeof credential.expiresAt === 'string' ? Date.parse(credential.expiresAt) : Infinity,
      principal: {
        tenant,
        userId: String(user.userId),
        role: user.role as Role,
        credential: {
          kind: credential.bootstrap === true ? 'bootstrap-token' : 'api-token',
          id: `token:${String(credential.tokenId)}`,
        },
        ...(credential.permissions
          ? { credentialPermissions: credential.permissions as ModulePermissions }
          : {}),
      },
    };
  }

  return async (tenant: string, token: string): Promise<Principal | null> => {
    if (token.length > 512) return null;
    const position = await identityPosition();
    if (position !== cachedAt) {
      cache.clear();
      cachedAt = position;
    }
    // Keyed by the token itself (in this process's memory only) so a hit costs no hashing.
    const key = `${tenant} ${token}`;
    let entry = cache.get(key);
    if (entry === undefined) {
      entry = await load(tenant, hashToken(token));
      if (cache.size >= MAX_CACHED) cache.clear();
      cache.set(key, entry);
    }
    if (!entry || entry.expiresAt <= now()) return null;
    return entry.principal;
  };
}
