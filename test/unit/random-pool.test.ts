import fc from 'fast-check';
import { pooledRandomBase64url, pooledRandomBytes } from '../../infra/secrets/random-pool';

describe('pooled random bytes', () => {
  test('any size answers that many bytes, each answer its own copy, never one handed out before', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(fc.integer({ min: 8, max: 5000 }), (size) => {
        const bytes = pooledRandomBytes(size);
        expect(bytes).toHaveLength(size);
        const hex = bytes.toString('hex');
        expect(seen.has(hex)).toBe(false);
        seen.add(hex);
        // A copy: changing it changes nothing that is handed out next.
        bytes.fill(0);
        expect(pooledRandomBytes(size).equals(Buffer.alloc(size))).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  test('across refills of the pool the bytes stay spread (no run of zeros, no repeated block)', () => {
    const blocks = Array.from({ length: 2000 }, () => pooledRandomBytes(12).toString('hex'));
    expect(new Set(blocks).size).toBe(blocks.length);
    const all = Buffer.from(blocks.join(''), 'hex');
    const zeros = all.filter((byte) => byte === 0).length;
    // 24,000 uniform bytes hold about 94 zeros; wiped pool bytes handed out would show as thousands.
    expect(zeros).toBeLessThan(300);
  });

  test('a size that is not a byte count is refused', () => {
    expect(() => pooledRandomBytes(-1)).toThrow(RangeError);
    expect(() => pooledRandomBytes(1.5)).toThrow(RangeError);
    expect(pooledRandomBytes(0)).toHaveLength(0);
  });

  test('as base64url: that many bytes written out, never one handed out before, from the same pool', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(fc.integer({ min: 6, max: 3000 }), (size) => {
        const text = pooledRandomBase64url(size);
        const bytes = Buffer.from(text, 'base64url');
        expect(bytes).toHaveLength(size);
        expect(bytes.toString('base64url')).toBe(text);
        expect(seen.has(text)).toBe(false);
        seen.add(text);
        // Between ids, the bytes handed out as buffers are others still.
        expect(pooledRandomBytes(size).toString('base64url')).not.toBe(text);
      }),
      { numRuns: 300 },
    );
    expect(() => pooledRandomBase64url(-1)).toThrow(RangeError);
    expect(pooledRandomBase64url(9)).toMatch(/^[A-Za-z0-9_-]{12}$/);
  });
});
