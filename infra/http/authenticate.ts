import type { ModulePermissions, Principal, Role } from '../../contracts/auth';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import { hashToken } from '../../contracts/secrets';
import type { ReadModels } from '../read-store/read-models';

/**
 * Bearer token → principal, from the `credentials` and `users` read models. A credential of another
 * tenant, an expired one, or one of a deactivated user is worth nothing.
 */
export function tokenAuthenticator(readModels: ReadModels, now: () => number = Date.now) {
  return async (tenant: string, token: string): Promise<Principal | null> => {
    if (token.length > 512) return null;
    const credential = await readModels.get(tenant, READ_MODELS.credentials, hashToken(token));
    if (!credential) return null;
    if (typeof credential.expiresAt === 'string' && Date.parse(credential.expiresAt) <= now()) return null;
    const user = await readModels.get(tenant, READ_MODELS.users, documentId(tenant, Number(credential.userId)));
    if (!user || user.active !== true) return null;
    return {
      tenant,
      userId: String(user.userId),
      role: user.role as Role,
      credential: { kind: credential.bootstrap === true ? 'bootstrap-token' : 'api-token', id: `token:${String(credential.tokenId)}` },
      ...(credential.permissions ? { credentialPermissions: credential.permissions as ModulePermissions } : {}),
    };
  };
}
