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

export type OAuthClientRegisteredData = z.infer<typeof oauthClientRegistered>;

export type OAuthClientEvent =
  | { type: 'OAuthClientRegistered'; data: OAuthClientRegisteredData }
  | { type: 'OAuthClientChanged'; data: z.infer<typeof oauthClientChanged> }
  | { type: 'OAuthClientSecretSet'; data: z.infer<typeof oauthClientSecretSet> }
  | { type: 'OAuthClientDeleted'; data: z.infer<typeof oauthClientDeleted> };

export const OAUTH_EVENTS: readonly EventDefinition[] = [
  { type: 'OAuthClientRegistered', version: 1, schema: oauthClientRegistered },
  { type: 'OAuthClientChanged', version: 1, schema: oauthClientChanged },
  { type: 'OAuthClientSecretSet', version: 1, schema: oauthClientSecretSet },
  { type: 'OAuthClientDeleted', version: 1, schema: oauthClientDeleted },
];
