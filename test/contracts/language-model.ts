import { LanguageModelError, type LanguageModel } from '../../infra/ai/language-model/port';

/** A way the endpoint misbehaves, which an adapter's own test knows how to bring about. */
export type LanguageModelFault =
  'rate-limited' | 'server-error' | 'bad-key' | 'wrong-model' | 'bad-request' | 'no-text' | 'slow';

export interface LanguageModelFaults {
  /** Every call meets this fault until `heal`; `slow` answers only after seconds. */
  inject(fault: LanguageModelFault): void;
  heal(): void;
  /** The adapter again, with this deadline. */
  open(timeoutMs: number): Promise<LanguageModel>;
}

/** What the port says each fault is, and whether asking again may help. */
const FAULT_CLASSES = [
  ['rate-limited', 'rate-limited', true],
  ['server-error', 'unavailable', true],
  ['no-text', 'unavailable', true],
  ['bad-key', 'misconfigured', false],
  ['wrong-model', 'misconfigured', false],
  ['bad-request', 'refused', false],
] as const;

/** What `call` was rejected with (a test failure when it answered). */
async function rejectionOf(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, but it answered');
}

/**
 * The language-model port's contract: every adapter passes the same suite. Against a real endpoint it runs
 * without `faults`; the failure cases need an endpoint the test can make misbehave.
 */
export function languageModelContract(
  open: () => Promise<LanguageModel>,
  faults?: LanguageModelFaults,
): void {
  let model: LanguageModel;
  beforeAll(async () => {
    model = await open();
  });

  test('answers text for a simple prompt, with the usage the model reports', async () => {
    expect(model.model).toMatch(/\S/);
    const completion = await model.complete({
      messages: [
        { role: 'system', content: 'You answer in one short sentence.' },
        { role: 'user', content: 'Say hello to Ada.' },
      ],
      maxOutputTokens: 64,
    });
    expect(completion.text).toMatch(/\S/);
    expect(completion.model).toMatch(/\S/);
    expect(completion.finishReason).toBe('stop');
    expect(completion.usage).not.toBeNull();
    const { promptTokens, completionTokens, totalTokens } = completion.usage!;
    expect(promptTokens).toBeGreaterThan(0);
    expect(completionTokens).toBeGreaterThan(0);
    expect(totalTokens).toBeGreaterThanOrEqual(promptTokens + completionTokens);
  });

  test('an answer longer than the output limit is cut there, and says so', async () => {
    const completion = await model.complete({
      messages: [
        { role: 'user', content: 'Write the numbers from one to two hundred in words, one per line.' },
      ],
      maxOutputTokens: 5,
    });
    expect(completion.finishReason).toBe('length');
    expect(completion.usage!.completionTokens).toBeLessThanOrEqual(5);
  });

  test('JSON mode answers a JSON object', async () => {
    const completion = await model.complete({
      messages: [
        { role: 'system', content: 'You answer with a JSON object only.' },
        { role: 'user', content: 'Give back {"colour": "blue"} as JSON.' },
      ],
      maxOutputTokens: 100,
      json: true,
    });
    const parsed: unknown = JSON.parse(completion.text);
    expect(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)).toBe(true);
  });

  test('a call cancelled before it starts ends at once, as a cancellation rather than a failure', async () => {
    const error = await rejectionOf(
      model.complete({
        messages: [{ role: 'user', content: 'Say hello.' }],
        maxOutputTokens: 16,
        signal: AbortSignal.abort(),
      }),
    );
    expect(error).not.toBeInstanceOf(LanguageModelError);
    expect((error as Error).name).toBe('AbortError');
  });

  if (!faults) return;

  describe('when the endpoint misbehaves', () => {
    afterEach(() => faults.heal());
    const ask = (on: LanguageModel, signal?: AbortSignal) =>
      on.complete({
        messages: [{ role: 'user', content: 'Say hello.' }],
        maxOutputTokens: 16,
        ...(signal && { signal }),
      });

    test.each(FAULT_CLASSES)('%s is %s, retryable: %s', async (fault, reason, retryable) => {
      faults.inject(fault);
      const error = await rejectionOf(ask(model));
      expect(error).toBeInstanceOf(LanguageModelError);
      expect(error).toMatchObject({ reason, retryable });
    });

    test('an answer slower than the deadline is a retryable timeout, without waiting for it', async () => {
      faults.inject('slow');
      const hasty = await faults.open(200);
      const started = Date.now();
      const error = await rejectionOf(ask(hasty));
      expect(Date.now() - started).toBeLessThan(1500);
      expect(error).toBeInstanceOf(LanguageModelError);
      expect(error).toMatchObject({ reason: 'timeout', retryable: true });
    });

    test('a call cancelled while waiting for a slow answer ends at once, as a cancellation', async () => {
      faults.inject('slow');
      const cancel = new AbortController();
      setTimeout(() => cancel.abort(), 100);
      const started = Date.now();
      const error = await rejectionOf(ask(model, cancel.signal));
      expect(Date.now() - started).toBeLessThan(1500);
      expect(error).not.toBeInstanceOf(LanguageModelError);
      expect((error as Error).name).toBe('AbortError');
    });
  });
}
