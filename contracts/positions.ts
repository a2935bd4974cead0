/**
 * The one rule for a position in the event log wherever a request names one (`atPosition`, `X-Min-Position`, a
 * subscription replay's `from`): the canonical decimal text of a whole number from 0 to 2^64 − 1, the widest
 * position a log keeps. As with ids (entity-id.ts), `007`, `+7` or `7e0` name no position.
 */
export const LARGEST_POSITION = 2n ** 64n - 1n;

/** Zero, or a non-zero digit and at most nineteen more (linear to match); `canonicalPosition` bounds it. */
export const POSITION_PATTERN = /^(?:0|[1-9][0-9]{0,19})$/;

/** How a refusal describes a position's one spelling. */
export const POSITION_TEXT_FORM = `decimal digits without a leading zero, at most ${LARGEST_POSITION}`;

/** The position `text` names in its canonical spelling, else undefined. */
export function canonicalPosition(text: string): bigint | undefined {
  if (!POSITION_PATTERN.test(text)) return undefined;
  const position = BigInt(text);
  return position <= LARGEST_POSITION ? position : undefined;
}
