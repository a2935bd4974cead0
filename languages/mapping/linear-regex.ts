import { RE2JS } from 're2js';

/** A match as `RegExp.prototype.exec` gives it: the match and its groups, with where it starts. */
type ExecResult = Array<string | undefined> & { index: number; input: string };

/**
 * The regular expressions of mapping expressions (`/…/` in JSONata) run on RE2 (re2js): matching takes time
 * linear in the input, so a scenario author's pattern cannot backtrack for ever and hold the integrator (a
 * native `RegExp` can, and JSONata's time guard cannot interrupt one call). Shaped as JSONata's `RegexEngine`:
 * constructed from the parsed `RegExp`, used through `exec` and `lastIndex` (JSONata sets the `g` flag).
 * Backreferences and lookarounds are refused, as RE2 has none.
 */
export class LinearRegex {
  lastIndex = 0;
  private readonly pattern: RE2JS;

  constructor(parsed: RegExp) {
    this.pattern = compileLinear(parsed);
  }

  exec(text: string): ExecResult | null {
    if (this.lastIndex > text.length) {
      this.lastIndex = 0;
      return null;
    }
    const matcher = this.pattern.matcher(text);
    if (!matcher.find(this.lastIndex)) {
      this.lastIndex = 0;
      return null;
    }
    const groups: Array<string | undefined> = [];
    for (let group = 0; group <= matcher.groupCount(); group++)
      groups.push(matcher.group(group) ?? undefined);
    this.lastIndex = matcher.end();
    return Object.assign(groups, { index: matcher.start(), input: text });
  }
}

/** The RE2 form of a parsed pattern (flags `i` and `m` carried over); throws when RE2 cannot express it. */
export function compileLinear(parsed: RegExp): RE2JS {
  let flags = 0;
  if (parsed.flags.includes('i')) flags |= RE2JS.CASE_INSENSITIVE;
  if (parsed.flags.includes('m')) flags |= RE2JS.MULTILINE;
  return RE2JS.compile(parsed.source, flags);
}
