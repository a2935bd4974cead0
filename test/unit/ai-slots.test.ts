import { AiSlots, inSlot } from '../../command-api/ai/ai-slots';

/** Every model call takes a slot: one credential, or one system, never takes them all. */
test('one credential takes at most its share; another credential of its system and another system still get slots', async () => {
  const slots = new AiSlots(6, 4, 2);
  const flood = Array.from({ length: 20 }, () => slots.acquire('acme', 'token-a'));
  await new Promise((resolve) => setImmediate(resolve));
  expect(slots.inUse).toBe(2);
  const otherCredential = await Promise.all([
    slots.acquire('acme', 'token-b'),
    slots.acquire('acme', 'token-b'),
  ]);
  expect(slots.inUse).toBe(4);
  // The system is at its share: a third credential of it waits, another system does not.
  let thirdCredential = false;
  const waiting = slots.acquire('acme', 'token-c').then((release) => {
    thirdCredential = true;
    return release;
  });
  const otherSystem = await Promise.all([
    slots.acquire('globex', 'token-z'),
    slots.acquire('globex', 'token-z'),
  ]);
  expect(slots.inUse).toBe(6);
  expect(thirdCredential).toBe(false);
  otherCredential[0]!();
  const third = await waiting;
  expect(thirdCredential).toBe(true);
  for (const release of [...otherCredential, ...otherSystem, third]) release();
  for (const acquired of flood) (await acquired)();
  expect(slots.inUse).toBe(0);
});

test('a call in a slot lets it go whether it answers or fails', async () => {
  const slots = new AiSlots(1, 1, 1);
  await expect(inSlot(slots, 'acme', 't', 1_000, async () => 'answer')).resolves.toBe('answer');
  await expect(
    inSlot(slots, 'acme', 't', 1_000, async () => {
      throw new Error('model down');
    }),
  ).rejects.toThrow('model down');
  expect(slots.inUse).toBe(0);
});

test('a request that finds no slot within its wait is a 503; its place is let go when its turn comes', async () => {
  const slots = new AiSlots(1, 1, 1);
  const held = await slots.acquire('acme', 'job');
  await expect(inSlot(slots, 'acme', 'preview', 20, async () => 'never')).rejects.toMatchObject({
    kind: 'unavailable',
  });
  held();
  await new Promise((resolve) => setImmediate(resolve));
  expect(slots.inUse).toBe(0);
  await expect(inSlot(slots, 'acme', 'preview', 20, async () => 'now')).resolves.toBe('now');
});
