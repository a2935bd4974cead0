/**
 * What of a record semantic search reads: the recipe that turns a record into the texts its vectors are made
 * from. It is versioned: a change of recipe (as of model) rebuilds every vector.
 *
 * Recipe `record-text/1`:
 * - the record's name on the first line;
 * - each field of a text-like type (text, long text, select, multi-select) that has a value, as
 *   `<field name>: <value>` (a multi-select's values joined by `, `), in the module's field order;
 * - its labels as `Labels: <name>, <name>`.
 * Numbers, dates, e-mail addresses, links, phone numbers, users, relations, files and checkboxes are left out:
 * filters find those, and they carry little meaning for a sentence model.
 *
 * A text longer than a chunk is cut at whitespace into chunks of at most `CHUNK_CHARS` characters, each
 * starting with the record's name; at most `MAX_CHUNKS` chunks are made (what follows is not searchable). A
 * record's score is its best chunk's.
 */
export const RECORD_TEXT_RECIPE = 'record-text/1';
export const CHUNK_CHARS = 1000;

/** What a vector index is made of: the model and this recipe. Either changed, the index is rebuilt. */
export function vectorIndexIdentity(model: string): string {
  return `${model}/${RECORD_TEXT_RECIPE}`;
}
export const MAX_CHUNKS = 16;

const TEXT_LIKE_TYPES: ReadonlySet<string> = new Set(['text', 'long_text', 'select', 'multi_select']);

export interface RecordTextSource {
  readonly name: string;
  /** The module's fields in their order. */
  readonly fields: ReadonlyArray<{ readonly key: string; readonly name: string; readonly type: string }>;
  /** The record's values by field key. */
  readonly values: Readonly<Record<string, unknown>>;
  readonly labels: readonly string[];
}

function valueText(value: unknown): string | null {
  if (typeof value === 'string') return value.trim() === '' ? null : value.trim();
  if (Array.isArray(value)) {
    const parts = value.filter((part): part is string => typeof part === 'string' && part.trim() !== '');
    return parts.length === 0 ? null : parts.join(', ');
  }
  return null;
}

/** Splits `text` at whitespace into pieces of at most `size` characters (a longer word is cut). */
function pieces(text: string, size: number): string[] {
  const result: string[] = [];
  let rest = text.trim();
  while (rest.length > size) {
    let cut = rest.lastIndexOf(' ', size);
    const newline = rest.lastIndexOf('\n', size);
    cut = Math.max(cut, newline);
    if (cut <= 0) cut = size;
    result.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest !== '') result.push(rest);
  return result;
}

/** The texts a record's vectors are made from (none: nothing to search by). */
export function recordTexts(source: RecordTextSource): string[] {
  const name = source.name.trim();
  const lines: string[] = [];
  for (const field of source.fields) {
    if (!TEXT_LIKE_TYPES.has(field.type)) continue;
    const text = valueText(source.values[field.key]);
    if (text !== null) lines.push(`${field.name}: ${text}`);
  }
  const labels = source.labels.filter((label) => label.trim() !== '');
  if (labels.length > 0) lines.push(`Labels: ${labels.join(', ')}`);
  const body = lines.join('\n');
  if (name === '' && body === '') return [];
  const whole = name === '' ? body : body === '' ? name : `${name}\n${body}`;
  if (whole.length <= CHUNK_CHARS) return [whole];
  // Each chunk starts with the name, so that a piece of a long text keeps what it is about.
  const head = name === '' ? '' : `${name.slice(0, 200)}\n`;
  return pieces(body, CHUNK_CHARS - head.length)
    .slice(0, MAX_CHUNKS)
    .map((piece) => `${head}${piece}`);
}
