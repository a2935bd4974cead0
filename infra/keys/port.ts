import { PlatformError } from '../../contracts/errors';
import { pooledRandomBase64url, pooledRandomBytes } from '../secrets/random-pool';

/**
 * Data keys for crypto-shredding: personal data is written into events sealed under a key of its subject's
 * own (a record, a user), kept here, outside the immutable log; erasing the subject destroys the key, which
 * leaves its sealed values unreadable everywhere they were copied. A tombstone stays in place of the key, so
 * no key is ever made again for an erased subject (values sealed later could not be told from the old).
 */
export interface DataKeyStore {
  /**
   * The subjects' keys, each made (and stored, wrapped) on its first use, or `'erased'` for a subject that was
   * erased (nothing more is sealed for it): every subject asked for is answered. Every handle on the store
   * answers the same key for a subject, even when two make it at once. One call for many subjects (a bulk
   * create seals a thousand records): one read, one write and one wait for the disk for all of them.
   */
  keysFor(subjects: readonly string[]): Promise<Map<string, DataKey | 'erased'>>;
  /**
   * The keys of many subjects at once (readers decrypt batches of events): a key, `'erased'`, or no entry for
   * a subject that has no key yet. Never makes a key.
   */
  existing(subjects: readonly string[]): Promise<Map<string, DataKey | 'erased'>>;
  /**
   * Destroys the subject's key (if it has one) and leaves a tombstone with the time of the erasure. Answers
   * whether this call erased the subject (false: it was erased already). Idempotent, and a repeat finishes
   * what an interrupted one left (a key's bytes still at rest).
   */
  destroy(subject: string, erasedAt: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface DataKey {
  /** Short and random; written beside each ciphertext, so a reader knows which key a value needs. */
  readonly id: string;
  /** 32 bytes, an AES-256 key. */
  readonly key: Buffer;
}

/**
 * Wraps data keys for storage, bound to their subject (one wrapped for another subject does not unwrap). A
 * KMS implements it in production; `localKeyWrapper` uses a key derived from the platform's master key.
 */
export interface KeyWrapper {
  wrap(key: Buffer, subject: string): Promise<string>;
  /** Throws when `wrapped` was not made by this wrapper for this subject, or was altered. */
  unwrap(wrapped: string, subject: string): Promise<Buffer>;
  /**
   * `unwrap` at once, for a wrapper that holds its key-encryption key (not a KMS): a rebuild unwraps a key for
   * every record, so a read's keys are unwrapped without a promise and a callback each.
   */
  unwrapNow?(wrapped: string, subject: string): Buffer;
}

export const DATA_KEY_BYTES = 32;

/** Key ids: 12 base64url characters (72 random bits), never a `.` (the separator of sealed values). */
export const DATA_KEY_ID = /^[A-Za-z0-9_-]{12}$/;

/**
 * Subjects the stores accept, as callers make them: `<kind>:<tenant>:<id>` (`record:acme:42`), the tenant a
 * DNS label as in stream names, the id a whole number or a UUID in its lower-case form (a hook request's).
 * Never free text: a subject names a row and a document.
 */
export const DATA_KEY_SUBJECT =
  /^[a-z][a-zA-Z0-9]{0,31}:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?:(?:[1-9][0-9]{0,15}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export function assertSubject(subject: string): void {
  if (!DATA_KEY_SUBJECT.test(subject))
    throw new Error(`data key subject ${JSON.stringify(subject.slice(0, 80))} is not valid`);
}

export function assertErasedAt(erasedAt: number): void {
  if (!Number.isSafeInteger(erasedAt)) throw new Error('an erasure time is whole milliseconds');
}

export function newDataKey(): DataKey {
  return { id: pooledRandomBase64url(9), key: pooledRandomBytes(DATA_KEY_BYTES) };
}

/** What sealing for an erased subject throws: 410, the subject's personal data is gone for good. */
export function erasedSubject(subject: string): PlatformError {
  return new PlatformError('gone', `the personal data of ${subject} was erased`, { subject });
}
