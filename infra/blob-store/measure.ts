import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { SIGNATURE_BYTES } from '../../contracts/files';
import { BlobTooLargeError, type StoredBlob } from './port';

/**
 * A pass-through that counts, hashes and keeps the first bytes of what flows through it, and fails with
 * `BlobTooLargeError` as soon as more than `maxBytes` arrive. `result()` is valid once it has finished.
 */
export function measuringStream(maxBytes: number): { stream: Transform; result: () => StoredBlob } {
  const hash = createHash('sha256');
  let size = 0;
  let head = Buffer.alloc(0);
  let sha256: string | undefined;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new BlobTooLargeError(maxBytes));
      if (head.length < SIGNATURE_BYTES)
        head = Buffer.concat([head, chunk.subarray(0, SIGNATURE_BYTES - head.length)]);
      hash.update(chunk);
      done(null, chunk);
    },
    flush(done) {
      sha256 = hash.digest('hex');
      done();
    },
  });
  return {
    stream,
    result: () => {
      if (sha256 === undefined) throw new Error('the content has not been read to its end');
      return { size, sha256, head };
    },
  };
}
