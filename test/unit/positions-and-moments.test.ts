import fc from 'fast-check';
import { PlatformError } from '../../contracts/errors';
import { replaySubscriptionBody } from '../../contracts/api/subscriptions';
import { canonicalPosition, LARGEST_POSITION } from '../../contracts/positions';
import { pastMomentOf } from '../../contracts/query/as-of';
import { thrown } from '../support/thrown';

/** Spellings of positions that name none: a leading zero, a sign, beyond 2^64 − 1. */
const notCanonical = fc.oneof(
  fc.bigInt({ min: 0n, max: LARGEST_POSITION }).map((position) => `0${position}`),
  fc.bigInt({ min: 0n, max: LARGEST_POSITION }).map((position) => `+${position}`),
  fc.bigInt({ min: 1n, max: LARGEST_POSITION }).map((position) => `-${position}`),
  fc.bigInt({ min: LARGEST_POSITION + 1n, max: 10n ** 30n }).map(String),
);

describe('canonicalPosition', () => {
  it('given any position from 0 to 2^64 − 1 written plainly, when read, then it is that position', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: LARGEST_POSITION }), (position) => {
        expect(canonicalPosition(position.toString())).toBe(position);
      }),
    );
  });

  it('given any other text, when read, then it names no position', () => {
    fc.assert(
      fc.property(fc.oneof(notCanonical, fc.string()), (text) => {
        const position = canonicalPosition(text);
        if (position !== undefined) expect(position.toString()).toBe(text);
      }),
    );
    for (const text of ['', ' 7', '7 ', '7.0', '7e0', '0x7', '０', '18446744073709551616'])
      expect(canonicalPosition(text)).toBeUndefined();
  });
});

describe('a subscription replay from a position or a time', () => {
  it('given a position in its one spelling or an RFC 3339 time, when validated, then it is taken; else refused', () => {
    for (const from of [
      '0',
      '7',
      LARGEST_POSITION.toString(),
      '2026-11-27T09:00:00Z',
      '2026-11-27t09:00:00z',
    ])
      expect(replaySubscriptionBody.safeParse({ from }).success).toBe(true);
    fc.assert(
      fc.property(notCanonical, (from) => {
        expect(replaySubscriptionBody.safeParse({ from }).success).toBe(false);
      }),
    );
  });
});

/** The parameters a refusal names (its details' paths). */
function namedIn(error: PlatformError): string[] {
  return (error.details as { path: string }[]).map((detail) => detail.path);
}

describe('pastMomentOf', () => {
  it('given no moment, or empty ones, when parsed, then it reads the present', () => {
    expect(pastMomentOf({})).toBeUndefined();
    expect(pastMomentOf(undefined)).toBeUndefined();
    expect(pastMomentOf({ asOf: '', atPosition: ' ' })).toBeUndefined();
  });

  it('given any position from 0 to 2^64 − 1 in its canonical spelling, when parsed, then it is that position', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: LARGEST_POSITION }), (position) => {
        expect(pastMomentOf({ atPosition: position.toString() })).toEqual({ kind: 'position', position });
      }),
    );
  });

  it('given a position with a leading zero, a sign or beyond 2^64 − 1, when parsed, then a 400 names atPosition', () => {
    fc.assert(
      fc.property(notCanonical, (atPosition) => {
        const error = thrown(() => pastMomentOf({ atPosition }));
        expect(error.kind).toBe('validation_failed');
        expect(namedIn(error)).toEqual(['atPosition']);
      }),
    );
  });

  it('given any text as either parameter, when parsed, then a valid moment or a 400 naming that parameter', () => {
    const texts = fc.oneof(
      fc.string(),
      fc.string({ unit: fc.constantFrom(...'0123456789-+:.TZtz ') }),
      fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
    );
    fc.assert(
      fc.property(fc.constantFrom('asOf', 'atPosition'), texts, (name, text) => {
        let moment: ReturnType<typeof pastMomentOf>;
        try {
          moment = pastMomentOf({ [name]: text });
        } catch (error) {
          expect(error).toBeInstanceOf(PlatformError);
          expect((error as PlatformError).kind).toBe('validation_failed');
          expect(namedIn(error as PlatformError)).toEqual([name]);
          return;
        }
        if (moment === undefined) expect(text.trim()).toBe('');
        else if (moment.kind === 'time') expect(Number.isNaN(moment.at.getTime())).toBe(false);
        else expect(moment.position >= 0n && moment.position <= LARGEST_POSITION).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('given a time with its offset, when parsed, then it is that instant; without one, a 400 names asOf', () => {
    expect(pastMomentOf({ asOf: '2026-11-27T13:00:00+01:00' })).toEqual({
      kind: 'time',
      at: new Date('2026-11-27T12:00:00Z'),
    });
    expect(pastMomentOf({ asOf: '2026-11-27t12:00:00z' })).toEqual({
      kind: 'time',
      at: new Date('2026-11-27T12:00:00Z'),
    });
    expect(pastMomentOf({ asOf: '2016-12-31T23:59:60Z' })).toEqual({
      kind: 'time',
      at: new Date('2016-12-31T23:59:59.999Z'),
    });
    expect(namedIn(thrown(() => pastMomentOf({ asOf: '2026-11-27T12:00:00' })))).toEqual(['asOf']);
    expect(namedIn(thrown(() => pastMomentOf({ asOf: '2026-02-29T00:00:00Z' })))).toEqual(['asOf']);
  });

  it('given both parameters, when parsed, then a 400 names atPosition', () => {
    const error = thrown(() => pastMomentOf({ asOf: '2026-11-27T12:00:00Z', atPosition: '5' }));
    expect(namedIn(error)).toEqual(['atPosition']);
  });
});
