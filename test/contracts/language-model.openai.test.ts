import { createOpenAiLanguageModel } from '../../infra/ai/language-model/openai';
import { LanguageModelError } from '../../infra/ai/language-model/port';
import { describeContract } from '../support/adapter-report';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { languageModelContract, type LanguageModelFault } from './language-model';

const API_KEY = 'sk-test-5ecret-never-shown';

describeContract(
  'language model',
  'OpenAI-compatible endpoint (a loopback test server)',
  { kind: 'embedded' },
  () => {
    let fake: FakeOpenAi;
    beforeAll(async () => {
      fake = await startFakeOpenAi();
    });
    afterAll(() => fake.close());
    const open = (timeoutMs = 5000) =>
      createOpenAiLanguageModel({ baseUrl: fake.baseUrl, apiKey: API_KEY, model: 'gpt-test', timeoutMs });
    const heal = () => {
      fake.mode = 'normal';
      fake.chatReply = undefined;
      fake.chatReplies.length = 0;
      fake.chatDelayMs = 0;
    };
    const hello = { messages: [{ role: 'user', content: 'Say hello.' }], maxOutputTokens: 16 } as const;

    /** The fake's mode for a fault, or the answer it gives instead. */
    const FAULTS: Record<LanguageModelFault, () => void> = {
      'rate-limited': () => (fake.mode = 'rate-limited'),
      'server-error': () => (fake.mode = 'fail-500'),
      'bad-key': () => (fake.mode = 'unauthorized'),
      'wrong-model': () =>
        (fake.chatReply = () => ({
          status: 404,
          body: { error: { message: 'The model `gpt-test` does not exist', code: 'model_not_found' } },
        })),
      'bad-request': () =>
        (fake.chatReply = () => ({
          status: 400,
          body: { error: { message: "This model's maximum context length is 8192 tokens" } },
        })),
      'no-text': () => (fake.mode = 'empty-choices'),
      slow: () => (fake.mode = 'slow'),
    };

    languageModelContract(async () => open(), {
      inject: (fault) => FAULTS[fault](),
      heal,
      open: async (timeoutMs) => open(timeoutMs),
    });

    describe('the OpenAI adapter', () => {
      afterEach(heal);

      test('asks for the configured model with the messages and the output limit as max_tokens', async () => {
        const model = open();
        expect(model.model).toBe('gpt-test');
        const messages = [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Say hello.' },
        ] as const;
        await model.complete({ messages, maxOutputTokens: 42 });
        expect(fake.chatRequests.at(-1)).toEqual({ model: 'gpt-test', messages, max_tokens: 42 });
        await model.complete({ messages, maxOutputTokens: 42, json: true });
        expect(fake.chatRequests.at(-1)).toEqual({
          model: 'gpt-test',
          messages,
          max_tokens: 42,
          response_format: { type: 'json_object' },
        });
      });

      test('gives the text, the usage and the model as the endpoint answered them', async () => {
        fake.chatReplies.push('{"verdict": "valid"}', { content: 'cut', finishReason: 'content_filter' });
        const model = open();
        const messages = [{ role: 'user', content: 'Is this valid?' }] as const;
        expect(await model.complete({ messages, maxOutputTokens: 50 })).toEqual({
          text: '{"verdict": "valid"}',
          // The fake counts a token for 4 characters: 14 asked, 20 answered.
          usage: { promptTokens: 4, completionTokens: 5, totalTokens: 9 },
          model: 'gpt-test',
          finishReason: 'stop',
        });
        expect(await model.complete({ messages, maxOutputTokens: 50 })).toMatchObject({
          text: 'cut',
          finishReason: 'content_filter',
        });
      });

      test('names the configured model when the answer names none', async () => {
        fake.chatReply = () => ({
          status: 200,
          body: { model: '', choices: [{ index: 0, message: { content: 'hi' }, finish_reason: 'stop' }] },
        });
        expect(await open().complete(hello)).toMatchObject({ text: 'hi', model: 'gpt-test', usage: null });
      });

      test('usage is null when the endpoint reports none', async () => {
        fake.mode = 'no-usage';
        expect(await open().complete(hello)).toMatchObject({ text: 'echo: Say hello.', usage: null });
      });

      test('asks once: a rate limit is handed back with the endpoint’s hint, to retry on the caller’s terms', async () => {
        fake.mode = 'rate-limited';
        const before = fake.chatRequests.length;
        const error = await open()
          .complete(hello)
          .catch((failure: unknown) => failure);
        expect(fake.chatRequests.length - before).toBe(1);
        expect(error).toBeInstanceOf(LanguageModelError);
        expect(error).toMatchObject({ reason: 'rate-limited', retryAfterMs: 1000 });
        expect((error as Error).message).toMatch(/answered 429: .*Rate limit reached/);

        fake.mode = 'normal';
        fake.chatReplies.push({ status: 429, headers: { 'retry-after-ms': '250' }, body: {} });
        await expect(open().complete(hello)).rejects.toMatchObject({ retryAfterMs: 250 });
      });

      test.each([
        ['malformed', 'unavailable', /answered no text/],
        ['empty-choices', 'unavailable', /answered no text/],
        ['fail-500', 'unavailable', /answered 500: .*model crashed/],
        ['unauthorized', 'misconfigured', /answered 401: .*API key/],
      ] as const)('an endpoint answering %s is %s, with why', async (mode, reason, why) => {
        fake.mode = mode;
        const failure = open().complete(hello);
        await expect(failure).rejects.toThrow(why);
        await expect(failure).rejects.toMatchObject({ reason });
      });

      test('a wrong model or base URL (404) is misconfigured, and the message says which status', async () => {
        FAULTS['wrong-model']();
        await expect(open().complete(hello)).rejects.toThrow(
          /answered 404: .*does not exist.*model and the base URL/,
        );
      });

      test('an answer with no text content is unavailable; a refusal is refused', async () => {
        const answer = (message: object) => ({
          status: 200,
          body: { model: 'gpt-test', choices: [{ index: 0, message, finish_reason: 'stop' }] },
        });
        fake.chatReplies.push(
          answer({ role: 'assistant', content: null }),
          answer({ role: 'assistant', content: null, refusal: 'I cannot help with that.' }),
        );
        const model = open();
        await expect(model.complete(hello)).rejects.toMatchObject({
          reason: 'unavailable',
          message: 'the chat endpoint answered no text',
        });
        await expect(model.complete(hello)).rejects.toMatchObject({
          reason: 'refused',
          message: 'the model refused: I cannot help with that.',
        });
      });

      test('an endpoint that cannot be reached is unavailable', async () => {
        const nowhere = createOpenAiLanguageModel({
          baseUrl: 'http://127.0.0.1:9/v1',
          apiKey: API_KEY,
          model: 'm',
          timeoutMs: 10_000,
        });
        await expect(nowhere.complete(hello)).rejects.toMatchObject({
          reason: 'unavailable',
          message: 'the chat endpoint could not be reached',
        });
      });

      test('the API key appears in no error message, even when the endpoint repeats it', async () => {
        const messages: string[] = [];
        const record = async (call: Promise<unknown>) =>
          call.then(
            () => messages.push('answered'),
            (error: Error) => messages.push(error.message),
          );
        for (const mode of ['unauthorized', 'fail-500', 'rate-limited', 'malformed'] as const) {
          fake.mode = mode;
          await record(open().complete(hello));
        }
        fake.mode = 'normal';
        fake.chatReplies.push({ status: 400, body: { error: { message: `bad request from ${API_KEY}` } } });
        await record(open().complete(hello));
        fake.mode = 'slow';
        await record(open(100).complete(hello));
        expect(messages).toHaveLength(6);
        expect(messages).not.toContain('answered');
        expect(messages[0]).toMatch(/Incorrect API key provided: \*\*\*/);
        for (const message of messages) expect(message).not.toContain(API_KEY);
      });

      test('calls side by side go out together, each with its own answer', async () => {
        fake.chatGatherInFlight = 6;
        fake.chatInFlightMax = 0;
        const model = open();
        const questions = Array.from({ length: 6 }, (_, index) => `question ${index}`);
        const answers = await Promise.all(
          questions.map((content) =>
            model.complete({ messages: [{ role: 'user', content }], maxOutputTokens: 20 }),
          ),
        );
        expect(answers.map((answer) => answer.text)).toEqual(
          questions.map((question) => `echo: ${question}`),
        );
        expect(fake.chatInFlightMax).toBe(6);
        expect(fake.chatInFlight).toBe(0);
        fake.chatGatherInFlight = 0;
      });
    });
  },
);
