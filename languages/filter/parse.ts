/**
 * Parsers for the `filter` and `order` list parameters (spec, "Common list query parameters").
 *
 * Filter grammar (AND binds tighter than OR):
 *   filter    := or END
 *   or        := and ( '|' and )*
 *   and       := primary ( ( ';' | '&' ) primary )*
 *   primary   := '(' or ')' | condition
 *   condition := field operator ( '(' value ( '|' value )* ')' | value ( ',' value )* for `...` | value )
 *
 * A value is either double-quoted (`"a;b"`) or runs to the next unescaped `;` `&` `|` `)` (and `,` inside
 * a `...` set); surrounding whitespace is trimmed. A backslash makes the next character literal; only
 * `; & | ( ) , " \` may follow it, so a typo such as `\n` is reported rather than silently changed.
 *
 * Every error is a `filter_syntax` PlatformError whose message and details carry the 0-based position.
 */
import { PlatformError } from '../../contracts/errors';
import type { FilterCondition, FilterNode, FilterOperator, OrderTerm, SortDirection } from './ast';

/** Guards against abusive filters: each limit is reported as a `filter_syntax` error. */
export const MAX_FILTER_LENGTH = 4000;
export const MAX_FILTER_DEPTH = 32;
export const MAX_FILTER_CONDITIONS = 100;
export const MAX_ORDER_TERMS = 5;

export interface SyntaxErrorDetails {
  readonly position: number;
  readonly expected: string;
  /** The offending text, or a description such as `end of filter`. */
  readonly found: string;
}

const OPERATORS: readonly FilterOperator[] = ['=', '!=', '>', '>=', '<', '<=', '~', '!~', '...'];
const OPERATOR_LIST = OPERATORS.join(', ');
/** Characters an operator is made of; a run of them that is not an operator is an unknown operator. */
const OPERATOR_CHARS = '=!<>~';
/** Common operators of other languages, so the error can say what was probably meant. */
const OPERATOR_SUGGESTIONS: Readonly<Record<string, FilterOperator>> = {
  '==': '=',
  '===': '=',
  '=>': '>=',
  '=<': '<=',
  '<>': '!=',
  '!': '!=',
  '!==': '!=',
  '=!': '!=',
  '~=': '~',
  '=~': '~',
  '!=~': '!~',
};

/** How a `field op (a|b)` group combines its conditions; operators missing here take no group. */
const GROUP_COMBINATION: Partial<Record<FilterOperator, 'and' | 'or'>> = {
  '=': 'or',
  '~': 'or',
  '!=': 'and',
  '!~': 'and',
};

/** Ordering operators make no sense with an empty value (only `=` `!=` `~` `!~` give it a meaning). */
const EMPTY_VALUE_OPERATORS: ReadonlySet<FilterOperator> = new Set(['=', '!=', '~', '!~']);

const ESCAPABLE = ';&|(),"\\';
const VALUE_END = ';&|)';
const SET_VALUE_END = ',;&|)';

const EXPECTED = {
  field: 'a field name',
  operator: `an operator (${OPERATOR_LIST})`,
  value: 'a value',
  closingQuote: "a closing '\"'",
  escaped: `a character to escape after "\\" (one of ${ESCAPABLE.split('').join(' ')})`,
  groupNext: '"|" or ")"',
  joinOrEnd: '";", "&", "|" or end of filter',
  joinOrClose: '";", "&", "|" or ")"',
  direction: 'a direction (ASC or DESC)',
  orderNextAfterField: '";", "," or end of order',
  orderNextAfterDirection: '"," or end of order',
} as const;

type Subject = 'filter' | 'order';

/** What the parser met instead: quoted text from the input, or a description such as `end of filter`. */
type Found = { readonly text: string } | { readonly description: string };

function syntaxError(
  subject: Subject,
  position: number,
  expected: string,
  found: Found,
  hint?: string,
): PlatformError {
  const foundText = 'text' in found ? found.text : found.description;
  const shown = 'text' in found ? JSON.stringify(found.text) : found.description;
  const details: SyntaxErrorDetails = { position, expected, found: foundText };
  const suffix = hint ? ` (${hint})` : '';
  return new PlatformError(
    'filter_syntax',
    `${subject}: expected ${expected} at position ${position}, found ${shown}${suffix}`,
    details,
  );
}

/** The token starting at `position`, short enough to quote in a message. */
function foundAt(subject: Subject, text: string, position: number): Found {
  if (position >= text.length) return { description: `end of ${subject}` };
  const rest = text.slice(position, position + 20);
  const token = /^(?:[A-Za-z0-9_.]+|[=!<>~]+)/.exec(rest);
  return { text: token ? token[0] : String.fromCodePoint(rest.codePointAt(0) ?? 0) };
}

function isSpace(char: string | undefined): boolean {
  return char !== undefined && /\s/.test(char);
}

function isNameStart(char: string | undefined): boolean {
  return char !== undefined && /[A-Za-z_]/.test(char);
}

function isNamePart(char: string | undefined): boolean {
  return char !== undefined && /[A-Za-z0-9_]/.test(char);
}

/**
 * End of the field name starting at `start`, or `start` when there is none. A dot must be followed by a
 * name character, so `id...1,2` reads as the field `id` and the operator `...`.
 */
function fieldNameEnd(text: string, start: number): number {
  if (!isNameStart(text[start])) return start;
  let end = start + 1;
  for (;;) {
    if (isNamePart(text[end])) end++;
    else if (text[end] === '.' && isNamePart(text[end + 1])) end += 2;
    else return end;
  }
}

/** Builds an and/or node, flattening nested nodes of the same kind and collapsing a single child. */
function combine(kind: 'and' | 'or', children: readonly FilterNode[]): FilterNode {
  const flat = children.flatMap((child) => (child.kind === kind ? child.children : [child]));
  return flat.length === 1 ? flat[0]! : { kind, children: flat };
}

class FilterParser {
  private pos = 0;
  private depth = 0;
  private conditionCount = 0;

  constructor(private readonly text: string) {}

  parse(): FilterNode {
    if (this.text.length > MAX_FILTER_LENGTH) {
      throw syntaxError('filter', MAX_FILTER_LENGTH, `at most ${MAX_FILTER_LENGTH} characters`, {
        description: `${this.text.length} characters`,
      });
    }
    const node = this.parseOr();
    this.skipSpace();
    if (!this.atEnd()) {
      const hint = this.peek() === ')' ? 'there is no "(" to close' : undefined;
      throw this.error(EXPECTED.joinOrEnd, hint);
    }
    return node;
  }

  private parseOr(): FilterNode {
    const children = [this.parseAnd()];
    while (this.skipSpace() === '|') {
      this.pos++;
      children.push(this.parseAnd());
    }
    return combine('or', children);
  }

  private parseAnd(): FilterNode {
    const children = [this.parsePrimary()];
    for (let next = this.skipSpace(); next === ';' || next === '&'; next = this.skipSpace()) {
      this.pos++;
      children.push(this.parsePrimary());
    }
    return combine('and', children);
  }

  private parsePrimary(): FilterNode {
    if (this.skipSpace() !== '(') return this.parseCondition();
    const open = this.pos;
    if (this.depth === MAX_FILTER_DEPTH) {
      throw this.error(`at most ${MAX_FILTER_DEPTH} nested parentheses`);
    }
    this.depth++;
    this.pos++;
    const inner = this.parseOr();
    if (this.skipSpace() !== ')') {
      throw this.error(
        EXPECTED.joinOrClose,
        this.atEnd() ? `the "(" at position ${open} is not closed` : undefined,
      );
    }
    this.pos++;
    this.depth--;
    return inner;
  }

  private parseCondition(): FilterNode {
    this.skipSpace();
    const fieldStart = this.pos;
    const fieldEnd = fieldNameEnd(this.text, fieldStart);
    if (fieldEnd === fieldStart) throw this.error(EXPECTED.field);
    const field = this.text.slice(fieldStart, fieldEnd);
    this.pos = fieldEnd;
    this.skipSpace();
    const operator = this.readOperator();
    if (this.skipSpace() === '(') return this.parseValueGroup(field, operator, fieldStart);
    if (operator === '...') {
      return this.condition(field, operator, this.readValueSet(), fieldStart, fieldStart);
    }
    const valueStart = this.pos;
    const value = this.readValue(VALUE_END);
    if (value === '' && !EMPTY_VALUE_OPERATORS.has(operator)) {
      throw this.error(EXPECTED.value, `an empty value is only allowed after =, !=, ~ and !~`, valueStart);
    }
    return this.condition(field, operator, [value], fieldStart, fieldStart);
  }

  private readOperator(): FilterOperator {
    const start = this.pos;
    if (this.text.startsWith('...', start)) {
      this.pos += 3;
      return '...';
    }
    let end = start;
    while (end < this.text.length && OPERATOR_CHARS.includes(this.text[end]!)) end++;
    const written = this.text.slice(start, end);
    const operator = OPERATORS.find((candidate) => candidate === written);
    if (!operator) {
      const suggestion = OPERATOR_SUGGESTIONS[written];
      throw this.error(EXPECTED.operator, suggestion ? `did you mean "${suggestion}"?` : undefined);
    }
    this.pos = end;
    return operator;
  }

  /** `field=(a|b)` → `field=a | field=b`; `field!=(a|b)` → `field!=a ; field!=b`. */
  private parseValueGroup(field: string, operator: FilterOperator, fieldStart: number): FilterNode {
    const open = this.pos;
    const combination = GROUP_COMBINATION[operator];
    if (!combination) {
      const hint =
        operator === '...'
          ? 'the values of ... are comma-separated without parentheses, as in id...1,2,3'
          : 'a group of values (a|b) is only allowed after =, !=, ~ and !~; write \\( for a literal "("';
      throw this.error(EXPECTED.value, hint);
    }
    this.pos++;
    const conditions: FilterNode[] = [];
    for (;;) {
      const valueStart = this.pos + this.countSpaceAhead();
      const quoted = this.text[valueStart] === '"';
      const value = this.readValue(VALUE_END);
      if (value === '' && !quoted) {
        throw this.error(EXPECTED.value, 'write "" for an empty value inside a group', valueStart);
      }
      conditions.push(this.condition(field, operator, [value], fieldStart, valueStart));
      const next = this.skipSpace();
      if (next !== '|' && next !== ')') {
        throw this.error(
          EXPECTED.groupNext,
          this.atEnd() ? `the "(" at position ${open} is not closed` : undefined,
        );
      }
      this.pos++;
      if (next === ')') return combine(combination, conditions);
    }
  }

  /** The comma-separated values of `...`; an empty item is an error (it is almost always a stray comma). */
  private readValueSet(): string[] {
    const values: string[] = [];
    for (;;) {
      const itemStart = this.pos + this.countSpaceAhead();
      const value = this.readValue(SET_VALUE_END);
      if (value === '') throw this.error(EXPECTED.value, 'the items of ... cannot be empty', itemStart);
      values.push(value);
      if (this.skipSpace() !== ',') return values;
      this.pos++;
    }
  }

  private condition(
    field: string,
    operator: FilterOperator,
    values: readonly string[],
    position: number,
    countedAt: number,
  ): FilterCondition {
    this.conditionCount++;
    if (this.conditionCount > MAX_FILTER_CONDITIONS) {
      throw this.error(
        `at most ${MAX_FILTER_CONDITIONS} conditions`,
        `condition ${this.conditionCount}; a group (a|b) counts one condition per value`,
        countedAt,
      );
    }
    return { kind: 'condition', field, operator, values, position };
  }

  /** A quoted or bare value; a bare one ends before any unescaped character of `terminators`. */
  private readValue(terminators: string): string {
    if (this.skipSpace() === '"') return this.readQuoted();
    let value = '';
    while (!this.atEnd() && !terminators.includes(this.peek()!)) {
      value += this.peek() === '\\' ? this.readEscape() : this.text[this.pos++];
    }
    return value.trimEnd();
  }

  private readQuoted(): string {
    const open = this.pos++;
    let value = '';
    for (;;) {
      const char = this.peek();
      if (char === undefined) {
        throw this.error(EXPECTED.closingQuote, `the quote at position ${open} is not closed`);
      }
      if (char === '"') {
        this.pos++;
        return value;
      }
      value += char === '\\' ? this.readEscape() : this.text[this.pos++];
    }
  }

  private readEscape(): string {
    const backslash = this.pos;
    const escaped = this.text[backslash + 1];
    if (escaped === undefined || !ESCAPABLE.includes(escaped)) {
      const found: Found =
        escaped === undefined ? { description: 'end of filter' } : { text: `\\${escaped}` };
      throw syntaxError('filter', backslash, EXPECTED.escaped, found, 'write \\\\ for a literal backslash');
    }
    this.pos += 2;
    return escaped;
  }

  /** Skips whitespace and returns the character now under the cursor. */
  private skipSpace(): string | undefined {
    this.pos += this.countSpaceAhead();
    return this.peek();
  }

  private countSpaceAhead(): number {
    let count = 0;
    while (isSpace(this.text[this.pos + count])) count++;
    return count;
  }

  private peek(): string | undefined {
    return this.text[this.pos];
  }

  private atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  private error(expected: string, hint?: string, position = this.pos): PlatformError {
    return syntaxError('filter', position, expected, foundAt('filter', this.text, position), hint);
  }
}

/** Parses the `filter` parameter; throws a `filter_syntax` PlatformError that says where and what. */
export function parseFilter(text: string): FilterNode {
  return new FilterParser(text).parse();
}

/**
 * Parses the `order` parameter: comma-separated `field;DIRECTION` terms, DIRECTION `ASC` or `DESC`
 * (any case, default DESC). At most `MAX_ORDER_TERMS` terms, each field once.
 */
export function parseOrder(text: string): OrderTerm[] {
  const terms: OrderTerm[] = [];
  const seenAt = new Map<string, number>();
  const fail = (position: number, expected: string, hint?: string): PlatformError =>
    syntaxError('order', position, expected, foundAt('order', text, position), hint);
  const skipSpace = (from: number): number => {
    let position = from;
    while (isSpace(text[position])) position++;
    return position;
  };

  let pos = 0;
  for (;;) {
    const fieldStart = skipSpace(pos);
    const fieldEnd = fieldNameEnd(text, fieldStart);
    if (fieldEnd === fieldStart) throw fail(fieldStart, EXPECTED.field);
    const field = text.slice(fieldStart, fieldEnd);
    if (terms.length === MAX_ORDER_TERMS) throw fail(fieldStart, `at most ${MAX_ORDER_TERMS} sort terms`);
    const earlier = seenAt.get(field);
    if (earlier !== undefined) {
      throw fail(
        fieldStart,
        'a field not already in the order',
        `"${field}" is already sorted at position ${earlier}`,
      );
    }
    seenAt.set(field, fieldStart);

    let direction: SortDirection = 'DESC';
    pos = skipSpace(fieldEnd);
    let expectedNext: string = EXPECTED.orderNextAfterField;
    if (text[pos] === ';') {
      const directionStart = skipSpace(pos + 1);
      const word = /^[A-Za-z]*/.exec(text.slice(directionStart))![0].toUpperCase();
      if (word !== 'ASC' && word !== 'DESC') throw fail(directionStart, EXPECTED.direction);
      direction = word;
      pos = skipSpace(directionStart + word.length);
      expectedNext = EXPECTED.orderNextAfterDirection;
    }
    terms.push({ field, direction, position: fieldStart });

    if (pos >= text.length) return terms;
    if (text[pos] !== ',') throw fail(pos, expectedNext);
    pos++;
  }
}

/** Characters that force a value to be quoted when printed: separators, quotes, escapes, parentheses. */
const NEEDS_QUOTES = /[;&|(),"\\]|^[\s=!<>~]|\s$/;

function formatValue(value: string, quoteEmpty: boolean): string {
  if (value === '' ? !quoteEmpty : !NEEDS_QUOTES.test(value)) return value;
  return `"${value.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}

function formatCondition(condition: FilterCondition): string {
  const values =
    condition.operator === '...'
      ? condition.values.map((value) => formatValue(value, true)).join(',')
      : formatValue(condition.values[0] ?? '', false);
  return `${condition.field}${condition.operator}${values}`;
}

/** When every child is the same field and operator, the node prints as the group `field op (a|b)`. */
function formatAsGroup(node: FilterNode & { kind: 'and' | 'or' }): string | undefined {
  const [first] = node.children;
  if (node.children.length < 2 || first?.kind !== 'condition') return undefined;
  if (GROUP_COMBINATION[first.operator] !== node.kind) return undefined;
  const sameTarget = node.children.every(
    (child) =>
      child.kind === 'condition' &&
      child.field === first.field &&
      child.operator === first.operator &&
      child.values.length === 1,
  );
  if (!sameTarget) return undefined;
  const values = node.children.map((child) =>
    child.kind === 'condition' ? formatValue(child.values[0]!, true) : '',
  );
  return `${first.field}${first.operator}(${values.join('|')})`;
}

/**
 * Prints a filter AST as filter text that `parseFilter` reads back to the same tree (positions aside).
 * Useful in logs and for building filters programmatically.
 */
export function formatFilter(node: FilterNode): string {
  if (node.kind === 'condition') return formatCondition(node);
  const group = formatAsGroup(node);
  if (group !== undefined) return group;
  if (node.kind === 'or') return node.children.map(formatFilter).join('|');
  return node.children
    .map((child) => {
      const text = formatFilter(child);
      const needsParentheses =
        child.kind === 'or' && child.children.length > 1 && formatAsGroup(child) === undefined;
      return needsParentheses ? `(${text})` : text;
    })
    .join(';');
}
