import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { measuringStream } from './measure';
import { assertBlobKey, type BlobStore, type StoredBlob } from './port';

/**
 * Blobs as files under `root` (`<root>/<tenant>/<uuid>`). A blob is written to a temporary name, flushed to
 * disk, then renamed into place, so a crash never leaves half a file under a real key.
 */
export function createLocalBlobStore(root: string): BlobStore {
  const pathOf = (key: string) => {
    assertBlobKey(key);
    return join(root, key);
  };
  return {
    async put(key: string, content: Readable, maxBytes: number): Promise<StoredBlob> {
      const path = pathOf(key);
      const partial = `${path}.${randomBytes(6).toString('hex')}.partial`;
      const measure = measuringStream(maxBytes);
      // Joined before the first await: an error of `content` at any moment has a listener and fails this put
      // (it destroys the measuring stream, so the write below fails with it; `await reading` rethrows it too).
      const reading = pipeline(content, measure.stream);
      reading.catch(() => undefined);
      try {
        await mkdir(dirname(path), { recursive: true });
        // `flush`: the file is on disk before it is closed, and so before the rename publishes it.
        await pipeline(measure.stream, createWriteStream(partial, { flags: 'wx', flush: true }));
        await reading;
        await rename(partial, path);
        return measure.result();
      } catch (error) {
        measure.stream.destroy();
        await rm(partial, { force: true });
        throw error;
      }
    },
    async get(key: string): Promise<Readable | null> {
      const path = pathOf(key);
      // Opened here, not when first read: a blob removed meanwhile is a null, not a failed stream.
      let file;
      try {
        file = await open(path, 'r');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
      return file.createReadStream();
    },
    async delete(key: string): Promise<void> {
      await rm(pathOf(key), { force: true });
    },
    close: async () => undefined,
  };
}
