import fc from 'fast-check';
import { parseValueAnswer, parseVerdictAnswer, valueInstruction } from '../../contracts/ai-output';
import {
  fillPrompt,
  MAX_RENDERED_PROMPT_CHARS,
  promptReferences,
  unknownReferences,
} from '../../contracts/ai-prompt';
import { PlatformError } from '../../contracts/errors';

describe('prompt references', () => {
  test('found once each, in order; spaces inside the braces allowed', () => {
    expect(promptReferences('{{name}} and {{ stage }} and {{name}} {{bad key}} {x}')).toEqual([
      'name',
      'stage',
    ]);
  });

  test('unknown references are those neither of the record nor of the fields', () => {
    expect(unknownReferences('{{name}} {{id}} {{value}} {{stage}} {{nope}}', ['stage'])).toEqual(['nope']);
  });

  test('filled with the values: text as it is, others as JSON, nothing as empty', () => {
    expect(
      fillPrompt('{{name}}|{{n}}|{{tags}}|{{none}}|{{missing}}', {
        name: 'Acme',
        n: 3,
        tags: ['a', 'b'],
        none: null,
      }),
    ).toBe('Acme|3|["a","b"]||');
  });

  test('a value that looks like a reference is not filled in again', () => {
    expect(fillPrompt('{{a}} {{b}}', { a: '{{b}}', b: 'B' })).toBe('{{b}} B');
  });

  test('a long run of braces is read in linear time', () => {
    const hostile = '{{'.repeat(50_000) + 'a'.repeat(50_000);
    const started = performance.now();
    expect(promptReferences(hostile)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('model answers', () => {
  const text = { type: 'text' as const };

  test('a value: JSON {"value": …}, also inside one fenced block', () => {
    expect(parseValueAnswer('{"value": "Short"}', text)).toEqual({ ok: true, value: 'Short' });
    expect(parseValueAnswer('```json\n{"value": 3}\n```', { type: 'number' })).toEqual({
      ok: true,
      value: 3,
    });
    expect(parseValueAnswer('{"value": null}', text)).toEqual({ ok: true, value: null });
  });

  test('numbers and flags given as text are read as such, other text is left for the field check', () => {
    expect(parseValueAnswer('{"value": "42"}', { type: 'number' })).toEqual({ ok: true, value: 42 });
    expect(parseValueAnswer('{"value": "1.25"}', { type: 'decimal' })).toEqual({ ok: true, value: 1.25 });
    expect(parseValueAnswer('{"value": "TRUE"}', { type: 'checkbox' })).toEqual({ ok: true, value: true });
    expect(parseValueAnswer('{"value": "about 4"}', { type: 'number' })).toEqual({
      ok: true,
      value: 'about 4',
    });
  });

  test('anything else is refused with the reason and an excerpt', () => {
    for (const answer of ['Sure! Here it is', '[1,2]', '"value"', '{"val": 1}', '', '```\nnot json\n```']) {
      const parsed = parseValueAnswer(answer, text);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.reason).toMatch(/the model/);
    }
  });

  test('a verdict: valid as a boolean, the reason as text (cut at 2000 characters)', () => {
    expect(parseVerdictAnswer('{"valid": false, "reason": " Too vague "}')).toEqual({
      ok: true,
      value: { valid: false, reason: 'Too vague' },
    });
    expect(parseVerdictAnswer('{"valid": true}')).toEqual({ ok: true, value: { valid: true, reason: null } });
    const long = parseVerdictAnswer(JSON.stringify({ valid: true, reason: 'x'.repeat(5000) }));
    expect(long.ok && long.value.reason?.length).toBe(2000);
    for (const answer of ['{"valid": "yes"}', '{"valid": true, "reason": 5}', 'valid'])
      expect(parseVerdictAnswer(answer).ok).toBe(false);
  });

  test('the instruction names the options of a choice', () => {
    expect(valueInstruction({ type: 'select', config: { options: ['new', 'won'] } })).toMatch(
      /\["new","won"\]/,
    );
    expect(valueInstruction({ type: 'date', config: {} })).toMatch(/YYYY-MM-DD/);
  });
});

describe('the rendered prompt cap', () => {
  test('any prompt and values: the filled prompt is within the cap, or a 400 naming the cap', () => {
    const reference = fc.constantFrom('{{a}}', '{{ b }}', '{{name}}', '{{missing}}');
    const prompt = fc
      .array(fc.oneof(reference, fc.string({ maxLength: 20 })), { maxLength: 40 })
      .map((parts) => parts.join(''));
    const value = fc.oneof(
      fc.string({ maxLength: 50 }),
      fc.nat(60_000).map((length) => 'x'.repeat(length)),
      fc.jsonValue({ maxDepth: 2 }),
    );
    fc.assert(
      fc.property(prompt, fc.record({ a: value, b: value, name: value }), (text, values) => {
        try {
          expect(fillPrompt(text, values).length).toBeLessThanOrEqual(MAX_RENDERED_PROMPT_CHARS);
        } catch (error) {
          expect(error).toBeInstanceOf(PlatformError);
          expect((error as PlatformError).status).toBe(400);
          expect((error as PlatformError).message).toContain(String(MAX_RENDERED_PROMPT_CHARS));
        }
      }),
      { numRuns: 300 },
    );
  });

  test('reproduction: a reference expanded 1,000-fold is refused, not built', () => {
    const started = Date.now();
    expect(() => fillPrompt('{{a}}'.repeat(1_000), { a: 'x'.repeat(90_000) })).toThrow(/longer than 200000/);
    expect(Date.now() - started).toBeLessThan(500);
    expect(fillPrompt('{{a}}'.repeat(2), { a: 'x'.repeat(90_000) })).toHaveLength(180_000);
  });
});
