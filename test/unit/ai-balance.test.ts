import { aiBalanceDecider, balanceView } from '../../command-api/ai/domain/ai-balance';
import type { DomainEvent } from '../../command-api/kit/decider';
import type { AiSpendingPurpose } from '../../contracts/events/ai';
import { deciderSpec } from '../support/given-when-then';

const AT = new Date('2026-11-26T10:00:00.000Z');
const later = (ms: number) => new Date(AT.getTime() + ms);
const purpose: AiSpendingPurpose = {
  operation: 'transform-execute',
  configuration: { kind: 'transform', entityId: 3 },
  userId: '1',
  recordId: 7,
};
const toppedUp = (tokens: number): DomainEvent => ({
  type: 'AiTokensToppedUp',
  data: { tokens, note: null, userId: '1' },
});
const reserved = (reservationId: string, tokens: number, at = AT, holdMs = 60_000): DomainEvent => ({
  type: 'AiTokensReserved',
  data: {
    reservationId,
    tokens,
    at: at.toISOString(),
    expiresAt: new Date(at.getTime() + holdMs).toISOString(),
  },
});

describe('AI token balance decider', () => {
  const spec = deciderSpec(aiBalanceDecider);

  test('a top-up adds tokens', () => {
    const state = spec
      .given([toppedUp(100)])
      .when({ kind: 'TopUp', tokens: 50, note: 'invoice', userId: '1' })
      .then([{ type: 'AiTokensToppedUp', data: { tokens: 50, note: 'invoice', userId: '1' } }]);
    expect(balanceView(state, AT)).toEqual({
      tokens: 150,
      reserved: 0,
      available: 150,
      toppedUp: 150,
      spent: 0,
    });
  });

  test('a reservation within what is available holds its tokens until it expires', () => {
    const state = spec
      .given([toppedUp(100), reserved('a', 60)])
      .when({ kind: 'Reserve', reservationId: 'b', tokens: 40, now: AT, holdMs: 60_000 })
      .then([reserved('b', 40)]);
    expect(balanceView(state, AT)).toMatchObject({ tokens: 100, reserved: 100, available: 0 });
    expect(balanceView(state, later(61_000))).toMatchObject({ reserved: 0, available: 100 });
  });

  test('a reservation the balance cannot cover is refused with what is needed and what is available', () => {
    const error = spec
      .given([toppedUp(100), reserved('a', 60)])
      .when({ kind: 'Reserve', reservationId: 'b', tokens: 41, now: AT, holdMs: 60_000 })
      .thenThrows('ai_balance_insufficient');
    expect(error.details).toEqual({ needed: 41, available: 40 });
    expect(error.status).toBe(402);
    expect(error.message).toMatch(/POST \/ai\/balance\/top-up/);
  });

  test('an expired reservation (its call never settled) no longer holds tokens', () => {
    spec
      .given([toppedUp(100), reserved('lost', 100)])
      .when({ kind: 'Reserve', reservationId: 'b', tokens: 100, now: later(120_000), holdMs: 60_000 })
      .then([reserved('b', 100, later(120_000))]);
  });

  test('the same reservation asked again changes nothing', () => {
    spec
      .given([toppedUp(100), reserved('a', 60)])
      .when({ kind: 'Reserve', reservationId: 'a', tokens: 60, now: AT, holdMs: 60_000 })
      .thenNothingHappens();
  });

  test('spending settles the reservation with what the model reported', () => {
    const state = spec
      .given([toppedUp(100), reserved('a', 60)])
      .when({
        kind: 'Spend',
        reservationId: 'a',
        now: AT,
        promptTokens: 12,
        completionTokens: 5,
        reported: true,
        model: 'gpt-test',
        purpose,
      })
      .then([
        {
          type: 'AiTokensSpent',
          data: {
            reservationId: 'a',
            at: AT.toISOString(),
            promptTokens: 12,
            completionTokens: 5,
            tokens: 17,
            reported: true,
            model: 'gpt-test',
            purpose,
          },
        },
      ]);
    expect(balanceView(state, AT)).toEqual({
      tokens: 83,
      reserved: 0,
      available: 83,
      toppedUp: 100,
      spent: 17,
    });
  });

  test('a released reservation spends nothing; releasing one that is gone changes nothing', () => {
    const state = spec
      .given([toppedUp(100), reserved('a', 60)])
      .when({ kind: 'Release', reservationId: 'a', now: AT })
      .then([{ type: 'AiReservationReleased', data: { reservationId: 'a', at: AT.toISOString() } }]);
    expect(balanceView(state, AT)).toMatchObject({ tokens: 100, reserved: 0, spent: 0 });
    spec
      .given([toppedUp(100)])
      .when({ kind: 'Release', reservationId: 'a', now: AT })
      .thenNothingHappens();
  });

  test("a job's block: each spending settles its call's part, the rest holds until released", () => {
    const block = reserved('block', 100);
    const settle = (tokens: number): DomainEvent => ({
      type: 'AiTokensSpent',
      data: {
        reservationId: 'block',
        settles: 30,
        at: AT.toISOString(),
        promptTokens: tokens,
        completionTokens: 0,
        tokens,
        reported: true,
        model: 'm',
        purpose,
      },
    });
    const state = spec
      .given([toppedUp(1000), block, settle(10)])
      .when({
        kind: 'Spend',
        reservationId: 'block',
        settles: 30,
        now: AT,
        promptTokens: 12,
        completionTokens: 0,
        reported: true,
        model: 'm',
        purpose,
      })
      .then([settle(12)]);
    expect(balanceView(state, AT)).toEqual({
      tokens: 978,
      reserved: 40,
      available: 938,
      toppedUp: 1000,
      spent: 22,
    });
    const released = spec
      .given([toppedUp(1000), block, settle(10), settle(12)])
      .when({ kind: 'Release', reservationId: 'block', now: AT })
      .then([{ type: 'AiReservationReleased', data: { reservationId: 'block', at: AT.toISOString() } }]);
    expect(balanceView(released, AT)).toMatchObject({ reserved: 0, available: 978 });
  });

  const spend = (reservationId: string, promptTokens: number, completionTokens: number, now = AT) =>
    ({
      kind: 'Spend',
      reservationId,
      now,
      promptTokens,
      completionTokens,
      reported: true,
      model: 'm',
      purpose,
    }) as const;
  const spent = (
    reservationId: string,
    promptTokens: number,
    completionTokens: number,
    at = AT,
  ): DomainEvent => ({
    type: 'AiTokensSpent',
    data: {
      reservationId,
      at: at.toISOString(),
      promptTokens,
      completionTokens,
      tokens: promptTokens + completionTokens,
      reported: true,
      model: 'm',
      purpose,
    },
  });

  test('a spending is charged at most what its reservation holds, the answer cut first', () => {
    const state = spec
      .given([toppedUp(1_000), reserved('a', 180)])
      .when(spend('a', 150, 999_850))
      .then([spent('a', 150, 30)]);
    expect(balanceView(state, AT)).toMatchObject({ tokens: 820, reserved: 0 });
  });

  test('reproduction: a spending whose reservation lapsed (others reserved its tokens since) takes only what is available', () => {
    // 188 topped up; `a` held 170 and lapsed; `b` reserved 170 and spent them; `a`'s call comes back late.
    const history = [
      toppedUp(188),
      reserved('a', 170),
      reserved('b', 170, later(61_000)),
      spent('b', 100, 70, later(62_000)),
    ];
    const state = spec
      .given(history)
      .when(spend('a', 100, 70, later(63_000)))
      .then([spent('a', 18, 0, later(63_000))]);
    expect(balanceView(state, later(63_000))).toMatchObject({ tokens: 0, spent: 188 });
  });

  test("a job's end lets go every reservation still held for it, and no other", () => {
    const forJob = (reservationId: string, tokens: number): DomainEvent => {
      const event = reserved(reservationId, tokens);
      return { ...event, data: { ...(event.data as object), heldFor: 'aiJob:4' } };
    };
    const state = spec
      .given([toppedUp(1_000), forJob('dead-block', 300), forJob('other', 100), reserved('preview', 50)])
      .when({ kind: 'ReleaseHeldFor', heldFor: 'aiJob:4', now: AT })
      .then([
        { type: 'AiReservationReleased', data: { reservationId: 'dead-block', at: AT.toISOString() } },
        { type: 'AiReservationReleased', data: { reservationId: 'other', at: AT.toISOString() } },
      ]);
    expect(balanceView(state, AT)).toMatchObject({ reserved: 50, available: 950 });
  });
});
