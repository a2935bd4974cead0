import { runBacklogDrainDecider } from '../../command-api/scenarios/domain/run-backlog';
import type { RunBacklogDrainEvent } from '../../contracts/events/integrator';
import { deciderSpec } from '../support/given-when-then';

/** Who drains a system's run backlog: one integrator at a time, for a lease it renews with its progress. */
const spec = deciderSpec(runBacklogDrainDecider);
const T0 = Date.parse('2026-11-27T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms);
const LEASE = 30_000;
const held = (holder: string, untilMs: number, next: number): RunBacklogDrainEvent => ({
  type: 'RunBacklogHeld',
  data: { holder, until: at(untilMs).toISOString(), next },
});

test('nobody held it: the first taker holds it for the lease, from the start', () => {
  spec
    .given([])
    .when({ kind: 'Take', holder: 'a', now: at(0), leaseMs: LEASE })
    .then([held('a', LEASE, 0)]);
});

test('held by another and not run out: a take is refused', () => {
  spec
    .given([held('a', LEASE, 3)])
    .when({ kind: 'Take', holder: 'b', now: at(LEASE - 1), leaseMs: LEASE })
    .thenThrows('conflict');
});

test("a hold that ran out, or was let go, is taken by another, who goes on from its holder's progress", () => {
  spec
    .given([held('a', LEASE, 3)])
    .when({ kind: 'Take', holder: 'b', now: at(LEASE), leaseMs: LEASE })
    .then([held('b', 2 * LEASE, 3)]);
  spec
    .given([held('a', LEASE, 3), held('a', 1_000, 7)])
    .when({ kind: 'Take', holder: 'b', now: at(2_000), leaseMs: LEASE })
    .then([held('b', 2_000 + LEASE, 7)]);
});

test('its holder keeps it with its progress, even when the hold ran out and nobody took it', () => {
  const state = spec
    .given([held('a', LEASE, 3)])
    .when({ kind: 'Keep', holder: 'a', now: at(LEASE + 5), leaseMs: LEASE, next: 9 })
    .then([held('a', 2 * LEASE + 5, 9)]);
  expect(state).toEqual({ holder: 'a', until: T0 + 2 * LEASE + 5, next: 9 });
});

test('a holder whose drain another took may not keep it or let it go: its progress is not the record any more', () => {
  const taken = [held('a', LEASE, 3), held('b', 2 * LEASE, 3)];
  spec
    .given(taken)
    .when({ kind: 'Keep', holder: 'a', now: at(LEASE + 1), leaseMs: LEASE, next: 9 })
    .thenThrows('conflict');
  spec
    .given(taken)
    .when({ kind: 'Release', holder: 'a', now: at(LEASE + 1), next: 9 })
    .thenThrows('conflict');
});

test('a release ends the hold now with the progress; progress never goes back', () => {
  spec
    .given([held('a', LEASE, 3)])
    .when({ kind: 'Release', holder: 'a', now: at(10), next: 5 })
    .then([held('a', 10, 5)]);
  spec
    .given([held('a', LEASE, 3)])
    .when({ kind: 'Keep', holder: 'a', now: at(10), leaseMs: LEASE, next: 2 })
    .thenThrows('bad_request');
});
