import { z } from 'zod';
import { credentialAllows, type Operation, type Principal } from './auth';

/** OAuth 2.0 clients: the shapes the spec gives (`OAuth2Client`) and the rules SECURITY.md sets for them. */
export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];
export const MAX_REDIRECT_URIS = 5;

/** An authorization code is good for 60 s (OA-14), a grant's refresh tokens for 30 days at most (OA-27). */
export const CODE_LIFETIME_SECONDS = 60;
export const GRANT_LIFETIME_DAYS = 30;
/** How long a consent page may stay open before its Allow / Deny is refused. */
export const CONSENT_TICKET_SECONDS = 600;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Why a redirect URI cannot be registered, or null: https, or http on a loopback host; nothing hidden in it. */
export function redirectUriProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)))
    return 'must be https (http only on a loopback address)';
  if (url.hash !== '' || value.includes('#')) return 'must not have a fragment';
  if (url.username !== '' || url.password !== '') return 'must not carry user information';
  if (value.includes('*')) return 'must not contain wildcards';
  return null;
}

/** Exact match, except the port of a loopback http redirect (RFC 8252 §7.3, RFC 9700 §2.1). */
export function redirectUriMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true;
  try {
    const a = new URL(registered);
    const b = new URL(requested);
    return (
      a.protocol === 'http:' &&
      b.protocol === 'http:' &&
      LOOPBACK_HOSTS.has(a.hostname) &&
      a.hostname === b.hostname &&
      a.pathname === b.pathname &&
      a.search === b.search &&
      b.username === '' &&
      b.password === '' &&
      !requested.includes('#') &&
      requested === `http://${b.host}${b.pathname}${b.search}`
    );
  } catch {
    return false;
  }
}

export const redirectUriSchema = z
  .string()
  .max(2000)
  .superRefine((value, ctx) => {
    const problem = redirectUriProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** Space-delimited scope tokens (RFC 6749 §3.3): printable ASCII without space, quote or backslash. */
export const scopeSchema = z
  .string()
  .max(1000)
  .regex(
    /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$|^$/,
    'must be scope tokens separated by single spaces',
  );

export const redirectUrisSchema = z
  .array(redirectUriSchema)
  .min(1, 'register at least one redirect URI')
  .max(MAX_REDIRECT_URIS, `at most ${MAX_REDIRECT_URIS} redirect URIs`)
  .refine((uris) => new Set(uris).size === uris.length, 'redirect URIs must be distinct');

export const grantTypesSchema = z
  .array(z.enum(GRANT_TYPES))
  .min(1)
  .refine((grants) => new Set(grants).size === grants.length, 'grant types must be distinct');

/** The OAuth error words (RFC 6749 §4.1.2.1, §5.2, RFC 7009/7662) the endpoints answer with. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'invalid_token'
  | 'temporarily_unavailable';

/** A refusal in OAuth's own shape (`{error, error_description}`), with its HTTP status. */
export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    message: string,
    readonly status = code === 'invalid_client' ? 401 : 400,
    /** For a 429: the Retry-After the answer carries. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'OAuthError';
  }
}

/**
 * Who may list and revoke OAuth grants (OA-33): the user who gave them, with a credential of their own that
 * allows `user` access. An OAuth access token never may: a client must not see or end its user's other grants.
 */
export function mayManageOwnGrants(principal: Principal, operation: Operation): boolean {
  return principal.credential.kind !== 'oauth-access-token' && credentialAllows(principal, 'user', operation);
}

/** Scope tokens `<family>:<operation>` narrow a token like an API token's permissions; others are the client's own. */
export function permissionsOfScope(
  scope: string,
): Record<string, Array<'create' | 'read' | 'update' | 'delete'>> | undefined {
  const permissions: Record<string, Array<'create' | 'read' | 'update' | 'delete'>> = {};
  for (const token of scope.split(' ')) {
    const match = /^([A-Za-z*][\w-]*):(create|read|update|delete)$/.exec(token);
    if (match) (permissions[match[1]!] ??= []).push(match[2] as 'create' | 'read' | 'update' | 'delete');
  }
  return Object.keys(permissions).length > 0 ? permissions : undefined;
}

export function scopeTokens(scope: string): string[] {
  return scope.split(' ').filter((token) => token.length > 0);
}

/** Whether every token of `requested` is among `allowed`. */
export function scopeWithin(requested: string, allowed: string): boolean {
  const granted = new Set(scopeTokens(allowed));
  return scopeTokens(requested).every((token) => granted.has(token));
}
