import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';

/** What `put` learned while storing: the exact size, the content's SHA-256 (hex) and its first bytes. */
export interface StoredBlob {
  readonly size: number;
  readonly sha256: string;
  readonly head: Buffer;
}

/** The content was longer than allowed; nothing was kept. */
export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`content exceeds ${maxBytes} bytes`);
    this.name = 'BlobTooLargeError';
  }
}

/**
 * File contents, by key (`<tenant>/<uuid>`). A blob is written once and never changed: `put` either keeps
 * all of it, durably, or nothing. Adapters: local files (embedded) and GridFS (MongoDB).
 */
export interface BlobStore {
  /** Streams `content` in under `key`; past `maxBytes` it stops with `BlobTooLargeError` and keeps nothing. */
  put(key: string, content: Readable, maxBytes: number): Promise<StoredBlob>;
  /** The content, or null when there is no such blob. */
  get(key: string): Promise<Readable | null>;
  /** Removes the blob; removing a missing one is not an error. */
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

const KEY = /^[a-z0-9][a-z0-9-]{0,62}\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Keys become file paths in the local adapter, so only `<tenant>/<uuid>` is accepted. */
export function assertBlobKey(key: string): void {
  if (!KEY.test(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
}

/** A fresh key for a blob of `tenant`. */
export function newBlobKey(tenant: string): string {
  return `${tenant}/${randomUUID()}`;
}
