/**
 * Who is calling, and what they may do. Every route asks `can(principal, module, operation)` before it
 * reads or writes; API tokens and OAuth scopes narrow a user's rights, never widen them.
 */
export type Operation = 'create' | 'read' | 'update' | 'delete';
export const OPERATIONS: readonly Operation[] = ['create', 'read', 'update', 'delete'];

export type Role = 'admin' | 'member';

/** Per-module CRUD grants, keyed by module name (`record`, `space`, …) or custom module id. `*` = all modules. */
export type ModulePermissions = Readonly<Record<string, readonly Operation[]>>;

export type CredentialKind = 'bootstrap-token' | 'api-token' | 'session' | 'oauth-access-token';

export interface Principal {
  readonly tenant: string;
  readonly userId: string;
  readonly role: Role;
  readonly credential: {
    readonly kind: CredentialKind;
    readonly id: string;
    readonly clientId?: string;
    /** The SHA-256 of the session id, for a session (so DELETE /auth can end it). */
    readonly sessionHash?: string;
  };
  /** The user's choice of which credential wins when a request carries several (`/auth/token-priority`). */
  readonly credentialOrder?: readonly CredentialSource[];
  /** The user's own rights (undefined = full rights of the role). */
  readonly userPermissions?: ModulePermissions;
  /** The credential's narrowing (undefined = as the user). */
  readonly credentialPermissions?: ModulePermissions;
}

function grants(permissions: ModulePermissions | undefined, module: string, operation: Operation): boolean {
  if (permissions === undefined) return true;
  const forModule = permissions[module] ?? permissions['*'];
  return forModule !== undefined && forModule.includes(operation);
}

/** What a user's role and rights allow, whatever credential they use (undefined rights: every module). */
export function userMay(
  user: { readonly role: Role; readonly permissions?: ModulePermissions | undefined },
  module: string,
  operation: Operation,
): boolean {
  return user.role === 'admin' || grants(user.permissions, module, operation);
}

export function can(principal: Principal, module: string, operation: Operation): boolean {
  return (
    userMay({ role: principal.role, permissions: principal.userPermissions }, module, operation) &&
    grants(principal.credentialPermissions, module, operation)
  );
}

export function isAdmin(principal: Principal): boolean {
  return principal.role === 'admin';
}

/**
 * What `requested` would grant beyond `limit` (`module:operation` entries; `*` when `requested` is unlimited
 * and `limit` is not). Empty: `requested` stays within `limit`.
 */
export function rightsBeyond(
  requested: ModulePermissions | undefined,
  limit: ModulePermissions | undefined,
): string[] {
  if (limit === undefined) return [];
  if (requested === undefined) return ['*'];
  return Object.entries(requested).flatMap(([module, operations]) =>
    operations
      .filter((operation) => !grants(limit, module, operation))
      .map((operation) => `${module}:${operation}`),
  );
}

/**
 * For what users do to their own account (password, two-factor, tokens): their role's rights do not matter,
 * but the credential in use must allow it (a token narrowed to records cannot mint tokens).
 */
export function credentialAllows(principal: Principal, module: string, operation: Operation): boolean {
  return grants(principal.credentialPermissions, module, operation);
}

/** Where a request's credential can come from. */
export const CREDENTIAL_SOURCES = ['authorization', 'x-authorization', 'cookie'] as const;
export type CredentialSource = (typeof CREDENTIAL_SOURCES)[number];
export const DEFAULT_CREDENTIAL_ORDER: readonly CredentialSource[] = CREDENTIAL_SOURCES;

/** A credential as presented: where it came from and whom it names (null: unknown, expired or revoked). */
export interface PresentedCredential {
  readonly source: CredentialSource;
  readonly principal: Principal | null;
}

export type CredentialChoice =
  | { readonly kind: 'none' }
  | { readonly kind: 'chosen'; readonly source: CredentialSource; readonly principal: Principal }
  | { readonly kind: 'invalid'; readonly source: CredentialSource }
  | { readonly kind: 'ambiguous' };

/**
 * Which of several credentials a request is made with. Credentials of different users (or systems) are never
 * mixed: that is refused. Otherwise the user's order (or the default: Authorization, X-Authorization, the
 * session cookie) picks the first one present, and if that one is worthless the request is refused rather
 * than quietly made with the next.
 */
export function chooseCredential(presented: readonly PresentedCredential[]): CredentialChoice {
  if (presented.length === 0) return { kind: 'none' };
  if (presented.length === 1) {
    const [only] = presented as [PresentedCredential];
    return only.principal
      ? { kind: 'chosen', source: only.source, principal: only.principal }
      : { kind: 'invalid', source: only.source };
  }
  const valid = presented.flatMap((credential) => (credential.principal ? [credential.principal] : []));
  const owners = new Set(valid.map((principal) => `${principal.tenant} ${principal.userId}`));
  if (owners.size > 1) return { kind: 'ambiguous' };
  const order = valid[0]?.credentialOrder ?? DEFAULT_CREDENTIAL_ORDER;
  const first = [...presented].sort((a, b) => order.indexOf(a.source) - order.indexOf(b.source))[0]!;
  return first.principal
    ? { kind: 'chosen', source: first.source, principal: first.principal }
    : { kind: 'invalid', source: first.source };
}

/**
 * Whether `principal` may act on account `userId` (its details, password, two-factor, tokens): users on their
 * own account need only a credential that allows it; others must be administrators with the right.
 */
export function mayActOnAccount(
  principal: Principal,
  userId: number,
  module: string,
  operation: Operation,
): boolean {
  return principal.userId === String(userId)
    ? credentialAllows(principal, module, operation)
    : isAdmin(principal) && can(principal, module, operation);
}
