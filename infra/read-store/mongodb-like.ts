import { literalPieces } from '../../languages/filter/like-pattern';

/**
 * `like` patterns (languages/filter/like-pattern.ts) as MongoDB regular expressions: the pattern's pieces
 * come from the same split as the in-process matcher's, so both read a pattern alike.
 */

/** Escaping every ASCII punctuation character is valid in both Go's RE2 (FerretDB) and PCRE (MongoDB). */
const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/g;

/**
 * How the server runs regular expressions: `automaton` (RE2, as FerretDB 1.x's Go `regexp`: linear in the
 * value whatever the expression, but no lookaheads) or `backtracking` (PCRE, as MongoDB).
 */
export type RegexEngine = 'automaton' | 'backtracking';

/** The `$options` that go with `likePatternToMongoRegex`: case-insensitive, `.` matches newlines. */
export const LIKE_REGEX_OPTIONS = 'is';

/**
 * For a MongoDB `$regex` with `LIKE_REGEX_OPTIONS`. `\z` rather than `$`: PCRE's `$` also matches before a
 * final newline. `^a.*b.*c\z` is linear on an automaton, but a backtracking engine tries every split of
 * the value among the `.*` (value length to the power of their number). So there each middle piece
 * follows `(?:(?!piece).)*`, which stops at the piece's first occurrence: every piece has one place to
 * end, and on failure each gap gives back at most the value's length, each position failing within the
 * piece's length (value length × pattern length, as the SQLite adapter's matcher).
 */
export function likePatternToMongoRegex(pattern: string, engine: RegexEngine): string {
  const pieces = literalPieces(pattern).map((piece) => piece.replace(ASCII_PUNCTUATION, '\\$&'));
  if (pieces.length === 1) return `^${pieces[0]}\\z`;
  const middle = pieces.slice(1, -1);
  const gaps =
    engine === 'automaton'
      ? middle.map((piece) => `.*${piece}`)
      : middle.map((piece) => `(?:(?!${piece}).)*${piece}`);
  return `^${pieces[0]}${gaps.join('')}.*${pieces[pieces.length - 1]}\\z`;
}
