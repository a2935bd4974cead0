import { PlatformError } from '../../../contracts/errors';
import type { RunBacklogDrainEvent } from '../../../contracts/events/integrator';
import { streamName } from '../../../contracts/streams';
import type { Decider } from '../../kit/decider';

/**
 * A system's run backlog: the requests its integrator did not run at once (`requests`, appended in arrival
 * order), and who drains them (`drain`: one integrator at a time holds it, for a lease it keeps renewing,
 * and records how far it got).
 */
export function runBacklogStreams(tenant: string): { readonly requests: string; readonly drain: string } {
  return {
    requests: streamName('runBacklog', tenant, 'requests'),
    drain: streamName('runBacklog', tenant, 'drain'),
  };
}

export interface RunBacklogDrainState {
  /** Who holds (or last held) the drain; null: nobody ever did. */
  readonly holder: string | null;
  /** When the hold ends (ms since the epoch); a release ends it at once. */
  readonly until: number;
  /** Every backlog item before this revision has run. */
  readonly next: number;
}

export type RunBacklogDrainCommand =
  /** Take the drain: nobody holds it, the hold ran out, or it is the taker's own. */
  | { readonly kind: 'Take'; readonly holder: string; readonly now: Date; readonly leaseMs: number }
  /** Keep holding it, recording how far the drain got: only its holder may, and only while nobody took it. */
  | {
      readonly kind: 'Keep';
      readonly holder: string;
      readonly now: Date;
      readonly leaseMs: number;
      readonly next: number;
    }
  /** Let it go, recording how far the drain got. */
  | { readonly kind: 'Release'; readonly holder: string; readonly now: Date; readonly next: number };

export const runBacklogDrainDecider: Decider<
  RunBacklogDrainState,
  RunBacklogDrainCommand,
  RunBacklogDrainEvent
> = {
  initialState: { holder: null, until: 0, next: 0 },

  decide(command, state) {
    const held = (until: number, next: number): RunBacklogDrainEvent[] => [
      {
        type: 'RunBacklogHeld',
        data: { holder: command.holder, until: new Date(until).toISOString(), next },
      },
    ];
    const now = command.now.getTime();
    if (command.kind === 'Take') {
      if (state.holder !== null && state.holder !== command.holder && state.until > now)
        throw new PlatformError('conflict', `the run backlog is drained by ${state.holder}`);
      return held(now + command.leaseMs, state.next);
    }
    // Whoever took the drain since has gone on from its own record: this holder's progress is not its any more.
    if (state.holder !== command.holder)
      throw new PlatformError('conflict', `the run backlog is no longer drained by ${command.holder}`);
    if (command.next < state.next)
      throw new PlatformError(
        'bad_request',
        `the drain cannot go back from ${state.next} to ${command.next}`,
      );
    return held(command.kind === 'Keep' ? now + command.leaseMs : now, command.next);
  },

  evolve(_state, event) {
    return { holder: event.data.holder, until: Date.parse(event.data.until), next: event.data.next };
  },
};
