import { createHash, randomBytes } from 'node:crypto';

/**
 * Bearer secrets: a recognisable prefix plus 256 random bits. Only their SHA-256 is ever stored (a fast
 * hash is right here: the value has full entropy, unlike a password).
 */
export const API_TOKEN_PREFIX = 'rpt_';

export function newApiToken(): string {
  return API_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
