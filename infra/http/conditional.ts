import { PlatformError } from '../../contracts/errors';

/** Aggregate revisions cross HTTP as weak ETags: `W/"<revision>"`. */
export function etagOf(revision: bigint | number): string {
  return `W/"${revision.toString()}"`;
}

/**
 * The revision an `If-Match` header demands, `undefined` when absent (no precondition) or `*`.
 * A header that is not one of our ETags can never match: 412.
 */
export function expectedRevisionFromIfMatch(header: string | undefined): bigint | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const match = /^\s*(?:W\/)?"(\d{1,19})"\s*$/.exec(header);
  if (!match)
    throw new PlatformError(
      'precondition_failed',
      `If-Match ${JSON.stringify(header)} does not match the current ETag`,
    );
  return BigInt(match[1]!);
}
