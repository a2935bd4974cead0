import type { ModulePermissions, Principal, Role } from '../../contracts/auth';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import { hashToken, passesChecksum } from '../../contracts/secrets';
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
export interface AuthenticatorOptions {
  /** The identity projection's position: the cache's stamp. */
  readonly identityPosition: () => Promise<bigint> | bigint;
  /**
   * Waits until the identity read models include this process's own identity writes, so a token revoked or a
   * user deactivated a moment ago is refused on the very next request.
   */
  readonly awaitOwnIdentityWrites?: () => Promise<void>;
  readonly now?: () => number;
}

export function tokenAuthenticator(readModels: ReadModels, options: AuthenticatorOptions) {
  const now = options.now ?? Date.now;
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
        // The user's current rights bound every token of theirs: a change to them applies at once.
        ...(user.role !== 'admin' && user.permissions
          ? { userPermissions: user.permissions as ModulePermissions }
          : {}),
        ...(credential.permissions
          ? { credentialPermissions: credential.permissions as ModulePermissions }
          : {}),
      },
    };
  }

  return async (tenant: string, token: string): Promise<Principal | null> => {
    if (token.length > 512 || !passesChecksum(token)) return null;
    await options.awaitOwnIdentityWrites?.();
    const position = await options.identityPosition();
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
