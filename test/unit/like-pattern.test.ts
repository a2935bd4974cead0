import { compileLikeMatcher, foldCase, foldCodePoint } from '../../languages/filter/like-pattern';
import { likePatternToMongoRegex, type RegexEngine } from '../../infra/read-store/mongodb-like';
import { likeReferenceRegExp, seededRandom } from '../support/like-reference';

const LAST_CODE_POINT = 0x10ffff;

function isSurrogate(codePoint: number): boolean {
  return codePoint >= 0xd800 && codePoint <= 0xdfff;
}

function escapedCodePoint(codePoint: number): string {
  return `\\u{${codePoint.toString(16)}}`;
}

describe('case folding', () => {
  test('two code points fold alike exactly when a RegExp with flags iu matches one with the other', () => {
    // Code points with a case mapping or a fold of their own: every other one must stand alone.
    const cased: number[] = [];
    for (let codePoint = 0; codePoint <= LAST_CODE_POINT; codePoint++) {
      if (isSurrogate(codePoint)) continue;
      const character = String.fromCodePoint(codePoint);
      if (
        character.toUpperCase() !== character ||
        character.toLowerCase() !== character ||
        foldCodePoint(codePoint) !== codePoint
      )
        cased.push(codePoint);
    }
    expect(cased.length).toBeGreaterThan(2000);

    // No code point outside `cased` matches any inside it, so those fold to themselves alone.
    const isCased = new Set(cased);
    const anyCased = new RegExp(`^[${cased.map(escapedCodePoint).join('')}]$`, 'iu');
    const standingAlone: number[] = [];
    for (let codePoint = 0; codePoint <= LAST_CODE_POINT; codePoint++) {
      if (isSurrogate(codePoint) || isCased.has(codePoint)) continue;
      if (foldCodePoint(codePoint) !== codePoint || anyCased.test(String.fromCodePoint(codePoint)))
        standingAlone.push(codePoint);
    }
    expect(standingAlone).toEqual([]);

    // Within `cased`, every pair: folded alike iff the RegExp matches.
    const characters = cased.map((codePoint) => String.fromCodePoint(codePoint));
    const folds = cased.map(foldCodePoint);
    const disagreements: string[] = [];
    cased.forEach((codePoint, i) => {
      const same = new RegExp(`^${escapedCodePoint(codePoint)}$`, 'iu');
      characters.forEach((other, j) => {
        if (same.test(other) !== (folds[i] === folds[j]))
          disagreements.push(`${codePoint.toString(16)} ${cased[j].toString(16)}`);
      });
    });
    expect(disagreements).toEqual([]);
  });

  test('folding keeps a code point in its plane and never makes a surrogate (foldCase keeps positions)', () => {
    const moved: number[] = [];
    for (let codePoint = 0; codePoint <= LAST_CODE_POINT; codePoint++) {
      const folded = foldCodePoint(codePoint);
      if (
        isSurrogate(codePoint)
          ? folded !== codePoint
          : isSurrogate(folded) || folded > 0xffff !== codePoint > 0xffff
      )
        moved.push(codePoint);
    }
    expect(moved).toEqual([]);
  });

  test.each([
    ['ASCII', 'Hello, World', 'hello, world'],
    ['the Kelvin sign and the long s', '\u212Aelvin \u017Ftate', 'kelvin state'],
    ['final sigma (simple folding, no context)', 'ΟΔΟΣ οδος οδοσ', 'οδοσ οδοσ οδοσ'],
    ['capital sharp s folds to ß, ß stays', '\u1E9E ß', 'ß ß'],
    ['dotted and dotless i fold to themselves', '\u0130 \u0131 I', '\u0130 \u0131 i'],
    ['astral letters', '\u{10400}\u{10428}', '\u{10428}\u{10428}'],
    ['lone surrogates stay', 'A\uD801B\uDC00', 'a\uD801b\uDC00'],
  ])('foldCase: %s', (_description, text, folded) => {
    expect(foldCase(text)).toBe(folded);
  });
});

/**
 * Characters where matching is easy to get wrong: case pairs within and beyond ASCII (including folds that
 * change length in full folding: ß/SS, İ; Unicode 15.1's ΐ/ΐ), astral letters, lone surrogates (which must
 * not match half of a pair), regex syntax, `_`, newlines and `%`.
 */
const ALPHABET = [
  ...[
    'a',
    'A',
    'b',
    'B',
    'k',
    'K',
    '\u212A',
    's',
    'S',
    '\u017F',
    'ß',
    '\u1E9E',
    'i',
    'I',
    '\u0130',
    '\u0131',
  ],
  ...['é', 'É', '\u03A3', '\u03C3', '\u03C2', '\u0390', '\u1FD3', '\uFB05', '\uFB06', '\u13A0', '\uAB70'],
  ...['\u{10400}', '\u{10428}', '\uD801', '\uDC00', '\uDC28', '.', '*', '(', ')', '[', '\\', '$', '^', '?'],
  ...['_', '\n', ' ', '%', '%', '%'],
];

describe('like matcher', () => {
  test('answers as the former RegExp on random values and patterns', () => {
    const random = seededRandom(20261124);
    const pick = (length: number): string =>
      Array.from({ length }, () => ALPHABET[Math.floor(random() * ALPHABET.length)]).join('');
    let matched = 0;
    let compared = 0;
    for (let round = 0; round < 2000; round++) {
      const pattern = pick(Math.floor(random() * 7));
      const matches = compileLikeMatcher(pattern);
      const reference = likeReferenceRegExp(pattern);
      for (let value = 0; value < 20; value++) {
        // Half the values are made from the pattern itself, so that many match.
        const text =
          random() < 0.5
            ? pattern.replace(/%/g, () => pick(Math.floor(random() * 3)))
            : pick(Math.floor(random() * 9));
        const expected = reference.test(text);
        expect([pattern, text, matches(text)]).toEqual([pattern, text, expected]);
        if (expected) matched++;
        compared++;
      }
    }
    // Not vacuous: a good share of the comparisons were matches.
    expect(matched).toBeGreaterThan(compared / 5);
  });

  test.each([
    ['many % pieces, the last missing', `${'%a'.repeat(100)}%b`, 'a'.repeat(100_000), false],
    ['many % pieces, all present', `${'%a'.repeat(100)}%`, 'a'.repeat(100_000), true],
    ['many % pieces of overlapping runs', `${'%aaaaaaab'.repeat(30)}%`, 'a'.repeat(100_000), false],
    ['a prefix and many pieces', `a${'%a'.repeat(60)}`, `${'a'.repeat(100_000)}`, true],
    ['pieces found late', `%ab${'%ab'.repeat(40)}`, `${'a'.repeat(100_000)}${'ab'.repeat(41)}`, true],
    ['non-ASCII pieces', `${'%É'.repeat(50)}%ß`, 'é'.repeat(50_000), false],
    ['a whole value without %', 'a'.repeat(4000), 'A'.repeat(100_000), false],
  ])('pathological: %s completes with the right answer', (_description, pattern, value, expected) => {
    expect(compileLikeMatcher(pattern)(value)).toBe(expected);
  });

  test('a 4,000-character pattern of % pieces over 100 long values completes', () => {
    const matches = compileLikeMatcher(`${'%a'.repeat(1999)}%b`);
    const values = Array.from({ length: 100 }, (_, index) => `${'a'.repeat(10_000 + index)}c`);
    expect(values.filter(matches)).toEqual([]);
  });
});

/**
 * The MongoDB translations run on V8's RegExp here: a backtracking engine like PCRE, so the
 * `backtracking` form must stay fast on it. Without the `u` flag (the escaped punctuation is an identity
 * escape then) and so on ASCII only; `\z` is JavaScript's `$` without the `m` flag.
 */
function asJavaScript(mongoRegex: string): RegExp {
  return new RegExp(mongoRegex.replace(/\\z$/, '$'), 'is');
}

const ASCII_ALPHABET = [
  'a',
  'A',
  'b',
  'B',
  'c',
  '.',
  '*',
  '(',
  ')',
  '[',
  '\\',
  '$',
  '^',
  '?',
  '-',
  '_',
  '\n',
];

describe.each<RegexEngine>(['automaton', 'backtracking'])('MongoDB regex for the %s engine', (engine) => {
  test('matches as the like matcher on random ASCII values and patterns', () => {
    const random = seededRandom(engine === 'automaton' ? 1 : 2);
    const pick = (length: number, alphabet: readonly string[]): string =>
      Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    let matched = 0;
    for (let round = 0; round < 1500; round++) {
      const pattern = pick(Math.floor(random() * 8), [...ASCII_ALPHABET, '%', '%']);
      const expression = asJavaScript(likePatternToMongoRegex(pattern, engine));
      const matches = compileLikeMatcher(pattern);
      for (let value = 0; value < 10; value++) {
        const text =
          random() < 0.5
            ? pattern.replace(/%/g, () => pick(Math.floor(random() * 4), ASCII_ALPHABET))
            : pick(Math.floor(random() * 10), ASCII_ALPHABET);
        const expected = matches(text);
        expect([pattern, text, expression.test(text)]).toEqual([pattern, text, expected]);
        if (expected) matched++;
      }
    }
    expect(matched).toBeGreaterThan(1500);
  });
});

describe('MongoDB regex for a backtracking engine', () => {
  test.each([
    ['many % pieces, the last missing', `${'%a'.repeat(30)}%b`, `${'a'.repeat(20_000)}bc`, false],
    ['many % pieces, all present', `${'%a'.repeat(30)}%c`, `${'a'.repeat(20_000)}bc`, true],
    ['overlapping pieces', `${'%aab'.repeat(10)}%aac`, `${'a'.repeat(20_000)}aab`, false],
  ])('pathological: %s completes with the right answer', (_description, pattern, value, expected) => {
    expect(asJavaScript(likePatternToMongoRegex(pattern, 'backtracking')).test(value)).toBe(expected);
  });

  test('each middle piece is tempered, so it can end in one place only', () => {
    expect(likePatternToMongoRegex('a%b.%c', 'backtracking')).toBe('^a(?:(?!b\\.).)*b\\..*c\\z');
    expect(likePatternToMongoRegex('a%b.%c', 'automaton')).toBe('^a.*b\\..*c\\z');
    expect(likePatternToMongoRegex('%%', 'backtracking')).toBe('^.*\\z');
    expect(likePatternToMongoRegex('x_1', 'backtracking')).toBe('^x\\_1\\z');
  });
});
