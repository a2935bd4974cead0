import type { CredentialSource, ModulePermissions, Principal, Role } from '../../contracts/auth';
import { PlatformError } from '../../contracts/errors';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import { hashToken, passesChecksum, SESSION_PREFIX } from '../../contracts/secrets';
import type { Document } from '../../contracts/read-model-changes';
import type { ReadModels } from '../read-store/read-models';
import type { SessionActivity } from './session-activity';
import type { AccessTokens } from '../secrets/access-tokens';
import { permissionsOfScope } from '../../contracts/oauth';

interface CachedCredential {
  readonly principal: Principal;
  /** Absolute end (ms): a token's expiry, a session's cap. */
  readonly expiresAt: number;
  /** Sessions only. */
  readonly session?: { readonly key: string; readonly startedAt: number; readonly csrfHash: string };
}

/**
 * Credentials that resolved, and those that did not, are cached apart: anyone can send any number of made-up
 * credentials, and filling the refused ones' room must not empty everyone's (each system's) cached principals.
 */
const MAX_CACHED = 10_000;
const MAX_CACHED_REFUSALS = 10_000;

export interface AuthenticatorOptions {
  /** The identity projection's position: the cache's stamp. */
  readonly identityPosition: () => Promise<bigint> | bigint;
  /**
   * Waits until the identity and OAuth read models include every credential write acknowledged so far, by
   * any process, so a token revoked or a user deactivated a moment ago is refused on the very next request.
   */
  readonly awaitCredentialWrites?: () => Promise<void>;
  /** OAuth access tokens: verifies their signature and expiry (their grant and client are checked here). */
  readonly accessTokens?: AccessTokens;
  /** Sessions: the sliding idle timeout and where their last use is kept. */
  readonly sessions?: { readonly idleMs: number; readonly activity: SessionActivity };
  readonly now?: () => number;
}

/** `Bearer <token>` in `Authorization` or `X-Authorization`: the token. */
export const BEARER_CREDENTIAL = /^Bearer\s+(\S+)\s*$/i;

/**
 * How a credential came: `csrfToken` is set (possibly null: missing) when a session cookie authenticates a
 * request that changes something, which then needs the session's CSRF token (SE-04).
 */
export interface CredentialPresentation {
  readonly csrfToken?: string | null;
}

/** What the principal takes from its user: current rights (bounding every credential) and credential order. */
function userRights(user: Document): Pick<Principal, 'userPermissions' | 'credentialOrder'> {
  return {
    ...(user.role !== 'admin' && user.permissions
      ? { userPermissions: user.permissions as ModulePermissions }
      : {}),
    ...(Array.isArray(user.tokenPriority) && { credentialOrder: user.tokenPriority as CredentialSource[] }),
  };
}

/**
 * Bearer token or session id → principal, from the `credentials`, `sessions` and `users` read models. A
 * credential of another tenant, an expired one, or one of a deactivated user is worth nothing; a session
 * also ends after `idleMs` without use.
 *
 * Principals are cached, stamped with the identity projection's position: any identity event (a revoked
 * token, a deactivated user, a logout) moves it and empties the cache, so a revocation applies on the next
 * request.
 */
export function tokenAuthenticator(readModels: ReadModels, options: AuthenticatorOptions) {
  const now = options.now ?? Date.now;
  const cache = new Map<string, CachedCredential>();
  const refused = new Set<string>();
  let cachedAt = -1n;

  async function activeUser(tenant: string, userId: unknown): Promise<Document | null> {
    const user = await readModels.get(tenant, READ_MODELS.users, documentId(tenant, Number(userId)));
    return user && user.active === true ? user : null;
  }

  async function loadToken(tenant: string, tokenHash: string): Promise<CachedCredential | null> {
    const credential = await readModels.get(tenant, READ_MODELS.credentials, tokenHash);
    const user = credential ? await activeUser(tenant, credential.userId) : null;
    if (!credential || !user) return null;
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
        ...userRights(user),
        ...(credential.permissions
          ? { credentialPermissions: credential.permissions as ModulePermissions }
          : {}),
      },
    };
  }

  async function loadSession(tenant: string, sessionHash: string): Promise<CachedCredential | null> {
    const session = await readModels.get(tenant, READ_MODELS.sessions, sessionHash);
    const user = session ? await activeUser(tenant, session.userId) : null;
    if (!session || !user) return null;
    return {
      expiresAt: Date.parse(String(session.absoluteExpiresAt)),
      session: {
        key: `${tenant}.${sessionHash}`,
        startedAt: Date.parse(String(session.createdAt)),
        csrfHash: String(session.csrfHash),
      },
      principal: {
        tenant,
        userId: String(user.userId),
        role: user.role as Role,
        credential: { kind: 'session', id: `session:${sessionHash.slice(0, 16)}`, sessionHash },
        ...userRights(user),
      },
    };
  }

  /** An OAuth access token is good while its grant is active and its client registered (OA: deleting a client kills its tokens). */
  async function loadAccessToken(tenant: string, token: string): Promise<CachedCredential | null> {
    const claims = options.accessTokens?.verify(token);
    if (!claims || claims.tenant !== tenant) return null;
    const grant = await readModels.get(tenant, READ_MODELS.oauthGrants, documentId(tenant, claims.grantId));
    const client = await readModels.get(
      tenant,
      READ_MODELS.oauthClients,
      documentId(tenant, claims.clientId),
    );
    const user = await activeUser(tenant, claims.userId);
    if (grant?.status !== 'active' || grant.clientId !== claims.clientId || !client || !user) return null;
    const scoped = permissionsOfScope(claims.scope);
    return {
      expiresAt: claims.exp * 1000,
      principal: {
        tenant,
        userId: String(user.userId),
        role: user.role as Role,
        credential: { kind: 'oauth-access-token', id: `oauth:${claims.grantId}`, clientId: claims.clientId },
        ...userRights(user),
        ...(scoped && { credentialPermissions: scoped }),
      },
    };
  }

  /** Whether the session was used within the idle timeout (here, or in another process). */
  async function stillActive(
    session: NonNullable<CachedCredential['session']>,
    at: number,
  ): Promise<boolean> {
    if (!options.sessions) return false;
    const { idleMs, activity } = options.sessions;
    const here = activity.seenHere(session.key);
    if (here !== null && at - here <= idleMs) return true;
    const lastSeen = Math.max((await activity.lastSeen(session.key)) ?? 0, session.startedAt);
    return at - lastSeen <= idleMs;
  }

  return async (
    tenant: string,
    token: string,
    presentation: CredentialPresentation = {},
  ): Promise<Principal | null> => {
    const isSession = token.startsWith(SESSION_PREFIX);
    // Access tokens are JWTs: a JSON header, base64url, always begins with `eyJ`.
    const isAccessToken = token.startsWith('eyJ');
    if (token.length > 2048 || (!isSession && !isAccessToken && !passesChecksum(token))) return null;
    if (options.awaitCredentialWrites) await options.awaitCredentialWrites();
    const stamp = options.identityPosition();
    const position = typeof stamp === 'bigint' ? stamp : await stamp;
    if (position !== cachedAt) {
      cache.clear();
      refused.clear();
      cachedAt = position;
    }
    // Keyed by the token itself (in this process's memory only) so a hit costs no hashing.
    const key = `${tenant} ${token}`;
    if (refused.has(key)) return null;
    let entry = cache.get(key);
    if (entry === undefined) {
      const loaded = isSession
        ? await loadSession(tenant, hashToken(token))
        : isAccessToken
          ? await loadAccessToken(tenant, token)
          : await loadToken(tenant, hashToken(token));
      if (loaded === null) {
        if (refused.size >= MAX_CACHED_REFUSALS) refused.clear();
        refused.add(key);
        return null;
      }
      if (cache.size >= MAX_CACHED) cache.clear();
      cache.set(key, loaded);
      entry = loaded;
    }
    const at = now();
    if (!entry || entry.expiresAt <= at) return null;
    if (entry.session) {
      if (!(await stillActive(entry.session, at))) {
        options.sessions?.activity.forget(entry.session.key);
        return null;
      }
      if (
        presentation.csrfToken !== undefined &&
        hashToken(presentation.csrfToken ?? '') !== entry.session.csrfHash
      )
        throw new PlatformError(
          'forbidden',
          'a request signed in by the session cookie that changes something needs the X-CSRF-Token header of the login answer',
        );
      options.sessions?.activity.touch(entry.session.key, at);
    }
    return entry.principal;
  };
}
