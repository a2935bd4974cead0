/**
 * The `limit` of the semantic searches is bounded like every list's: any integer and any text either is a
 * limit from 1 to MAX_PAGE_SIZE in plain digits, or is refused with a 400 that names `limit`.
 */
import fc from 'fast-check';
import { MAX_PAGE_SIZE } from '../../contracts/query/list-params';
import { parseVectorParams, type VectorSearchKind } from '../../contracts/query/vector-params';
import { thrown } from '../support/thrown';

const KINDS: VectorSearchKind[] = ['similar', 'outliers', 'context'];

function withLimit(limit: string) {
  return { space_id: '1', query: 'late invoices', limit };
}

describe.each(KINDS)('%s: limit', (kind) => {
  it('given the reported 2147483648 or one past the list maximum, when parsed, then a 400 names limit', () => {
    for (const limit of ['2147483648', String(MAX_PAGE_SIZE + 1), String(Number.MAX_SAFE_INTEGER)]) {
      const error = thrown(() => parseVectorParams(withLimit(limit), kind));
      expect(error.kind).toBe('validation_failed');
      expect(error.message).toBe(`limit must be at most ${MAX_PAGE_SIZE}`);
    }
    expect(parseVectorParams(withLimit(String(MAX_PAGE_SIZE)), kind).limit).toBe(MAX_PAGE_SIZE);
  });

  it('given any integer, when parsed, then it is the limit exactly when it is from 1 to the list maximum', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n })), (n) => {
        const text = String(n);
        const inRange = BigInt(n) >= 1n && BigInt(n) <= BigInt(MAX_PAGE_SIZE);
        if (inRange) expect(parseVectorParams(withLimit(text), kind).limit).toBe(Number(n));
        else {
          const error = thrown(() => parseVectorParams(withLimit(text), kind));
          expect(error.kind).toBe('validation_failed');
          expect(error.message).toMatch(/^limit must be /);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('given any text, when parsed, then it is a limit in range or a 400 naming limit, never anything else', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.stringMatching(/^[0-9eE+.x -]{1,24}$/), fc.constant('1e9')),
        (text) => {
          let limit: number | undefined;
          try {
            limit = parseVectorParams(withLimit(text), kind).limit;
          } catch (error) {
            const refusal = thrown(() => {
              throw error;
            });
            expect(refusal.kind).toBe('validation_failed');
            expect(refusal.message).toMatch(/^limit must be /);
            return;
          }
          expect(Number.isInteger(limit)).toBe(true);
          expect(limit).toBeGreaterThanOrEqual(1);
          expect(limit).toBeLessThanOrEqual(MAX_PAGE_SIZE);
        },
      ),
      { numRuns: 300 },
    );
  });
});
