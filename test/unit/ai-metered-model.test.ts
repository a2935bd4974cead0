import fc from 'fast-check';
import { MeteredModel, ReservationBlock, SETTLE_MARGIN_MS } from '../../command-api/ai/metered-model';
import { aiBalanceDecider, balanceView } from '../../command-api/ai/domain/ai-balance';
import { CommandHandler } from '../../command-api/kit/handler';
import { PlatformError } from '../../contracts/errors';
import { streamName } from '../../contracts/streams';
import {
  LanguageModelError,
  type Completion,
  type CompletionRequest,
  type LanguageModel,
  type TokenUsage,
} from '../../infra/ai/language-model/port';
import { MemoryEventStore } from '../support/memory-event-store';

/**
 * The metered model against a scripted model and a clock that moves only when the model or a wait says so: a
 * model's numbers (usage, Retry-After) are untrusted, and whatever they are the balance is never charged more
 * than a call reserved, never goes below zero, keeps no reservation once a call ended, and no call outlives
 * its reservation.
 */
const TENANT = 'acme';
const CALL_TIMEOUT_MS = 10_000;
const HOLD_MS = CALL_TIMEOUT_MS + SETTLE_MARGIN_MS + 5_000;
const context = { tenant: TENANT, actor: { userId: '1' }, correlationId: 'c', causationId: 'c' };
const purpose = {
  operation: 'transform-preview' as const,
  configuration: null,
  userId: '1',
  recordId: null,
};
const REQUEST: CompletionRequest = {
  messages: [{ role: 'user', content: 'x'.repeat(300) }],
  maxOutputTokens: 80,
};
/** What REQUEST reserves: its 300 characters at 3 a token, 8 for its one message, and its output limit. */
const ESTIMATE = 100 + 8 + 80;

/** One answer of the scripted model: a completion with this usage, or a failure, after `takesMs`. */
type Step =
  | { readonly usage: unknown; readonly takesMs: number }
  | { readonly rateLimitedFor: number | undefined; readonly takesMs: number };

function setUp(steps: Step[], tokens: number) {
  const store = new MemoryEventStore();
  const handler = new CommandHandler(store);
  let clock = Date.parse('2026-01-01T00:00:00Z');
  let calls = 0;
  const model: LanguageModel = {
    model: 'scripted',
    async complete(request): Promise<Completion> {
      calls++;
      const step = steps.shift() ?? { usage: null, takesMs: 0 };
      clock += step.takesMs;
      // As the adapter's own timeout (AI_TIMEOUT_MS per attempt) cuts a slow answer.
      if (step.takesMs > CALL_TIMEOUT_MS || request.signal?.aborted)
        throw new LanguageModelError('timeout', 'no answer in time');
      if ('rateLimitedFor' in step)
        throw new LanguageModelError('rate-limited', 'slow down', step.rateLimitedFor);
      return { text: 'ok', usage: step.usage as TokenUsage | null, model: 'scripted', finishReason: 'stop' };
    },
  };
  let waited = 0;
  const metered = new MeteredModel({
    handler,
    modelFor: async () => model,
    now: () => new Date(clock),
    reservationHoldMs: HOLD_MS,
    callTimeoutMs: CALL_TIMEOUT_MS,
    backoffMs: () => 100,
    sleep: async (ms) => {
      waited += ms;
      clock += ms;
    },
  });
  const stream = streamName('aiBalance', TENANT, 'tokens');
  const topUp = () =>
    handler.handle(
      stream,
      aiBalanceDecider,
      { kind: 'TopUp', tokens, note: null, userId: null },
      { ...context, commandId: 'top-up' },
    );
  const balance = async () => {
    const { state } = await new CommandHandler(store).load(stream, aiBalanceDecider);
    return balanceView(state, new Date(clock));
  };
  /** Spendings appended once their reservation had lapsed (none, ever). */
  const spendingsAfterTheirLapse = async () => {
    const lapses = new Map<string, number>();
    const late: unknown[] = [];
    for await (const event of store.readStream(stream)) {
      const data = event.data as { reservationId?: string; at?: string; expiresAt?: string };
      if (event.type === 'AiTokensReserved') lapses.set(data.reservationId!, Date.parse(data.expiresAt!));
      if (event.type === 'AiTokensSpent' && Date.parse(data.at!) >= (lapses.get(data.reservationId!) ?? 0))
        late.push(event.data);
    }
    return late;
  };
  return {
    metered,
    topUp,
    spendingsAfterTheirLapse,
    balance,
    calls: () => calls,
    waited: () => waited,
    advance: (ms: number) => (clock += ms),
  };
}

const ask = (metered: MeteredModel, block?: ReservationBlock) =>
  metered.complete({
    tenant: TENANT,
    purpose,
    request: REQUEST,
    attempts: 5,
    context,
    ...(block && { block }),
  });

/** Any number a model could send, and things that are no number at all. */
const anyCount = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.double(),
  fc.constantFrom(1e308, -1e308, Number.MAX_VALUE, Number.NaN, Infinity, -0, 0.5, 1_000_000),
  fc.constantFrom('NaN', '12', '', '1e3', null, undefined, true, {}, []),
);
const anyUsage = fc.oneof(
  fc.constant(null),
  fc.record({ promptTokens: anyCount, completionTokens: anyCount, totalTokens: anyCount }),
  fc.record({ promptTokens: anyCount }),
);

test('whatever usage the model reports, the call is charged a whole number within what it reserved', async () => {
  await fc.assert(
    fc.asyncProperty(anyUsage, async (usage) => {
      const world = setUp([{ usage, takesMs: 10 }], 10_000);
      await world.topUp();
      const answer = await ask(world.metered);
      expect(Number.isSafeInteger(answer.tokens)).toBe(true);
      expect(answer.tokens).toBeGreaterThanOrEqual(0);
      expect(answer.tokens).toBeLessThanOrEqual(ESTIMATE);
      const balance = await world.balance();
      expect(balance).toMatchObject({ spent: answer.tokens, reserved: 0 });
      expect(balance.tokens).toBeGreaterThanOrEqual(0);
    }),
    { numRuns: 300 },
  );
});

test('a reported usage of -0 charges 0, the same number in the answer and the ledger', async () => {
  const world = setUp(
    [{ usage: { promptTokens: -0, completionTokens: -0, totalTokens: 0 }, takesMs: 10 }],
    1_000,
  );
  await world.topUp();
  const answer = await ask(world.metered);
  expect(Object.is(answer.tokens, 0)).toBe(true);
  expect(await world.balance()).toMatchObject({ spent: 0, reserved: 0 });
});

test('reproduction: 1,000,000 reported tokens on a 188-token reservation charge 188, not the balance below zero', async () => {
  const world = setUp([{ usage: { promptTokens: 1_000_000, completionTokens: 0 }, takesMs: 10 }], 200);
  await world.topUp();
  const answer = await ask(world.metered);
  expect(answer.tokens).toBe(ESTIMATE);
  expect(await world.balance()).toMatchObject({ tokens: 200 - ESTIMATE, spent: ESTIMATE, reserved: 0 });
});

test('a Retry-After past the call timeout is not waited: the call fails at once, its reservation let go', async () => {
  const world = setUp([{ rateLimitedFor: 3_600_000, takesMs: 10 }], 1_000);
  await world.topUp();
  await expect(ask(world.metered)).rejects.toMatchObject({ kind: 'unavailable' });
  expect(world.waited()).toBe(0);
  expect(world.calls()).toBe(1);
  expect(await world.balance()).toMatchObject({ spent: 0, reserved: 0 });
});

test('any Retry-After and any slowness: a call ends within its timeout, never past its reservation, never charged twice', async () => {
  const step = fc.oneof(
    fc.record({ usage: anyUsage, takesMs: fc.nat(CALL_TIMEOUT_MS * 2) }),
    fc.record({
      rateLimitedFor: fc.option(fc.oneof(fc.nat(CALL_TIMEOUT_MS * 2), fc.constant(3_600_000)), {
        nil: undefined,
      }),
      takesMs: fc.nat(CALL_TIMEOUT_MS),
    }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (steps) => {
      const world = setUp([...steps], 188);
      await world.topUp();
      let spent = 0;
      // Calls one after the other on a balance that covers one or two: a request's, then a job's (from a block,
      // its retries given AI_TIMEOUT_MS each); a lapse never pays for another call.
      const block = new ReservationBlock(TENANT, context, 2);
      for (let call = 0; call < 3; call++) {
        const waitedBefore = world.waited();
        try {
          spent += (await ask(world.metered, call === 0 ? undefined : block)).tokens;
        } catch (error) {
          expect(error).toBeInstanceOf(PlatformError);
          expect(['unavailable', 'upstream_timeout', 'ai_balance_insufficient']).toContain(
            (error as PlatformError).kind,
          );
        }
        // A request's call waits less than AI_TIMEOUT_MS; a job's, less than its reservation holds.
        expect(world.waited() - waitedBefore).toBeLessThan(
          call === 0 ? CALL_TIMEOUT_MS : HOLD_MS - SETTLE_MARGIN_MS,
        );
      }
      await world.metered.closeBlock(block);
      const balance = await world.balance();
      expect(balance).toMatchObject({ spent, reserved: 0 });
      expect(balance.tokens).toBeGreaterThanOrEqual(0);
      expect(await world.spendingsAfterTheirLapse()).toEqual([]);
    }),
    { numRuns: 200 },
  );
});

test("a job's block about to lapse is not drawn from: the call reserves anew, and spends within its reservation", async () => {
  const world = setUp(
    [
      { usage: { promptTokens: 50, completionTokens: 50 }, takesMs: 10 },
      { usage: { promptTokens: 50, completionTokens: 50 }, takesMs: 10 },
    ],
    10_000,
  );
  await world.topUp();
  const block = new ReservationBlock(TENANT, context, 4);
  await ask(world.metered, block);
  const first = block.reservationId;
  // Later than a call drawn from it now could end before it lapses.
  world.advance(HOLD_MS - CALL_TIMEOUT_MS - SETTLE_MARGIN_MS + 1);
  await ask(world.metered, block);
  expect(block.reservationId).not.toBe(first);
  await world.metered.closeBlock(block);
  expect(await world.balance()).toMatchObject({ spent: 200, reserved: 0 });
});
