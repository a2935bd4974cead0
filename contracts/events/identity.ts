import { z } from 'zod';
import { OPERATIONS } from '../auth';
import type { EventDefinition } from './definition';

const operation = z.enum(OPERATIONS as ['create', 'read', 'update', 'delete']);
export const modulePermissionsSchema = z.record(z.string().min(1).max(64), z.array(operation));

/** Users and their credentials. Secrets enter events only as hashes. */
export const userRegistered = z.object({
  userId: z.number().int().positive(),
  email: z.email(),
  name: z.string().max(200),
  role: z.enum(['admin', 'member']),
  /** scrypt hash `scrypt$N$r$p$salt$hash`, or null for a user who signs in only by token. */
  passwordHash: z.string().nullable(),
});

export const apiTokenIssued = z.object({
  userId: z.number().int().positive(),
  tokenId: z.string().min(1),
  name: z.string().max(200),
  /** SHA-256 of the token value, hex. The value itself is shown once and never stored. */
  tokenHash: z.string().length(64),
  prefix: z.string(),
  last4: z.string().length(4),
  permissions: modulePermissionsSchema.nullable(),
  expiresAt: z.iso.datetime().nullable(),
  bootstrap: z.boolean(),
});

export const apiTokenRevoked = z.object({
  userId: z.number().int().positive(),
  tokenId: z.string().min(1),
  tokenHash: z.string().length(64),
});

export type UserRegisteredData = z.infer<typeof userRegistered>;
export type ApiTokenIssuedData = z.infer<typeof apiTokenIssued>;
export type ApiTokenRevokedData = z.infer<typeof apiTokenRevoked>;

export type IdentityEvent =
  | { type: 'UserRegistered'; data: UserRegisteredData }
  | { type: 'ApiTokenIssued'; data: ApiTokenIssuedData }
  | { type: 'ApiTokenRevoked'; data: ApiTokenRevokedData };

export const IDENTITY_EVENTS: readonly EventDefinition[] = [
  { type: 'UserRegistered', version: 1, schema: userRegistered },
  { type: 'ApiTokenIssued', version: 1, schema: apiTokenIssued },
  { type: 'ApiTokenRevoked', version: 1, schema: apiTokenRevoked },
];
