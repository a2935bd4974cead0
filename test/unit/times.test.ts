import fc from 'fast-check';
import { rfc3339Moment } from '../../contracts/times';

/** Years 0000 to 9999: what RFC 3339's four digits can spell. */
const moments = fc.date({
  min: new Date('0000-01-02T00:00:00.000Z'),
  max: new Date('9999-12-30T23:59:59.999Z'),
  noInvalidDate: true,
});

/** The moment as written at an offset of `minutes` east of UTC. */
function writtenAt(moment: Date, minutes: number): string {
  const local = new Date(moment.getTime() + minutes * 60_000).toISOString().slice(0, -1);
  const sign = minutes < 0 ? '-' : '+';
  const magnitude = Math.abs(minutes);
  const hours = String(Math.floor(magnitude / 60)).padStart(2, '0');
  return `${local}${sign}${hours}:${String(magnitude % 60).padStart(2, '0')}`;
}

describe('rfc3339Moment', () => {
  it('given any moment written in UTC or at any offset, T and Z in either case, when read, then it is that moment', () => {
    fc.assert(
      fc.property(moments, fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }), (moment, offset) => {
        const utc = moment.toISOString();
        expect(rfc3339Moment(utc)?.getTime()).toBe(moment.getTime());
        expect(rfc3339Moment(utc.toLowerCase())?.getTime()).toBe(moment.getTime());
        expect(rfc3339Moment(writtenAt(moment, offset))?.getTime()).toBe(moment.getTime());
      }),
      { numRuns: 2000 },
    );
  });

  it('given a fraction finer than a millisecond, when read, then it is cut to its millisecond', () => {
    expect(rfc3339Moment('2026-11-27T12:00:00.123999999Z')).toEqual(new Date('2026-11-27T12:00:00.123Z'));
    expect(rfc3339Moment('2026-11-27T12:00:00.5Z')).toEqual(new Date('2026-11-27T12:00:00.500Z'));
    expect(rfc3339Moment('2026-11-27T12:00:00-00:00')).toEqual(new Date('2026-11-27T12:00:00Z'));
  });

  it('given a leap second at the end of a UTC day, at any offset, when read, then it is that day’s last millisecond', () => {
    const last = new Date('2016-12-31T23:59:59.999Z');
    expect(rfc3339Moment('2016-12-31T23:59:60Z')).toEqual(last);
    expect(rfc3339Moment('2016-12-31t23:59:60.5z')).toEqual(last);
    expect(rfc3339Moment('2016-12-31T15:59:60-08:00')).toEqual(last);
    expect(rfc3339Moment('2017-01-01T00:29:60+00:30')).toEqual(last);
  });

  it.each([
    ['no offset', '2026-11-27T12:00:00'],
    ['a leap second elsewhere than a UTC day’s end', '2016-12-31T23:58:60Z'],
    ['a leap second at a local day’s end only', '2016-12-31T23:59:60+01:00'],
    ['29 February of a common year', '2026-02-29T00:00:00Z'],
    ['29 February of a century not divisible by 400', '1900-02-29T00:00:00Z'],
    ['31 April', '2026-04-31T00:00:00Z'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['day 0', '2026-11-00T00:00:00Z'],
    ['hour 24', '2026-11-27T24:00:00Z'],
    ['minute 60', '2026-11-27T12:60:00Z'],
    ['second 61', '2026-11-27T23:59:61Z'],
    ['an offset of 24 hours', '2026-11-27T12:00:00+24:00'],
    ['offset minutes 60', '2026-11-27T12:00:00+01:60'],
    ['an offset without its colon', '2026-11-27T12:00:00+0100'],
    ['a space for T', '2026-11-27 12:00:00Z'],
    ['no seconds', '2026-11-27T12:00Z'],
    ['an empty fraction', '2026-11-27T12:00:00.Z'],
    ['a five-digit year', '+12026-11-27T12:00:00Z'],
    ['a trailing space', '2026-11-27T12:00:00Z '],
    ['non-ASCII digits', '２026-11-27T12:00:00Z'],
    ['a fraction longer than any time needs', `2026-11-27T12:00:00.${'1'.repeat(60)}Z`],
  ])('given %s, when read, then it names no moment', (_, text) => {
    expect(rfc3339Moment(text)).toBeUndefined();
  });

  it('given 29 February of a leap year, when read, then it is that day', () => {
    expect(rfc3339Moment('2000-02-29T00:00:00Z')).toEqual(new Date('2000-02-29T00:00:00Z'));
    expect(rfc3339Moment('2024-02-29T00:00:00Z')).toEqual(new Date('2024-02-29T00:00:00Z'));
  });

  it('given any text, when read, then it names a valid moment or none, never throwing', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom(...'0123456789-+:.TZtz ') })),
        (text) => {
          const moment = rfc3339Moment(text);
          if (moment !== undefined) expect(Number.isNaN(moment.getTime())).toBe(false);
        },
      ),
      { numRuns: 5000 },
    );
  });
});
