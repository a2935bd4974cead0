/**
 * Reading the past: `asOf` (an RFC 3339 time) or `atPosition` (a position in the event log), on a record and
 * its history. Validated from the raw URL query; one of them at most.
 */
import { z } from 'zod';
import { PlatformError } from '../errors';
import { canonicalPosition, POSITION_TEXT_FORM } from '../positions';
import { rfc3339Moment, RFC_3339_TEXT_FORM } from '../times';
import { validate } from '../validation';
import { queryText } from './list-params';

export const AS_OF_PARAMETERS = ['asOf', 'atPosition'] as const;

const asOfSchema = z.object({
  asOf: queryText('asOf').refine((text) => text === undefined || rfc3339Moment(text) !== undefined, {
    message: `asOf must be ${RFC_3339_TEXT_FORM}`,
  }),
  atPosition: queryText('atPosition').refine(
    (text) => text === undefined || canonicalPosition(text) !== undefined,
    { message: `atPosition must be a position: ${POSITION_TEXT_FORM}` },
  ),
});

/** How the documents describe the two parameters (the operations' query schemas). */
export const asOfQuery = z.object({
  asOf: z.string().optional().meta({
    description:
      'Read as it was at this RFC 3339 time (a time in the future reads the present; one before the system existed, nothing; a leap second, the last millisecond of its day).',
    example: '2026-11-27T12:00:00Z',
  }),
  atPosition: z.string().optional().meta({
    description:
      'Read as it was right after the event at this position of the log (decimal digits without a leading zero; a position beyond the newest reads the present).',
  }),
});

/** The moment asked for: a time, a position, or none (the present). A 400 names a malformed parameter. */
export type PastMoment =
  { readonly kind: 'time'; readonly at: Date } | { readonly kind: 'position'; readonly position: bigint };

export function pastMomentOf(rawQuery: unknown): PastMoment | undefined {
  const query = (typeof rawQuery === 'object' && rawQuery !== null ? rawQuery : {}) as Record<
    string,
    unknown
  >;
  const { asOf, atPosition } = validate(
    asOfSchema,
    { asOf: query.asOf, atPosition: query.atPosition },
    'query',
  );
  if (asOf !== undefined && atPosition !== undefined)
    throw new PlatformError('validation_failed', 'give asOf or atPosition, not both', [
      { path: 'atPosition', message: 'asOf is given too' },
    ]);
  if (asOf !== undefined) return { kind: 'time', at: rfc3339Moment(asOf)! };
  if (atPosition !== undefined) return { kind: 'position', position: canonicalPosition(atPosition)! };
  return undefined;
}
