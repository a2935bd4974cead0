import { totpCode, verifyTotp, newTotpSecret, totpUri } from '../../command-api/identity/totp';
import { createSealer } from '../../infra/secrets/sealer';

const SEEDS = {
  sha1: '12345678901234567890',
  sha256: '12345678901234567890123456789012',
  sha512: '1234567890123456789012345678901234567890123456789012345678901234',
};

describe('TOTP-01 RFC 6238 Appendix B test vectors', () => {
  test.each([
    [59, '94287082', '46119246', '90693936'],
    [1111111109, '07081804', '68084774', '25091201'],
    [1111111111, '14050471', '67062674', '99943326'],
    [1234567890, '89005924', '91819424', '93441116'],
    [2000000000, '69279037', '90698825', '38618901'],
    [20000000000, '65353130', '77737706', '47863826'],
  ])('at %i s: SHA1 %s, SHA256 %s, SHA512 %s', (time, sha1, sha256, sha512) => {
    expect(totpCode(SEEDS.sha1, time, { digits: 8, algorithm: 'sha1', rawKey: true })).toBe(sha1);
    expect(totpCode(SEEDS.sha256, time, { digits: 8, algorithm: 'sha256', rawKey: true })).toBe(sha256);
    expect(totpCode(SEEDS.sha512, time, { digits: 8, algorithm: 'sha512', rawKey: true })).toBe(sha512);
  });
});

describe('TOTP verification', () => {
  const secret = newTotpSecret();
  const now = 1_800_000_015;
  const step = Math.floor(now / 30);

  test('TOTP-01 SHA-1, 6 digits, 30 s steps, at most one step of drift either way', () => {
    expect(verifyTotp(secret, totpCode(secret, now), -1, now)).toBe(step);
    expect(verifyTotp(secret, totpCode(secret, now - 30), -1, now)).toBe(step - 1);
    expect(verifyTotp(secret, totpCode(secret, now + 30), -1, now)).toBe(step + 1);
    expect(verifyTotp(secret, totpCode(secret, now - 60), -1, now)).toBeNull();
    expect(verifyTotp(secret, totpCode(secret, now + 60), -1, now)).toBeNull();
    expect(totpUri('Records Platform (acme)', 'mia@example.com', secret)).toMatch(
      /^otpauth:\/\/totp\/Records%20Platform%20\(acme\):mia%40example\.com\?.*secret=[A-Z2-7]+/,
    );
  });

  test('TOTP-02 a used step, or an earlier one, is refused', () => {
    expect(verifyTotp(secret, totpCode(secret, now), step, now)).toBeNull();
    expect(verifyTotp(secret, totpCode(secret, now - 30), step, now)).toBeNull();
    expect(verifyTotp(secret, totpCode(secret, now + 30), step, now)).toBe(step + 1);
  });

  test('malformed codes are refused without a computation', () => {
    for (const code of ['', '12345', '1234567', 'abcdef', '12 456'])
      expect(verifyTotp(secret, code, -1, now)).toBeNull();
  });

  test('TOTP-03 seeds are 160 random bits, and sealed at rest with an authenticated cipher', () => {
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(newTotpSecret()).not.toBe(secret);
    const sealer = createSealer(Buffer.alloc(32, 7));
    const sealed = sealer.seal(secret);
    expect(sealed).not.toContain(secret);
    expect(sealer.open(sealed)).toBe(secret);
    const parts = sealed.split('.');
    parts[3] = (parts[3]![0] === 'A' ? 'B' : 'A') + parts[3]!.slice(1);
    expect(() => sealer.open(parts.join('.'))).toThrow();
    expect(() => createSealer(Buffer.alloc(32, 8)).open(sealed)).toThrow();
  });
});
