import { GridFSBucket, MongoClient, type GridFSBucketWriteStream } from 'mongodb';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { PlatformError } from '../../contracts/errors';
import { withinTimeLimit } from '../mongodb-time-limit';
import { measuringStream } from './measure';
import { assertBlobKey, type BlobStore, type StoredBlob } from './port';

export interface GridFsOptions {
  readonly url: string;
  readonly database: string;
  /** GridFS bucket: its collections are `<bucket>.files` and `<bucket>.chunks`. */
  readonly bucket?: string;
  /**
   * The longest the lookup of a key may run (QUERY_BUDGET_MS), sent as its `maxTimeMS`. A download's own
   * reads (the file by `_id`, its chunks by `files_id`, both indexed) take no time limit: the driver's
   * download stream has none, and a limit on them would cut off large files on slow clients.
   */
  readonly queryBudgetMs: number;
}

/** How long a failed upload's cleanup waits for a chunk insert still in flight. */
const IN_FLIGHT_WAIT_MS = 5000;

/**
 * Removes what a failed upload wrote. `abort()` stops further chunk inserts and deletes the chunks written,
 * but an insert already sent may land after that delete: once none is in flight, the chunks (and a files
 * document, if the failure came after it) are deleted again. When the database is unreachable the chunks
 * stay: without a files document they are never visible as a blob.
 */
async function discardUnfinished(upload: GridFSBucketWriteStream): Promise<void> {
  await upload.abort().catch(() => undefined);
  for (
    let waited = 0;
    upload.state.outstandingRequests > 0 && !upload.state.errored && waited < IN_FLIGHT_WAIT_MS;
    waited += 10
  )
    await sleep(10);
  await Promise.all([
    upload.chunks.deleteMany({ files_id: upload.id }),
    upload.files.deleteOne({ _id: upload.id }),
  ]).catch(() => undefined);
}

/**
 * Blobs in MongoDB GridFS, one GridFS file per key (its `filename`). GridFS writes the chunks first and the
 * files document last, so a blob is visible only once complete; an aborted upload removes its chunks.
 */
export async function createGridFsBlobStore(options: GridFsOptions): Promise<BlobStore> {
  const client = await MongoClient.connect(options.url);
  const bucket = new GridFSBucket(client.db(options.database), { bucketName: options.bucket ?? 'blobs' });
  const maxTimeMS = options.queryBudgetMs;
  const idsOf = async (key: string) =>
    (
      await withinTimeLimit(
        bucket.find({ filename: key }, { projection: { _id: 1 }, maxTimeMS }).toArray(),
        () => new PlatformError('unavailable', `the blob store did not answer within ${maxTimeMS} ms`),
      )
    ).map((file) => file._id);
  return {
    async put(key: string, content: Readable, maxBytes: number): Promise<StoredBlob> {
      assertBlobKey(key);
      const measure = measuringStream(maxBytes);
      const upload = bucket.openUploadStream(key);
      try {
        await pipeline(content, measure.stream, upload);
      } catch (error) {
        await discardUnfinished(upload);
        throw error;
      }
      return measure.result();
    },
    async get(key: string): Promise<Readable | null> {
      assertBlobKey(key);
      const [id] = await idsOf(key);
      return id === undefined ? null : bucket.openDownloadStream(id);
    },
    async delete(key: string): Promise<void> {
      assertBlobKey(key);
      for (const id of await idsOf(key)) await bucket.delete(id);
    },
    async close(): Promise<void> {
      await client.close();
    },
  };
}
