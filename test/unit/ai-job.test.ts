import { aiJobDecider, jobCounts } from '../../command-api/ai/domain/ai-job';
import type { DomainEvent } from '../../command-api/kit/decider';
import { deciderSpec } from '../support/given-when-then';

const AT = new Date('2026-11-26T10:00:00.000Z');
const started: DomainEvent = {
  type: 'AiJobStarted',
  data: {
    jobId: 7,
    kind: 'transform',
    entityId: 3,
    ids: [1, 2],
    userId: '1',
    credentialId: 'token-1',
    concurrency: 8,
    startedAt: AT.toISOString(),
  },
};
const leased = (owner: string, until: Date): DomainEvent => ({
  type: 'AiJobLeased',
  data: { jobId: 7, owner, until: until.toISOString() },
});
const done = (recordId: number): DomainEvent => ({
  type: 'AiJobItemsFinished',
  data: { jobId: 7, items: [{ recordId, status: 'done', value: 'x', tokens: 5, cached: false }] },
});
const later = (ms: number) => new Date(AT.getTime() + ms);

describe('AI job decider', () => {
  const spec = deciderSpec(aiJobDecider);

  test('started once: the same start again changes nothing', () => {
    spec
      .given([started])
      .when({
        kind: 'StartJob',
        jobId: 7,
        job: 'transform',
        entityId: 3,
        ids: [1, 2],
        userId: '1',
        credentialId: 'token-1',
        concurrency: 8,
        now: AT,
      })
      .thenNothingHappens();
  });

  test('outcomes are kept once per record of the job; others are ignored', () => {
    const state = spec
      .given([started, done(1)])
      .when({
        kind: 'RecordItems',
        items: [
          { recordId: 1, status: 'failed', reason: 'again', tokens: 0, cached: false },
          { recordId: 2, status: 'skipped', tokens: 0, cached: false },
          { recordId: 99, status: 'done', tokens: 0, cached: false },
        ],
      })
      .then([
        {
          type: 'AiJobItemsFinished',
          data: { jobId: 7, items: [{ recordId: 2, status: 'skipped', tokens: 0, cached: false }] },
        },
      ]);
    expect(jobCounts(state)).toEqual({ done: 1, unchanged: 0, skipped: 1, failed: 0, tokens: 5 });
  });

  test('it finishes only once every record has its outcome', () => {
    spec
      .given([started, done(1)])
      .when({ kind: 'FinishJob', now: AT })
      .thenThrows('conflict');
    spec
      .given([started, done(1), done(2)])
      .when({ kind: 'FinishJob', now: AT })
      .then([{ type: 'AiJobFinished', data: { jobId: 7, finishedAt: AT.toISOString() } }]);
  });

  test('a lease: kept by its owner, refused to another while it runs, taken once it has run out', () => {
    const held = [started, leased('a', later(60_000))];
    spec
      .given(held)
      .when({ kind: 'LeaseJob', owner: 'a', now: later(20_000), ttlMs: 60_000 })
      .then([leased('a', later(80_000))]);
    spec
      .given(held)
      .when({ kind: 'LeaseJob', owner: 'b', now: later(20_000), ttlMs: 60_000 })
      .thenThrows('conflict');
    spec
      .given(held)
      .when({ kind: 'LeaseJob', owner: 'b', now: later(61_000), ttlMs: 60_000 })
      .then([leased('b', later(121_000))]);
    spec
      .given(held)
      .when({ kind: 'LeaseJob', owner: 'b', now: later(1_000), ttlMs: 60_000, force: true })
      .then([leased('b', later(61_000))]);
  });

  test('a finished job is leased to nobody', () => {
    spec
      .given([
        started,
        done(1),
        done(2),
        { type: 'AiJobFinished', data: { jobId: 7, finishedAt: AT.toISOString() } },
      ])
      .when({ kind: 'LeaseJob', owner: 'a', now: AT, ttlMs: 60_000 })
      .thenNothingHappens();
  });
});
