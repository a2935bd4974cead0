import fc from 'fast-check';
import { MAX_RETRY_AFTER_MS, retryAfterMsOf } from '../../infra/ai/language-model/openai';

/** An endpoint's Retry-After is untrusted: any header value reads as a bounded, non-negative delay or as none. */
const headers = (values: Record<string, string>) => ({ get: (name: string) => values[name] ?? null });

test('any retry-after or retry-after-ms value is none, or a delay between 0 and a day', () => {
  const value = fc.oneof(
    fc.string({ maxLength: 60 }),
    fc.double().map(String),
    fc.integer().map(String),
    fc.constantFrom('1e308', 'Infinity', '-1', 'NaN', '0x10', ' 5 ', 'Fri, 31 Dec 9999 23:59:59 GMT', '1.5'),
    fc.date({ noInvalidDate: true }).map((date) => date.toUTCString()),
  );
  fc.assert(
    fc.property(value, fc.constantFrom('retry-after', 'retry-after-ms'), (text, name) => {
      const delay = retryAfterMsOf(headers({ [name]: text }));
      if (delay === undefined) return;
      expect(Number.isFinite(delay)).toBe(true);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(MAX_RETRY_AFTER_MS);
    }),
    { numRuns: 2_000 },
  );
});

test('seconds, milliseconds and HTTP dates read as they mean; other spellings are no hint', () => {
  expect(retryAfterMsOf(headers({ 'retry-after': '3' }))).toBe(3_000);
  expect(retryAfterMsOf(headers({ 'retry-after': '0.5' }))).toBe(500);
  expect(retryAfterMsOf(headers({ 'retry-after-ms': '250', 'retry-after': '9' }))).toBe(250);
  expect(retryAfterMsOf(headers({ 'retry-after': '3600' }))).toBe(3_600_000);
  expect(retryAfterMsOf(headers({ 'retry-after': '99999999' }))).toBe(MAX_RETRY_AFTER_MS);
  expect(retryAfterMsOf(headers({ 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' }))).toBe(
    MAX_RETRY_AFTER_MS,
  );
  expect(retryAfterMsOf(headers({ 'retry-after': 'Sun, 06 Nov 1994 08:49:37 GMT' }))).toBe(0);
  for (const text of ['-1', '1e3', '0x10', 'NaN', 'Infinity', '', 'soon', '2026-01-01'])
    expect([text, retryAfterMsOf(headers({ 'retry-after': text }))]).toEqual([text, undefined]);
  expect(retryAfterMsOf(undefined)).toBeUndefined();
});
