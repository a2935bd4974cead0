import { PlatformError } from '../../contracts/errors';

/** Aggregate revisions cross HTTP as weak ETags: `W/"<revision>"`. */
export function etagOf(revision: bigint | number): string {
  return `W/"${revision.toString()}"`;
}

/**
 * One element of an `If-Match` list, with the comma or end after it: an entity-tag (RFC 9110 §8.8.3: `W/`
 * maybe, then quoted characters, which may hold commas) or nothing (empty elements are ignored, §5.6.1).
 * Sticky and linear: it is run along the header, never built from it.
 */
const LISTED_ENTITY_TAG = /[ \t]*(?:(?:W\/)?"([\x21\x23-\x7E\x80-\xFF]*)"[ \t]*)?(?:,|$)/y;

/** Our revisions' one spelling inside the quotes, as `etagOf` writes it: `007` names no revision. */
const REVISION_TAG = /^(?:0|[1-9][0-9]{0,18})$/;

/**
 * The revisions an `If-Match` header accepts, any of them (a list, or several headers, which Node joins
 * with commas); `undefined` when absent (no precondition) or `*`. Our ETags are weak, so they are compared
 * weakly: `W/"7"` and `"7"` both name revision 7 (RFC 9110 would never match a weak tag here, and then
 * no client could use ours). A header that names none of our ETags can never match: 412.
 */
export function expectedRevisionsFromIfMatch(header: string | undefined): readonly bigint[] | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const revisions: bigint[] = [];
  LISTED_ENTITY_TAG.lastIndex = 0;
  while (LISTED_ENTITY_TAG.lastIndex < header.length) {
    const tag = LISTED_ENTITY_TAG.exec(header);
    if (!tag) return noneMatch(header);
    if (tag[1] !== undefined && REVISION_TAG.test(tag[1])) revisions.push(BigInt(tag[1]));
  }
  return revisions.length > 0 ? revisions : noneMatch(header);
}

function noneMatch(header: string): never {
  throw new PlatformError(
    'precondition_failed',
    `If-Match ${JSON.stringify(header)} does not match the current ETag`,
  );
}
