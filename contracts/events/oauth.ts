import { z } from 'zod';
import { GRANT_TYPES } from '../oauth';
import type { EventDefinition } from './definition';

const clientId = z.string().min(1);
const grantTypes = z.array(z.enum(GRANT_TYPES));

/** An OAuth client: its secret only as a SHA-256 (the secret is 256 random bits, or at least 32 characters). */
export const oauthClientRegistered = z.object({
  clientId,
  clientName: z.string(),
  redirectUris: z.array(z.string()),
  scope: z.string(),
  grantTypes,
  secretHash: z.string().length(64),
});
export const oauthClientChanged = z.object({
  clientId,
  clientName: z.string().optional(),
  redirectUris: z.array(z.string()).optional(),
  scope: z.string().optional(),
  grantTypes: grantTypes.optional(),
});
export const oauthClientSecretSet = z.object({ clientId, secretHash: z.string().length(64) });
export const oauthClientDeleted = z.object({ clientId });

/**
 * A grant: one authorization (user, client, scope) from its code to its revocation, on a stream of its own
 * named after the code's hash. Codes and refresh tokens appear only as SHA-256.
 */
const grantId = z.string().regex(/^[0-9a-f]{32}$/);
const hash = z.string().length(64);
export const authorizationCodeIssued = z.object({
  grantId,
  clientId,
  userId: z.number().int().positive(),
  redirectUri: z.string(),
  scope: z.string(),
  codeHash: hash,
  /** The S256 PKCE challenge, or null for a code issued without one. */
  codeChallenge: z.string().nullable(),
  codeExpiresAt: z.iso.datetime(),
});
export const authorizationCodeRedeemed = z.object({
  grantId,
  refreshHash: hash,
  /** The refresh tokens of the grant stop working then, however often they are renewed (OA-27). */
  expiresAt: z.iso.datetime(),
});
export const refreshTokenRotated = z.object({
  grantId,
  previousRefreshHash: hash,
  refreshHash: hash,
  scope: z.string(),
});
export const oauthGrantRevoked = z.object({
  grantId,
  reason: z.enum(['code-replayed', 'refresh-reused', 'revoked']),
});

/**
 * A resource owner answered a consent page (OA-08), on a stream of its own named after the page's ticket: the
 * ticket is good for one answer. An allowed consent names the grant its code started.
 */
export const oauthConsentAnswered = z.object({
  ticketId: z.string().regex(/^[0-9a-f]{32}$/),
  clientId,
  userId: z.number().int().positive(),
  scope: z.string(),
  decision: z.enum(['allow', 'deny']),
  grantId: grantId.nullable(),
});

export type OAuthClientRegisteredData = z.infer<typeof oauthClientRegistered>;

export type OAuthClientEvent =
  | { type: 'OAuthClientRegistered'; data: OAuthClientRegisteredData }
  | { type: 'OAuthClientChanged'; data: z.infer<typeof oauthClientChanged> }
  | { type: 'OAuthClientSecretSet'; data: z.infer<typeof oauthClientSecretSet> }
  | { type: 'OAuthClientDeleted'; data: z.infer<typeof oauthClientDeleted> };

export type AuthorizationCodeIssuedData = z.infer<typeof authorizationCodeIssued>;
export type AuthorizationCodeRedeemedData = z.infer<typeof authorizationCodeRedeemed>;
export type RefreshTokenRotatedData = z.infer<typeof refreshTokenRotated>;

export type OAuthGrantEvent =
  | { type: 'AuthorizationCodeIssued'; data: AuthorizationCodeIssuedData }
  | { type: 'AuthorizationCodeRedeemed'; data: AuthorizationCodeRedeemedData }
  | { type: 'RefreshTokenRotated'; data: RefreshTokenRotatedData }
  | { type: 'OAuthGrantRevoked'; data: z.infer<typeof oauthGrantRevoked> };

export type OAuthConsentAnsweredData = z.infer<typeof oauthConsentAnswered>;
export type OAuthConsentEvent = { type: 'OAuthConsentAnswered'; data: OAuthConsentAnsweredData };

export const OAUTH_EVENTS: readonly EventDefinition[] = [
  { type: 'AuthorizationCodeIssued', version: 1, schema: authorizationCodeIssued },
  { type: 'AuthorizationCodeRedeemed', version: 1, schema: authorizationCodeRedeemed },
  { type: 'RefreshTokenRotated', version: 1, schema: refreshTokenRotated },
  { type: 'OAuthGrantRevoked', version: 1, schema: oauthGrantRevoked },
  { type: 'OAuthConsentAnswered', version: 1, schema: oauthConsentAnswered },
  { type: 'OAuthClientRegistered', version: 1, schema: oauthClientRegistered },
  { type: 'OAuthClientChanged', version: 1, schema: oauthClientChanged },
  { type: 'OAuthClientSecretSet', version: 1, schema: oauthClientSecretSet },
  { type: 'OAuthClientDeleted', version: 1, schema: oauthClientDeleted },
];
