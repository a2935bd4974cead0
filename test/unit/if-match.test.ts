import fc from 'fast-check';
import { PlatformError } from '../../contracts/errors';
import { etagOf, expectedRevisionsFromIfMatch } from '../../infra/http/conditional';
import { thrown } from '../support/thrown';

const revisions = fc.bigInt({ min: 0n, max: 2n ** 63n - 1n });

describe('expectedRevisionsFromIfMatch', () => {
  it('given no header or *, when read, then there is no precondition', () => {
    expect(expectedRevisionsFromIfMatch(undefined)).toBeUndefined();
    expect(expectedRevisionsFromIfMatch('*')).toBeUndefined();
    expect(expectedRevisionsFromIfMatch(' * ')).toBeUndefined();
  });

  it('given any list of our ETags, weak or strong, with empty elements and blanks, when read, then it accepts exactly their revisions', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(revisions, fc.boolean(), fc.constantFrom('', ' ', '\t', ' ,', ', ')), {
          minLength: 1,
          maxLength: 6,
        }),
        (tags) => {
          const header = tags
            .map(([revision, weak, blank]) => `${blank}${weak ? etagOf(revision) : `"${revision}"`}`)
            .join(',');
          expect(expectedRevisionsFromIfMatch(header)).toEqual(tags.map(([revision]) => revision));
        },
      ),
    );
  });

  it('given other tags beside ours (commas inside quotes, another spelling of a number), when read, then only ours count', () => {
    expect(expectedRevisionsFromIfMatch('"a,b", W/"7", "007", W/"x"')).toEqual([7n]);
    expect(expectedRevisionsFromIfMatch('W/"0",')).toEqual([0n]);
  });

  it.each([
    ['a leading zero', 'W/"007"'],
    ['no quotes', 'W/7'],
    ['a lowercase w', 'w/"7"'],
    ['an unclosed quote', 'W/"7'],
    ['text', 'nonsense'],
    ['a tag beyond any revision', `"${2n ** 64n}"`],
    ['garbage after a tag', 'W/"7" x'],
    ['only commas', ' , ,'],
  ])('given %s and none of our ETags, when read, then it can never match: 412', (_, header) => {
    const error = thrown(() => expectedRevisionsFromIfMatch(header));
    expect(error.kind).toBe('precondition_failed');
    expect(error.message).toContain('If-Match');
  });

  it('given any text, when read, then revisions, no precondition or a 412, never anything else', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom(...'W/"0179, \t*x') })),
        (header) => {
          try {
            const accepted = expectedRevisionsFromIfMatch(header);
            if (accepted !== undefined) expect(accepted.length).toBeGreaterThan(0);
          } catch (error) {
            expect(error).toBeInstanceOf(PlatformError);
            expect((error as PlatformError).kind).toBe('precondition_failed');
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});
