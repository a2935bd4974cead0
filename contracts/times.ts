/**
 * The one rule for a moment a request names as a time (`asOf`, a subscription replay's `from`, a token's
 * `expiresAt`): an RFC 3339 `date-time` (§5.6), so with its offset (`Z` or `±hh:mm`: a time without one names
 * no moment), `T` and `Z` in either case, a fraction of any length, and a leap second (`:60`) at the end of a
 * UTC day (§5.7).
 */
import { z } from 'zod';

/** Linear to match (no nested repetition); the parts are checked by `rfc3339Moment`. */
const RFC_3339_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** Far longer than any time needs; a longer text is refused before it is read. */
const LONGEST_TIME = 64;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leapYear = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leapYear ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/** Milliseconds since the epoch of a UTC calendar time (`Date.UTC` would read years 0 to 99 as 1900 on). */
function utcMilliseconds(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
) {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

/**
 * The moment `text` names, else undefined. JavaScript's time has no leap second: `23:59:60` and its
 * fractions read as the day's last millisecond, after everything that happened that day. A fraction finer
 * than a millisecond is cut to the millisecond it falls in.
 */
export function rfc3339Moment(text: string): Date | undefined {
  if (text.length > LONGEST_TIME) return undefined;
  const parts = RFC_3339_DATE_TIME.exec(text);
  if (!parts) return undefined;
  const [year, month, day, hour, minute, second] = parts.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const [offsetHours, offsetMinutes] = [Number(parts[9] ?? 0), Number(parts[10] ?? 0)];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 60 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const offset = (parts[8] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  const milliseconds = Number((parts[7] ?? '').padEnd(3, '0').slice(0, 3));
  const at = utcMilliseconds(year, month, day, hour, minute, Math.min(second, 59)) - offset;
  if (second < 60) return new Date(at + milliseconds);
  const utc = new Date(at);
  if (utc.getUTCHours() !== 23 || utc.getUTCMinutes() !== 59) return undefined;
  return new Date(at + 999);
}

/** How a refusal describes the spelling. */
export const RFC_3339_TEXT_FORM = 'an RFC 3339 time with its offset, like 2026-11-27T12:00:00Z';

/**
 * A time in a request body or query: the text as sent, known to name a moment (`rfc3339Moment`). A text that
 * does not stops here, so checks chained after it may take the moment as given.
 */
export const rfc3339Time = z
  .string()
  .refine((text) => rfc3339Moment(text) !== undefined, {
    error: `must be ${RFC_3339_TEXT_FORM}`,
    abort: true,
  })
  .meta({ format: 'date-time' });
