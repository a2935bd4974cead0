/**
 * The local key wrapper's own cases (the key-wrapper contract, test/contracts/key-wrapper.ts, covers what every
 * wrapper does): the key derived for data keys only, its formats, and keys wrapped before.
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import { localKeyWrapper } from '../../infra/keys/local-wrapper';
import { createSealer } from '../../infra/secrets/sealer';

const kek = createSealer(randomBytes(32)).derivedKey('data-keys');
const wrapper = localKeyWrapper(kek);
const key = randomBytes(32);

test('a key wrapped under one master key does not unwrap under another', async () => {
  const wrapped = await wrapper.wrap(key, 'record:acme:1');
  const stranger = localKeyWrapper(createSealer(randomBytes(32)).derivedKey('data-keys'));
  await expect(stranger.unwrap(wrapped, 'record:acme:1')).rejects.toThrow();
  // Nor under a key derived for another purpose from the same master key.
  const sealer = createSealer(Buffer.alloc(32, 1));
  const wrappedHere = await localKeyWrapper(sealer.derivedKey('data-keys')).wrap(key, 'record:acme:1');
  await expect(
    localKeyWrapper(sealer.derivedKey('sealed-secrets')).unwrap(wrappedHere, 'record:acme:1'),
  ).rejects.toThrow();
});

test('an altered or malformed wrapped key is refused', async () => {
  const wrapped = await wrapper.wrap(key, 'record:acme:1');
  const parts = wrapped.split('.');
  for (const index of [1, 2, 3]) {
    const part = parts[index]!;
    const altered = [...parts];
    altered[index] = (part[0] === 'A' ? 'B' : 'A') + part.slice(1);
    await expect(wrapper.unwrap(altered.join('.'), 'record:acme:1')).rejects.toThrow();
  }
  for (const text of [
    '',
    'wk1',
    wrapped.replace(/^wk2/, 'wk3'),
    // A wk2 nonce is not a wk1 IV.
    wrapped.replace(/^wk2/, 'wk1'),
    `${wrapped}.x`,
    wrapped.slice(0, -1),
  ])
    await expect(wrapper.unwrap(text, 'record:acme:1')).rejects.toThrow('not a wrapped data key');
});

test('only 32-byte keys, under a 32-byte key-encryption key', async () => {
  await expect(wrapper.wrap(randomBytes(16), 'record:acme:1')).rejects.toThrow('32 bytes');
  expect(() => localKeyWrapper(randomBytes(16))).toThrow('32 bytes');
});

test('keys wrapped before (wk1, AES-256-GCM under the key-encryption key) still unwrap, for their subject only', async () => {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  cipher.setAAD(Buffer.from('record:acme:1', 'utf8'));
  const text = Buffer.concat([cipher.update(key), cipher.final()]);
  const wrapped = ['wk1', iv, text, cipher.getAuthTag()]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
  expect((await wrapper.unwrap(wrapped, 'record:acme:1')).equals(key)).toBe(true);
  await expect(wrapper.unwrap(wrapped, 'record:acme:2')).rejects.toThrow();
  const parts = wrapped.split('.');
  parts[2] = (parts[2]![0] === 'A' ? 'B' : 'A') + parts[2]!.slice(1);
  await expect(wrapper.unwrap(parts.join('.'), 'record:acme:1')).rejects.toThrow();
});
