import { randomBytes } from 'node:crypto';
import type { KeyWrapper } from '../../infra/keys/port';

/**
 * The key-wrapper contract: every wrapper of data keys (the local one under SECRETS_KEY, the one whose
 * key-encryption key a KMS keeps) must pass all of it, unchanged. `open` makes one wrapper under a key of its
 * own, `stranger` one under another.
 */
export interface KeyWrappersUnderTest {
  readonly open: () => Promise<KeyWrapper>;
  readonly stranger: () => Promise<KeyWrapper>;
}

export function keyWrapperContract(make: () => Promise<KeyWrappersUnderTest>): void {
  let wrappers: KeyWrappersUnderTest;
  let wrapper: KeyWrapper;
  beforeAll(async () => {
    wrappers = await make();
    wrapper = await wrappers.open();
  });
  const key = randomBytes(32);

  test('a wrapped key unwraps for its subject, shows nothing of the key, and differs at each wrap', async () => {
    const wrapped = await wrapper.wrap(key, 'record:acme:1');
    for (const encoding of ['base64', 'base64url', 'hex'] as const)
      expect(wrapped).not.toContain(key.toString(encoding).slice(0, 12));
    expect((await wrapper.unwrap(wrapped, 'record:acme:1')).equals(key)).toBe(true);
    const again = await wrapper.wrap(key, 'record:acme:1');
    expect(again).not.toBe(wrapped);
    expect((await wrapper.unwrap(again, 'record:acme:1')).equals(key)).toBe(true);
  });

  test('a key wrapped for one subject does not unwrap as another', async () => {
    const wrapped = await wrapper.wrap(key, 'record:acme:1');
    for (const other of ['record:acme:2', 'user:acme:1', 'record:other:1', 'record:acme:10'])
      await expect(wrapper.unwrap(wrapped, other)).rejects.toThrow();
  });

  test('a key wrapped under one key-encryption key does not unwrap under another', async () => {
    const wrapped = await wrapper.wrap(key, 'record:acme:1');
    await expect((await wrappers.stranger()).unwrap(wrapped, 'record:acme:1')).rejects.toThrow();
  });

  test('a wrapper made again under the same key unwraps what the first wrapped (another process, a restart)', async () => {
    const wrapped = await wrapper.wrap(key, 'hookRequest:acme:0b7e4a52-6c1d-4f3e-9a8b-1c2d3e4f5a6b');
    const again = await wrappers.open();
    expect(
      (await again.unwrap(wrapped, 'hookRequest:acme:0b7e4a52-6c1d-4f3e-9a8b-1c2d3e4f5a6b')).equals(key),
    ).toBe(true);
  });

  test('an altered, cut or lengthened wrapped key is refused', async () => {
    const wrapped = await wrapper.wrap(key, 'record:acme:1');
    const tail = wrapped.length - 5;
    const swapped = wrapped[tail] === 'A' ? 'B' : 'A';
    for (const text of [
      '',
      `${wrapped.slice(0, tail)}${swapped}${wrapped.slice(tail + 1)}`,
      wrapped.slice(0, -1),
      `${wrapped}A`,
      `${wrapped}.x`,
    ])
      await expect(wrapper.unwrap(text, 'record:acme:1')).rejects.toThrow();
  });

  test('a wrapper that unwraps at once (unwrapNow) answers as its unwrap does: the key, or a throw', async () => {
    const unwrapNow = wrapper.unwrapNow?.bind(wrapper);
    if (!unwrapNow) return;
    const wrapped = await wrapper.wrap(key, 'record:acme:1');
    expect(unwrapNow(wrapped, 'record:acme:1').equals(key)).toBe(true);
    expect(() => unwrapNow(wrapped, 'record:acme:2')).toThrow();
    expect(() => unwrapNow(`${wrapped}A`, 'record:acme:1')).toThrow();
    const stranger = (await wrappers.stranger()).unwrapNow;
    expect(() => stranger?.(wrapped, 'record:acme:1')).toThrow();
  });

  test('only 32-byte keys are wrapped', async () => {
    await expect(wrapper.wrap(randomBytes(16), 'record:acme:1')).rejects.toThrow('32 bytes');
  });
}
