import type { AiJobItem } from '../../../contracts/events/ai';
import { PlatformError } from '../../../contracts/errors';
import type { Decider, DomainEvent } from '../../kit/decider';

/**
 * An execute job: a saved transform or validation run on a list of records. Each record's outcome is kept as
 * it finishes (a few at a time), so a job cut short (the process died) shows what it did and goes on from
 * there; the job finishes once every record has an outcome.
 */
export interface AiJobState {
  readonly status: 'none' | 'running' | 'finished';
  readonly jobId: number;
  readonly kind: 'transform' | 'validation';
  readonly entityId: number;
  readonly ids: readonly number[];
  readonly userId: string | null;
  readonly credentialId: string | null;
  readonly concurrency: number;
  readonly startedAt: string;
  readonly finishedAt: string | null;
  /** Outcomes by record id, in the order they finished. */
  readonly items: ReadonlyMap<number, AiJobItem>;
  /** The process running it and until when (epoch ms); null before anyone took it. */
  readonly lease: { readonly owner: string; readonly until: number } | null;
}

export type AiJobCommand =
  | {
      readonly kind: 'StartJob';
      readonly jobId: number;
      readonly job: 'transform' | 'validation';
      readonly entityId: number;
      readonly ids: readonly number[];
      readonly userId: string | null;
      readonly credentialId: string | null;
      readonly concurrency: number;
      readonly now: Date;
    }
  | { readonly kind: 'RecordItems'; readonly items: readonly AiJobItem[] }
  /** Takes the job (or keeps it) for `owner` until `now + ttlMs`; refused while another's lease runs. */
  | {
      readonly kind: 'LeaseJob';
      readonly owner: string;
      readonly now: Date;
      readonly ttlMs: number;
      /** Take it whoever holds it: the one process of the platform starting again (its lease is its dead self's). */
      readonly force?: boolean;
    }
  | { readonly kind: 'FinishJob'; readonly now: Date };

export const aiJobDecider: Decider<AiJobState, AiJobCommand, DomainEvent> = {
  initialState: {
    status: 'none',
    jobId: 0,
    kind: 'transform',
    entityId: 0,
    ids: [],
    userId: null,
    credentialId: null,
    concurrency: 1,
    startedAt: '',
    finishedAt: null,
    items: new Map(),
    lease: null,
  },

  decide(command, state) {
    if (command.kind === 'StartJob') {
      // The same job started again (a retried request with its Idempotency-Key): it is the one there.
      if (state.status !== 'none') return [];
      return [
        {
          type: 'AiJobStarted',
          data: {
            jobId: command.jobId,
            kind: command.job,
            entityId: command.entityId,
            ids: command.ids,
            userId: command.userId,
            credentialId: command.credentialId,
            concurrency: command.concurrency,
            startedAt: command.now.toISOString(),
          },
        },
      ];
    }
    if (state.status === 'none') throw new PlatformError('not_found', 'AI job not found');
    if (command.kind === 'RecordItems') {
      const wanted = new Set(state.ids);
      const fresh = command.items.filter(
        (item) => wanted.has(item.recordId) && !state.items.has(item.recordId),
      );
      return fresh.length === 0
        ? []
        : [{ type: 'AiJobItemsFinished', data: { jobId: state.jobId, items: fresh } }];
    }
    if (state.status === 'finished') return [];
    if (command.kind === 'LeaseJob') {
      const lease = state.lease;
      if (
        command.force !== true &&
        lease !== null &&
        lease.owner !== command.owner &&
        lease.until > command.now.getTime()
      )
        throw new PlatformError('conflict', `AI job ${state.jobId} is run by another process`);
      return [
        {
          type: 'AiJobLeased',
          data: {
            jobId: state.jobId,
            owner: command.owner,
            until: new Date(command.now.getTime() + command.ttlMs).toISOString(),
          },
        },
      ];
    }
    if (state.items.size < state.ids.length)
      throw new PlatformError(
        'conflict',
        `AI job ${state.jobId} has ${state.ids.length - state.items.size} records without an outcome`,
      );
    return [{ type: 'AiJobFinished', data: { jobId: state.jobId, finishedAt: command.now.toISOString() } }];
  },

  evolve(state, event) {
    switch (event.type) {
      case 'AiJobStarted': {
        const data = event.data as {
          jobId: number;
          kind: 'transform' | 'validation';
          entityId: number;
          ids: number[];
          userId: string | null;
          credentialId: string | null;
          concurrency: number;
          startedAt: string;
        };
        return { ...state, ...data, status: 'running', finishedAt: null, items: new Map(), lease: null };
      }
      case 'AiJobItemsFinished': {
        const items = new Map(state.items);
        for (const item of (event.data as { items: AiJobItem[] }).items) items.set(item.recordId, item);
        return { ...state, items };
      }
      case 'AiJobLeased': {
        const { owner, until } = event.data as { owner: string; until: string };
        return { ...state, lease: { owner, until: Date.parse(until) } };
      }
      case 'AiJobFinished':
        return {
          ...state,
          status: 'finished',
          finishedAt: (event.data as { finishedAt: string }).finishedAt,
        };
      default:
        return state;
    }
  },
};

/** The counts of a job's outcomes. */
export function jobCounts(state: AiJobState) {
  const counts = { done: 0, unchanged: 0, skipped: 0, failed: 0, tokens: 0 };
  for (const item of state.items.values()) {
    counts[item.status]++;
    counts.tokens += item.tokens;
  }
  return counts;
}
