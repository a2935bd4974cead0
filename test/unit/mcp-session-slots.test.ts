/**
 * The MCP session caps: a credential, a user and a system each hold at most their share and the server at most
 * its total, whatever order sessions are asked for and given back in; a refusal names the share that is full
 * and when a slot frees by itself.
 */
import fc from 'fast-check';
import {
  SessionCapReached,
  SessionSlots,
  type SessionHolder,
  type SessionLimits,
  type SessionSlot,
} from '../../infra/mcp/session-slots';

const LIMITS: SessionLimits = { perCredential: 2, perUser: 3, perSystem: 5, total: 8 };
const IDLE_MS = 10_000;

function holder(system: string, userId: string, credentialId: string): SessionHolder {
  return { system, userId, credentialId };
}

function refusal(action: () => unknown): SessionCapReached {
  try {
    action();
  } catch (error) {
    if (error instanceof SessionCapReached) return error;
    throw error;
  }
  throw new Error('expected a SessionCapReached');
}

describe('SessionSlots', () => {
  let clock: number;
  let slots: SessionSlots;
  beforeEach(() => {
    clock = 1_000_000;
    slots = new SessionSlots(LIMITS, IDLE_MS, () => clock);
  });

  it('given a credential at its share, when it asks again, then 429 names the credential cap', () => {
    const token = holder('acme', '7', 'tok-1');
    slots.take(token);
    clock += 3000;
    slots.take(token);
    const refused = refusal(() => slots.take(token));
    expect(refused).toMatchObject({ cap: 'credential', limit: 2, status: 429 });
    expect(refused.message).toMatch(/this credential holds its 2/);
    // The older session ends by itself after IDLE_MS of no use: 7 s from now.
    expect(refused.retryAfterSeconds).toBe(7);
  });

  it('given a user at their share over several tokens, when another token asks, then the user cap', () => {
    slots.take(holder('acme', '7', 'a'));
    slots.take(holder('acme', '7', 'a'));
    slots.take(holder('acme', '7', 'b'));
    expect(refusal(() => slots.take(holder('acme', '7', 'c')))).toMatchObject({ cap: 'user', limit: 3 });
    expect(slots.take(holder('acme', '8', 'd')).holder.userId).toBe('8');
  });

  it('given one system at its share, when it asks again, then the system cap, and another system is served', () => {
    for (const [user, token] of [
      ['1', 'a'],
      ['1', 'a'],
      ['2', 'b'],
      ['2', 'b'],
      ['3', 'c'],
    ] as const)
      slots.take(holder('flood', user, token));
    expect(refusal(() => slots.take(holder('flood', '4', 'd')))).toMatchObject({ cap: 'system', limit: 5 });
    expect(slots.take(holder('acme', '1', 'a')).holder.system).toBe('acme');
  });

  it('given the server at its total, when any system asks, then the server cap', () => {
    for (let n = 0; n < 5; n++) slots.take(holder('one', String(n), String(n)));
    for (let n = 0; n < 3; n++) slots.take(holder('two', String(n), String(n)));
    expect(refusal(() => slots.take(holder('three', '1', '1')))).toMatchObject({ cap: 'server', limit: 8 });
  });

  it('given a released slot, when released again, then it counts once', () => {
    const token = holder('acme', '7', 'a');
    const first = slots.take(token);
    slots.take(token);
    first.release();
    first.release();
    slots.take(token);
    expect(slots.size).toBe(2);
    expect(refusal(() => slots.take(token)).cap).toBe('credential');
  });

  it('given slots unused past the idle time, when asked for the idle ones, then those and only those', () => {
    const old = slots.take(holder('acme', '1', 'a'));
    clock += 6000;
    const recent = slots.take(holder('acme', '1', 'a'));
    clock += 5000;
    expect(slots.idle()).toEqual([old]);
    recent.touch();
    clock += 6000;
    expect(slots.idle()).toEqual([old]);
    clock += 5000;
    expect(slots.idle()).toEqual([old, recent]);
  });

  it('any sequence of takes and releases by any holders keeps every share, and refuses only a full one', () => {
    const holders = fc.record({
      system: fc.constantFrom('a', 'b', 'c'),
      userId: fc.constantFrom('1', '2', '3'),
      credentialId: fc.constantFrom('x', 'y'),
    });
    const steps = fc.array(fc.oneof(holders, fc.nat({ max: 20 })), { maxLength: 80 });
    fc.assert(
      fc.property(steps, (script) => {
        const pool = new SessionSlots(LIMITS, IDLE_MS, () => 0);
        const held: SessionSlot[] = [];
        const count = (match: (taken: SessionHolder) => boolean) =>
          held.filter((slot) => match(slot.holder)).length;
        for (const step of script) {
          if (typeof step === 'number') {
            held.splice(step % Math.max(1, held.length), 1)[0]?.release();
            continue;
          }
          const counts = {
            credential: count(
              (h) =>
                h.system === step.system && h.userId === step.userId && h.credentialId === step.credentialId,
            ),
            user: count((h) => h.system === step.system && h.userId === step.userId),
            system: count((h) => h.system === step.system),
            server: held.length,
          };
          const full =
            counts.credential >= LIMITS.perCredential
              ? 'credential'
              : counts.user >= LIMITS.perUser
                ? 'user'
                : counts.system >= LIMITS.perSystem
                  ? 'system'
                  : counts.server >= LIMITS.total
                    ? 'server'
                    : undefined;
          if (full === undefined) held.push(pool.take(step));
          else expect(refusal(() => pool.take(step)).cap).toBe(full);
          expect(pool.size).toBe(held.length);
        }
      }),
      { numRuns: 300 },
    );
  });
});
