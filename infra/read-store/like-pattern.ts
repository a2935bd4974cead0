/**
 * `like` patterns (see store-query.ts): case-insensitive, `%` matches any run of characters (newlines
 * included), every other character (`_` too) is literal, and the whole value must match.
 */

function literalParts(pattern: string): string[] {
  return pattern.split(/%+/);
}

const JS_SYNTAX_CHARACTERS = /[\\^$.*+?()[\]{}|/]/g;

/** For JavaScript (the SQLite adapter's `like` function). `u`: case folding beyond ASCII, like MongoDB's. */
export function likePatternToRegExp(pattern: string): RegExp {
  const parts = literalParts(pattern).map((part) => part.replace(JS_SYNTAX_CHARACTERS, '\\$&'));
  return new RegExp(`^${parts.join('[\\s\\S]*')}$`, 'iu');
}

/** Escaping every ASCII punctuation character is valid in both Go's RE2 (FerretDB) and PCRE (MongoDB). */
const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/g;

/**
 * For a MongoDB `$regex` with option `i`. `\z` rather than `$`: PCRE's `$` also matches before a final
 * newline.
 */
export function likePatternToMongoRegex(pattern: string): string {
  const parts = literalParts(pattern).map((part) => part.replace(ASCII_PUNCTUATION, '\\$&'));
  return `^${parts.join('[\\s\\S]*')}\\z`;
}
