import { createHash, randomUUID } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { BlobTooLargeError, type BlobStore } from '../../infra/blob-store/port';

export interface BlobStoreUnderTest {
  readonly store: BlobStore;
  /** Whether anything of an unfinished write is left in the adapter's own storage. */
  leftovers(): Promise<number>;
  cleanup(): Promise<void>;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const keyOf = (tenant = 'acme') => `${tenant}/${randomUUID()}`;

/** Content in chunks of `chunkSize`, like a request body arrives. */
function chunked(bytes: Buffer, chunkSize = 64 * 1024): Readable {
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += chunkSize)
    chunks.push(bytes.subarray(offset, offset + chunkSize));
  return Readable.from(chunks);
}

/** Content that fails after `bytes` were read, like a client that disconnects mid-upload. */
function failingAfter(bytes: Buffer): Readable {
  return Readable.from(
    (async function* () {
      yield bytes;
      throw new Error('connection reset');
    })(),
  );
}

/** The blob-store port's contract: every adapter passes the same suite. */
export function blobStoreContract(open: () => Promise<BlobStoreUnderTest>): void {
  let subject: BlobStoreUnderTest;
  let store: BlobStore;
  beforeEach(async () => {
    subject = await open();
    store = subject.store;
  });
  afterEach(async () => {
    await subject.cleanup();
  });

  test('what is put is got back byte for byte, with its size, SHA-256 and first bytes', async () => {
    const bytes = Buffer.from('%PDF-1.7 a small document\n');
    const key = keyOf();
    const stored = await store.put(key, chunked(bytes, 5), 1024);
    expect(stored).toEqual({ size: bytes.length, sha256: sha256(bytes), head: bytes.subarray(0, 12) });
    const content = await store.get(key);
    expect(content).not.toBeNull();
    expect(await buffer(content!)).toEqual(bytes);
  });

  test('a content of several megabytes (many storage chunks) round-trips', async () => {
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let index = 0; index < bytes.length; index++) bytes[index] = (index * 31 + 7) % 251;
    const key = keyOf();
    const stored = await store.put(key, chunked(bytes), bytes.length);
    expect(stored.size).toBe(bytes.length);
    expect(stored.sha256).toBe(sha256(bytes));
    expect(sha256(await buffer((await store.get(key))!))).toBe(sha256(bytes));
  });

  test('an empty content is a blob too', async () => {
    const key = keyOf();
    const stored = await store.put(key, Readable.from([]), 10);
    expect(stored).toEqual({ size: 0, sha256: sha256(Buffer.alloc(0)), head: Buffer.alloc(0) });
    expect((await buffer((await store.get(key))!)).length).toBe(0);
  });

  test('content over the limit is refused and nothing of it is kept', async () => {
    const key = keyOf();
    await expect(store.put(key, chunked(Buffer.alloc(5000, 1), 1000), 4999)).rejects.toBeInstanceOf(
      BlobTooLargeError,
    );
    expect(await store.get(key)).toBeNull();
    expect(await subject.leftovers()).toBe(0);
  });

  test('content exactly at the limit is kept', async () => {
    const key = keyOf();
    expect((await store.put(key, chunked(Buffer.alloc(4096, 2), 1000), 4096)).size).toBe(4096);
  });

  test('a content that fails midway rejects the put and leaves nothing', async () => {
    const key = keyOf();
    await expect(store.put(key, failingAfter(Buffer.alloc(300_000, 3)), 1_000_000)).rejects.toThrow(
      'connection reset',
    );
    expect(await store.get(key)).toBeNull();
    expect(await subject.leftovers()).toBe(0);
  });

  test('a content that fails after several storage chunks rejects the put and leaves nothing', async () => {
    const key = keyOf();
    const content = Readable.from(
      (async function* () {
        for (let chunk = 0; chunk < 12; chunk++) yield Buffer.alloc(100_000, chunk);
        throw new Error('connection reset');
      })(),
    );
    await expect(store.put(key, content, 10_000_000)).rejects.toThrow('connection reset');
    expect(await store.get(key)).toBeNull();
    expect(await subject.leftovers()).toBe(0);
  });

  // The put owns the content from the moment it is called: an error then must reach it, not an empty room
  // (an `'error'` nobody listens to ends the process).
  test.each([
    ['already failed when handed over', 'before'],
    ['failing in the same tick as the put starts', 'same-tick'],
    ['failing on the next turn of the event loop', 'next-turn'],
    ['failing after some bytes arrived', 'after-bytes'],
  ] as const)('a content %s rejects the put and leaves nothing', async (_what, when) => {
    const key = keyOf();
    const content = new PassThrough();
    const failure = new Error('client went away');
    if (when === 'before') content.destroy(failure);
    const putting = store.put(key, content, 1_000_000);
    if (when === 'same-tick') content.destroy(failure);
    if (when === 'next-turn') setImmediate(() => content.destroy(failure));
    if (when === 'after-bytes') {
      content.write(Buffer.alloc(70_000, 4));
      setTimeout(() => content.destroy(failure), 20);
    }
    await expect(putting).rejects.toThrow();
    expect(await store.get(key)).toBeNull();
    expect(await subject.leftovers()).toBe(0);
  });

  test('a missing blob is null, and deleting it is not an error', async () => {
    const key = keyOf();
    expect(await store.get(key)).toBeNull();
    await store.delete(key);
  });

  test('a deleted blob is gone; other blobs stay', async () => {
    const [first, second] = [keyOf(), keyOf('other-tenant')];
    await store.put(first, Readable.from([Buffer.from('one')]), 10);
    await store.put(second, Readable.from([Buffer.from('two')]), 10);
    await store.delete(first);
    expect(await store.get(first)).toBeNull();
    expect((await buffer((await store.get(second))!)).toString()).toBe('two');
  });

  test('concurrent puts of different keys keep each its own content', async () => {
    const keys = Array.from({ length: 8 }, () => keyOf());
    await Promise.all(
      keys.map((key, index) => store.put(key, chunked(Buffer.alloc(70_000, index), 7000), 1e6)),
    );
    for (const [index, key] of keys.entries())
      expect(await buffer((await store.get(key))!)).toEqual(Buffer.alloc(70_000, index));
  });

  test.each(['../etc/passwd', 'acme/../../x', 'Acme/' + randomUUID(), 'acme/' + randomUUID() + '/x', 'acme'])(
    'key %j is refused',
    async (key) => {
      await expect(store.put(key, Readable.from([Buffer.from('x')]), 10)).rejects.toThrow('invalid blob key');
      await expect(store.get(key)).rejects.toThrow('invalid blob key');
      await expect(store.delete(key)).rejects.toThrow('invalid blob key');
    },
  );
}
