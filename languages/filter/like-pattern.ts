/**
 * `like` patterns (see store-query.ts): case-insensitive, `%` matches any run of characters (newlines
 * included), every other character (`_` too) is literal, and the whole value must match.
 *
 * No backtracking regular expression is ever built from a pattern: one with many `%` over a long value
 * would take time growing with the value's length to the power of the number of `%` runs. The SQLite
 * adapter and the in-memory evaluator (document-match.ts) match with `compileLikeMatcher` (at most value
 * length × pattern length character comparisons); the MongoDB adapter sends a regular expression that
 * stays within that bound on the server's engine (infra/read-store/mongodb-like.ts).
 */

/** The literal pieces between the `%` runs of a pattern: prefix, middle pieces, suffix (one piece without `%`). */
export function literalPieces(pattern: string): string[] {
  return pattern.split(/%+/);
}

/**
 * Where the case folding derived from the runtime's case mappings (see `derivedFold`) is not Unicode's
 * simple case folding, which `like` uses (as a JavaScript RegExp with flags `iu` does). The dotless ı has
 * upper case I but folds to itself (only the Turkic folding pairs them); Unicode 15.1 made the other three
 * fold together although neither's case mappings lead to the other. test/unit/like-pattern.test.ts checks
 * every code point against the RegExp engine, so a Node.js whose Unicode version differs fails it loudly.
 */
const FOLDING_EXCEPTIONS: ReadonlyMap<number, number> = new Map([
  [0x0131, 0x0131],
  [0x1fd3, 0x0390],
  [0x1fe3, 0x03b0],
  [0xfb05, 0xfb06],
]);

/** The code point a string consists of, or -1 when it is not exactly one. */
function onlyCodePoint(text: string): number {
  const codePoint = text.codePointAt(0);
  if (codePoint === undefined) return -1;
  return text.length === (codePoint > 0xffff ? 2 : 1) ? codePoint : -1;
}

/**
 * One representative of the code point's case-folding class: the lower case of its upper case, else its
 * lower case, else itself (mappings to more than one code point, like ß → SS, are not simple folding).
 */
function derivedFold(codePoint: number): number {
  const exception = FOLDING_EXCEPTIONS.get(codePoint);
  if (exception !== undefined) return exception;
  const character = String.fromCodePoint(codePoint);
  const upper = onlyCodePoint(character.toUpperCase());
  if (upper >= 0) {
    const lowerOfUpper = onlyCodePoint(String.fromCodePoint(upper).toLowerCase());
    if (lowerOfUpper >= 0) return lowerOfUpper;
  }
  const lower = onlyCodePoint(character.toLowerCase());
  return lower >= 0 ? lower : codePoint;
}

const FOLD_PAGE_SIZE = 256;
/** Folds by code point, computed a page of 256 code points at a time when first needed (4 MB at most). */
const foldPages: (Int32Array | undefined)[] = [];

/** The code point's case-folding class representative: two code points match under `like` iff equal. */
export function foldCodePoint(codePoint: number): number {
  const pageIndex = Math.floor(codePoint / FOLD_PAGE_SIZE);
  let page = foldPages[pageIndex];
  if (!page) {
    page = new Int32Array(FOLD_PAGE_SIZE);
    const first = pageIndex * FOLD_PAGE_SIZE;
    for (let offset = 0; offset < FOLD_PAGE_SIZE; offset++) page[offset] = derivedFold(first + offset);
    foldPages[pageIndex] = page;
  }
  return page[codePoint % FOLD_PAGE_SIZE];
}

/** A fixed expression (no user input), one native linear scan. */
const NON_ASCII = /[^\0-\x7f]/;

/**
 * The text with every code point folded (`foldCodePoint`). Folding maps code points one to one and never
 * to a surrogate, so the result has the same code points in the same places, each folded. ASCII text (the
 * usual case) takes the native lower-casing, which folds ASCII exactly.
 */
export function foldCase(text: string): string {
  if (!NON_ASCII.test(text)) return text.toLowerCase();
  let folded = '';
  for (let index = 0; index < text.length;) {
    const codePoint = text.codePointAt(index)!;
    folded += String.fromCodePoint(foldCodePoint(codePoint));
    index += codePoint > 0xffff ? 2 : 1;
  }
  return folded;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/**
 * Whether a boundary at `index` would cut a surrogate pair in two. `like` matches code points, so a piece
 * holding a lone surrogate matches a lone surrogate only, never half of a pair.
 */
function cutsPair(text: string, index: number): boolean {
  return (
    index > 0 &&
    index < text.length &&
    isHighSurrogate(text.charCodeAt(index - 1)) &&
    isLowSurrogate(text.charCodeAt(index))
  );
}

/** The first place from `from` where `piece` occurs, ends by `end` and cuts no pair; -1 if none. */
function findPiece(text: string, piece: string, from: number, end: number): number {
  for (
    let at = text.indexOf(piece, from);
    at >= 0 && at + piece.length <= end;
    at = text.indexOf(piece, at + 1)
  ) {
    if (!cutsPair(text, at) && !cutsPair(text, at + piece.length)) return at;
  }
  return -1;
}

export type LikeMatcher = (value: string) => boolean;

/**
 * A matcher of one pattern, compiled once (the pieces folded once). The prefix must start the value and
 * the suffix end it; each middle piece is placed at its first occurrence after the previous one. That
 * leftmost placement is never wrong: any match can slide each piece to its earliest possible place and
 * still leave the later pieces where they were. Each search starts where the previous one ended, so the
 * searches cover the value once: at most value length × pattern length character comparisons.
 */
export function compileLikeMatcher(pattern: string): LikeMatcher {
  const pieces = literalPieces(pattern).map(foldCase);
  if (pieces.length === 1) {
    const whole = pieces[0];
    return (value) => foldCase(value) === whole;
  }
  const prefix = pieces[0];
  const suffix = pieces[pieces.length - 1];
  const middle = pieces.slice(1, -1);
  const shortest = pieces.reduce((length, piece) => length + piece.length, 0);
  return (value) => {
    const folded = foldCase(value);
    if (folded.length < shortest) return false;
    const end = folded.length - suffix.length;
    if (!folded.startsWith(prefix) || cutsPair(folded, prefix.length)) return false;
    if (!folded.endsWith(suffix) || cutsPair(folded, end)) return false;
    let from = prefix.length;
    for (const piece of middle) {
      const at = findPiece(folded, piece, from, end);
      if (at < 0) return false;
      from = at + piece.length;
    }
    return true;
  };
}
