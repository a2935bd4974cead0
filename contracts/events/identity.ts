import { z } from 'zod';
import { CREDENTIAL_SOURCES, OPERATIONS } from '../auth';
import type { EventDefinition } from './definition';

const operation = z.enum(OPERATIONS as ['create', 'read', 'update', 'delete']);
export const modulePermissionsSchema = z.record(z.string().min(1).max(64), z.array(operation).readonly());

const userId = z.number().int().positive();
const role = z.enum(['admin', 'member']);

/** Users and their credentials. Secrets enter events only as hashes. */
export const userRegistered = z.object({
  userId,
  email: z.email(),
  name: z.string().max(200),
  role,
  /** scrypt hash `scrypt$N$r$p$salt$hash`, or null for a user who signs in only by token. */
  passwordHash: z.string().nullable(),
  /** A member's rights per module (absent or null: every module, as the role allows). */
  permissions: modulePermissionsSchema.nullable().optional(),
});

export const userChanged = z.object({
  userId,
  name: z.string().max(200).optional(),
  role: role.optional(),
  permissions: modulePermissionsSchema.nullable().optional(),
});
export const userPasswordSet = z.object({ userId, passwordHash: z.string() });
/** A deactivated user's credentials are worth nothing until the user is activated again. */
export const userDeactivated = z.object({ userId });
export const userActivated = z.object({ userId });

/**
 * A user's profile data (name, email) was erased: its data key destroyed, so they read as erased in every
 * event; the user is deactivated for good. Who and when are the metadata; the reason is kept.
 */
export const userErased = z.object({ userId, reason: z.string().min(1).max(1000) });

/** One email address per user of a tenant: its own stream, claimed by the user that holds it. */
export const emailClaimed = z.object({ email: z.email(), userId });

export const apiTokenIssued = z.object({
  userId,
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

/** The hash travels with every token event: the credentials read model is keyed by it. */
export const apiTokenChanged = z.object({
  userId,
  tokenId: z.string().min(1),
  tokenHash: z.string().length(64),
  name: z.string().max(200).optional(),
  permissions: modulePermissionsSchema.nullable().optional(),
  expiresAt: z.iso.datetime().nullable().optional(),
});

/** A signed-in session: only the hashes of its id and its CSRF token; it ends at `absoluteExpiresAt` at the latest. */
export const sessionStarted = z.object({
  userId,
  sessionHash: z.string().length(64),
  csrfHash: z.string().length(64),
  absoluteExpiresAt: z.iso.datetime(),
  /** The pending login (after a second factor) this session completed: each is used once. */
  pendingLogin: z.string().optional(),
});
export const sessionEnded = z.object({
  userId,
  sessionHash: z.string().length(64),
  reason: z.enum(['logout', 'password-changed', 'two-factor-changed', 'deactivated']),
});

/** Two-factor authentication: TOTP devices (their seeds sealed) and one-time recovery codes (hashed). */
const deviceId = z.uuid();
export const twoFactorDeviceAdded = z.object({
  userId,
  deviceId,
  name: z.string(),
  sealedSecret: z.string(),
});
/** `timeStep`: the TOTP step of the code that confirmed it; codes of that step or earlier are spent. */
export const twoFactorDeviceConfirmed = z.object({ userId, deviceId, timeStep: z.number().int() });
export const twoFactorDeviceRemoved = z.object({ userId, deviceId });
export const twoFactorCodeUsed = z.object({ userId, deviceId, timeStep: z.number().int() });
export const recoveryCodesIssued = z.object({ userId, codeHashes: z.array(z.string().length(64)) });
export const recoveryCodeUsed = z.object({ userId, codeHash: z.string().length(64) });

/** Which credential wins when a request carries several: a permutation of the three sources. */
export const tokenPriorityChanged = z.object({
  userId,
  order: z.array(z.enum(CREDENTIAL_SOURCES)).length(CREDENTIAL_SOURCES.length),
});

export const apiTokenRevoked = z.object({
  userId,
  tokenId: z.string().min(1),
  tokenHash: z.string().length(64),
});

export type UserRegisteredData = z.infer<typeof userRegistered>;
export type UserChangedData = z.infer<typeof userChanged>;
export type ApiTokenIssuedData = z.infer<typeof apiTokenIssued>;
export type ApiTokenChangedData = z.infer<typeof apiTokenChanged>;
export type ApiTokenRevokedData = z.infer<typeof apiTokenRevoked>;
export type SessionStartedData = z.infer<typeof sessionStarted>;

export type IdentityEvent =
  | { type: 'UserRegistered'; data: UserRegisteredData }
  | { type: 'UserChanged'; data: UserChangedData }
  | { type: 'UserPasswordSet'; data: z.infer<typeof userPasswordSet> }
  | { type: 'UserDeactivated'; data: z.infer<typeof userDeactivated> }
  | { type: 'UserActivated'; data: z.infer<typeof userActivated> }
  | { type: 'UserErased'; data: z.infer<typeof userErased> }
  | { type: 'ApiTokenIssued'; data: ApiTokenIssuedData }
  | { type: 'ApiTokenChanged'; data: ApiTokenChangedData }
  | { type: 'ApiTokenRevoked'; data: ApiTokenRevokedData }
  | { type: 'SessionStarted'; data: SessionStartedData }
  | { type: 'SessionEnded'; data: z.infer<typeof sessionEnded> }
  | { type: 'TwoFactorDeviceAdded'; data: z.infer<typeof twoFactorDeviceAdded> }
  | { type: 'TwoFactorDeviceConfirmed'; data: z.infer<typeof twoFactorDeviceConfirmed> }
  | { type: 'TwoFactorDeviceRemoved'; data: z.infer<typeof twoFactorDeviceRemoved> }
  | { type: 'TwoFactorCodeUsed'; data: z.infer<typeof twoFactorCodeUsed> }
  | { type: 'RecoveryCodesIssued'; data: z.infer<typeof recoveryCodesIssued> }
  | { type: 'RecoveryCodeUsed'; data: z.infer<typeof recoveryCodeUsed> }
  | { type: 'TokenPriorityChanged'; data: z.infer<typeof tokenPriorityChanged> };

export type EmailClaimEvent = { type: 'EmailClaimed'; data: z.infer<typeof emailClaimed> };

export const IDENTITY_EVENTS: readonly EventDefinition[] = [
  { type: 'UserRegistered', version: 1, schema: userRegistered },
  { type: 'UserChanged', version: 1, schema: userChanged },
  { type: 'UserPasswordSet', version: 1, schema: userPasswordSet },
  { type: 'UserDeactivated', version: 1, schema: userDeactivated },
  { type: 'UserActivated', version: 1, schema: userActivated },
  { type: 'UserErased', version: 1, schema: userErased },
  { type: 'EmailClaimed', version: 1, schema: emailClaimed },
  { type: 'ApiTokenIssued', version: 1, schema: apiTokenIssued },
  { type: 'ApiTokenChanged', version: 1, schema: apiTokenChanged },
  { type: 'ApiTokenRevoked', version: 1, schema: apiTokenRevoked },
  { type: 'SessionStarted', version: 1, schema: sessionStarted },
  { type: 'SessionEnded', version: 1, schema: sessionEnded },
  { type: 'TwoFactorDeviceAdded', version: 1, schema: twoFactorDeviceAdded },
  { type: 'TwoFactorDeviceConfirmed', version: 1, schema: twoFactorDeviceConfirmed },
  { type: 'TwoFactorDeviceRemoved', version: 1, schema: twoFactorDeviceRemoved },
  { type: 'TwoFactorCodeUsed', version: 1, schema: twoFactorCodeUsed },
  { type: 'RecoveryCodesIssued', version: 1, schema: recoveryCodesIssued },
  { type: 'RecoveryCodeUsed', version: 1, schema: recoveryCodeUsed },
  { type: 'TokenPriorityChanged', version: 1, schema: tokenPriorityChanged },
];
