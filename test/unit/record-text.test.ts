import { CHUNK_CHARS, MAX_CHUNKS, recordTexts } from '../../projections/vectors/record-text';

const fields = [
  { key: 'title', name: 'Title', type: 'text' },
  { key: 'notes', name: 'Notes', type: 'long_text' },
  { key: 'amount', name: 'Amount', type: 'decimal' },
  { key: 'stage', name: 'Stage', type: 'select' },
  { key: 'tags', name: 'Tags', type: 'multi_select' },
  { key: 'email', name: 'E-mail', type: 'email' },
];

describe('the text of a record (recipe record-text/1)', () => {
  test('name, text-like fields with their names in field order, labels; other types left out', () => {
    expect(
      recordTexts({
        name: 'Acme renewal',
        fields,
        values: {
          amount: 12.5,
          notes: 'Call before Friday',
          title: 'Renewal 2027',
          stage: 'Won',
          tags: ['vip', '', 'emea'],
          email: 'ada@example.org',
        },
        labels: ['Hot', ''],
      }),
    ).toEqual([
      'Acme renewal\nTitle: Renewal 2027\nNotes: Call before Friday\nStage: Won\nTags: vip, emea\nLabels: Hot',
    ]);
  });

  test('empty values are skipped; a record with nothing to read has no text', () => {
    expect(
      recordTexts({ name: 'Only a name', fields, values: { title: '  ', tags: [] }, labels: [] }),
    ).toEqual(['Only a name']);
    expect(recordTexts({ name: ' ', fields, values: { amount: 3 }, labels: [] })).toEqual([]);
    expect(
      recordTexts({ name: '', fields, values: { title: 'Untitled but described' }, labels: [] }),
    ).toEqual(['Title: Untitled but described']);
  });

  test('a long text is cut at whitespace into chunks that each start with the name, at most 16', () => {
    const words = Array.from({ length: 3000 }, (_, index) => `word${index}`).join(' ');
    const chunks = recordTexts({ name: 'Long notes', fields, values: { notes: words }, labels: [] });
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.length).toBeLessThanOrEqual(MAX_CHUNKS);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(CHUNK_CHARS);
      expect(chunk.startsWith('Long notes\n')).toBe(true);
      // No word is split.
      for (const token of chunk.split(/\s+/).slice(2)) expect(token).toMatch(/^(word\d+|Notes:)$/);
    }
    const unbroken = recordTexts({ name: 'Blob', fields, values: { notes: 'x'.repeat(5000) }, labels: [] });
    expect(unbroken.every((chunk) => chunk.length <= CHUNK_CHARS)).toBe(true);
  });
});
