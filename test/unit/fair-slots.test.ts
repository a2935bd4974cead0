import { FairSlots } from '../../infra/fair-slots';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('fair slots for model calls', () => {
  test('at most `total` at once, at most `perTenant` for one system', async () => {
    const slots = new FairSlots(3, 2);
    const held = [await slots.acquire('a'), await slots.acquire('a')];
    let third = false;
    void slots.acquire('a').then(() => (third = true));
    await tick();
    expect(third).toBe(false);
    const other = await slots.acquire('b');
    expect(slots.inUse).toBe(3);
    held[0]!();
    await tick();
    expect(third).toBe(true);
    other();
    held[1]!();
  });

  test('systems waiting take turns: a system with many waiting calls does not take every freed slot', async () => {
    const slots = new FairSlots(1, 1);
    const first = await slots.acquire('big');
    const order: string[] = [];
    const waiters: Array<Promise<void>> = [];
    for (let index = 0; index < 5; index++)
      waiters.push(slots.acquire('big').then((release) => (order.push('big'), release())));
    await tick();
    for (let index = 0; index < 2; index++)
      waiters.push(slots.acquire('small').then((release) => (order.push('small'), release())));
    first();
    await Promise.all(waiters);
    // After the first freed slot, the two systems alternate while both wait.
    expect(order.slice(0, 4)).toEqual(['big', 'small', 'big', 'small']);
    expect(order.filter((who) => who === 'big')).toHaveLength(5);
    expect(slots.inUse).toBe(0);
  });

  test('releasing twice frees one slot only', async () => {
    const slots = new FairSlots(2, 2);
    const release = await slots.acquire('a');
    await slots.acquire('a');
    release();
    release();
    expect(slots.inUse).toBe(1);
  });
});
