import { HashAlgorithms, KeyEncodings } from '@otplib/core';
import { authenticator, totp } from 'otplib';

/**
 * TOTP as RFC 6238 defines it and authenticator apps expect: SHA-1, 6 digits, 30-second steps, one step of
 * clock drift either way. Codes of a step at or before `afterTimeStep` are refused (replay).
 */
const STEP_SECONDS = 30;

export function newTotpSecret(): string {
  // 20 bytes: 160 bits, as RFC 4226 recommends (otplib's default is 10).
  return authenticator.generateSecret(20);
}

export function totpUri(issuer: string, account: string, secret: string): string {
  return authenticator.keyuri(account, issuer, secret);
}

/** The step of a valid code (not spent), else null. */
export function verifyTotp(
  secret: string,
  code: string,
  afterTimeStep: number,
  epochSeconds: number,
): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const checker = authenticator.clone({
    epoch: epochSeconds * 1000,
    step: STEP_SECONDS,
    window: 1,
    digits: 6,
  });
  const delta = checker.checkDelta(code, secret);
  if (delta === null) return null;
  const timeStep = Math.floor(epochSeconds / STEP_SECONDS) + delta;
  return timeStep > afterTimeStep ? timeStep : null;
}

const ALGORITHMS = {
  sha1: HashAlgorithms.SHA1,
  sha256: HashAlgorithms.SHA256,
  sha512: HashAlgorithms.SHA512,
};

/** A code for a base32 secret (`secret`), or for a raw key given as text (`rawKey`); tests and tools. */
export function totpCode(
  secret: string,
  epochSeconds: number,
  options: { digits?: 6 | 8; algorithm?: keyof typeof ALGORITHMS; rawKey?: boolean } = {},
): string {
  const settings = {
    epoch: epochSeconds * 1000,
    step: STEP_SECONDS,
    digits: options.digits ?? 6,
    algorithm: ALGORITHMS[options.algorithm ?? 'sha1'],
  };
  return options.rawKey
    ? totp.clone({ ...settings, encoding: KeyEncodings.ASCII }).generate(secret)
    : authenticator.clone(settings).generate(secret);
}
