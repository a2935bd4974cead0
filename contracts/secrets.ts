import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Bearer secrets: a recognisable prefix, 256 random bits in base62, and a CRC-32 checksum (so leaked tokens
 * are easy to scan for and mistyped ones are caught before any lookup). Only their SHA-256 is ever stored
 * (a fast hash is right here: the value has full entropy, unlike a password).
 */
export const API_TOKEN_PREFIX = 'rpt_';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const TOKEN_SHAPE = new RegExp(`^${API_TOKEN_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

/** 43 base62 characters: 256 bits, drawn without modulo bias. */
function randomBase62(length: number): string {
  let text = '';
  while (text.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: bytes above it would favour the first characters.
      if (byte < 248 && text.length < length) text += BASE62[byte % 62];
    }
  }
  return text;
}

function checksumOf(body: string): string {
  let value = crc32(body);
  let text = '';
  for (let index = 0; index < CHECKSUM_LENGTH; index++) {
    text = BASE62[value % 62] + text;
    value = Math.floor(value / 62);
  }
  return text;
}

export function newApiToken(): string {
  const body = randomBase62(BODY_LENGTH);
  return `${API_TOKEN_PREFIX}${body}${checksumOf(body)}`;
}

/**
 * False only for a value shaped like a token of ours whose checksum does not match: a typo or a forgery,
 * refused without a lookup. Other values (a bootstrap token chosen in `ADMIN_TOKEN`) are looked up as usual.
 */
export function passesChecksum(token: string): boolean {
  if (!TOKEN_SHAPE.test(token)) return true;
  const body = token.slice(API_TOKEN_PREFIX.length, API_TOKEN_PREFIX.length + BODY_LENGTH);
  return token.endsWith(checksumOf(body));
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** What a token is shown as after its creation: prefix and last four characters. */
export function tokenDisplay(token: string): { prefix: string; last4: string } {
  return {
    prefix: token.startsWith(API_TOKEN_PREFIX) ? API_TOKEN_PREFIX : token.slice(0, 4),
    last4: token.slice(-4),
  };
}

/** Session ids and CSRF tokens: 256 random bits; only their SHA-256 is stored. */
export const SESSION_PREFIX = 'rps_';

export function newSessionToken(): string {
  return SESSION_PREFIX + randomBytes(32).toString('base64url');
}

export function newCsrfToken(): string {
  return randomBytes(32).toString('base64url');
}
