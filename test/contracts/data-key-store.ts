import { randomBytes } from 'node:crypto';
import { PlatformError } from '../../contracts/errors';
import { localKeyWrapper } from '../../infra/keys/local-wrapper';
import {
  DATA_KEY_ID,
  erasedSubject,
  type DataKey,
  type DataKeyStore,
  type KeyWrapper,
} from '../../infra/keys/port';
import { createSealer } from '../../infra/secrets/sealer';

/**
 * The data-key-store contract: every adapter must pass all of it, unchanged. Tests share one store and use
 * subjects of their own, so the suite can run against a shared server.
 */
export interface DataKeyStoreUnderTest {
  /** A new handle on the store, wrapping keys with `wrapper`: the suite opens several, as processes would. */
  readonly open: (wrapper: KeyWrapper) => Promise<DataKeyStore>;
  /** After the handles are closed. */
  readonly cleanup: () => Promise<void>;
}

const ERASED_AT = Date.parse('2026-11-23T10:00:00Z');
/** A tenant of this run: the subjects of two runs against one server never meet. */
const TENANT = `t${process.pid}-${randomBytes(3).toString('hex')}`;
let subjectSequence = 0;

function uniqueSubject(kind: 'record' | 'user' = 'record'): string {
  subjectSequence += 1;
  return `${kind}:${TENANT}:${subjectSequence}`;
}

/** The wrapper production builds: AES-GCM under the key derived for data keys from the master key. */
function wrapperOf(masterKey: Buffer): KeyWrapper {
  return localKeyWrapper(createSealer(masterKey).derivedKey('data-keys'));
}

/** One subject's key, as the sealing event store takes it from `keysFor`: erased throws its 410. */
export async function keyFor(keys: DataKeyStore, subject: string): Promise<DataKey> {
  const key = (await keys.keysFor([subject])).get(subject);
  if (key === undefined) throw new Error(`the data key store did not answer for ${subject}`);
  if (key === 'erased') throw erasedSubject(subject);
  return key;
}

async function expectErased(attempt: Promise<unknown>): Promise<void> {
  const error: unknown = await attempt.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(PlatformError);
  expect((error as PlatformError).kind).toBe('gone');
  expect((error as PlatformError).status).toBe(410);
}

export function dataKeyStoreContract(store: () => Promise<DataKeyStoreUnderTest>): void {
  const masterKey = randomBytes(32);
  const opened: DataKeyStore[] = [];
  let under: DataKeyStoreUnderTest;
  let keys: DataKeyStore;
  let other: DataKeyStore;

  const open = async (wrapper: KeyWrapper = wrapperOf(masterKey)): Promise<DataKeyStore> => {
    const handle = await under.open(wrapper);
    opened.push(handle);
    return handle;
  };

  beforeAll(async () => {
    under = await store();
    keys = await open();
    other = await open();
  });

  afterAll(async () => {
    for (const handle of opened) await handle.close();
    await under.cleanup();
  });

  test('the first keysFor of a subject makes its key; later ones, from any handle, answer the same', async () => {
    const subject = uniqueSubject();
    const made = await keyFor(keys, subject);
    expect(made.key).toHaveLength(32);
    expect(made.id).toMatch(DATA_KEY_ID);
    const again = await keyFor(keys, subject);
    expect(again.id).toBe(made.id);
    expect(again.key.equals(made.key)).toBe(true);
    // Another handle, as another process; and a handle opened after the key was made.
    for (const handle of [other, await open()]) {
      const seen = await keyFor(handle, subject);
      expect(seen.id).toBe(made.id);
      expect(seen.key.equals(made.key)).toBe(true);
    }
  });

  test('first keysFors of the same new subjects from two handles at once agree on one key each', async () => {
    const subjects = Array.from({ length: 20 }, () => uniqueSubject());
    const answers = await Promise.all(
      subjects.flatMap((subject) => [keyFor(keys, subject), keyFor(other, subject)]),
    );
    const stored = await keys.existing(subjects);
    subjects.forEach((subject, index) => {
      const [first, second] = [answers[2 * index]!, answers[2 * index + 1]!];
      const kept = stored.get(subject);
      expect(kept).not.toBe('erased');
      expect(first.id).toBe(second.id);
      expect(first.key.equals(second.key)).toBe(true);
      expect(kept !== undefined && kept !== 'erased' && kept.key.equals(first.key)).toBe(true);
    });
    // Keys are the subjects' own.
    expect(new Set(answers.map(({ key }) => key.toString('hex'))).size).toBe(subjects.length);
  });

  test('keysFor answers a batch at once: keys kept, keys made, erasures, each subject once', async () => {
    const [kept, erased, ...fresh] = Array.from({ length: 300 }, () => uniqueSubject());
    const keptKey = await keyFor(other, kept!);
    await keyFor(keys, erased!);
    await other.destroy(erased!, ERASED_AT);
    const asked = [kept!, ...fresh, erased!, kept!, fresh[0]!];
    const [answer, sameTime] = await Promise.all([keys.keysFor(asked), other.keysFor(fresh.slice(0, 150))]);
    expect([...answer.keys()].sort()).toEqual([kept!, erased!, ...fresh].sort());
    expect(answer.get(kept!)).toEqual(keptKey);
    expect(answer.get(erased!)).toBe('erased');
    const stored = await other.existing(fresh);
    for (const subject of fresh) {
      const made = answer.get(subject);
      expect(made).not.toBe('erased');
      expect(stored.get(subject)).toEqual(made);
      if (sameTime.has(subject)) expect(sameTime.get(subject)).toEqual(made);
    }
    expect(new Set(fresh.map((subject) => (answer.get(subject) as { id: string }).id)).size).toBe(
      fresh.length,
    );
    expect((await keys.keysFor([])).size).toBe(0);
  });

  test('existing answers keys and erasures in one batch, and leaves out subjects without a key', async () => {
    const [keyed, alsoKeyed, erased, unknown] = [
      uniqueSubject(),
      uniqueSubject('user'),
      uniqueSubject(),
      uniqueSubject(),
    ];
    const key = await keyFor(keys, keyed);
    const userKey = await keyFor(other, alsoKeyed);
    await keyFor(keys, erased);
    await other.destroy(erased, ERASED_AT);
    const answer = await other.existing([keyed, alsoKeyed, erased, unknown, keyed]);
    expect([...answer.keys()].sort()).toEqual([keyed, alsoKeyed, erased].sort());
    expect(answer.get(keyed)).toEqual(key);
    expect(answer.get(alsoKeyed)).toEqual(userKey);
    expect(answer.get(erased)).toBe('erased');
    expect(answer.has(unknown)).toBe(false);
    expect((await keys.existing([])).size).toBe(0);
    // existing never makes a key.
    expect((await keys.existing([unknown])).size).toBe(0);
  });

  test('destroy erases for good: existing says erased, keysFor answers erased (410 to one who seals), from every handle', async () => {
    const subject = uniqueSubject();
    await keyFor(keys, subject);
    expect(await other.destroy(subject, ERASED_AT)).toBe(true);
    for (const handle of [keys, other]) {
      expect((await handle.existing([subject])).get(subject)).toBe('erased');
      await expectErased(keyFor(handle, subject));
    }
    // Idempotent: a repeat answers that the subject was erased already, and changes nothing.
    expect(await keys.destroy(subject, ERASED_AT + 1000)).toBe(false);
    expect(await other.destroy(subject, ERASED_AT)).toBe(false);
    await expectErased(keyFor(keys, subject));
  });

  test('a subject erased before it had a key never gets one', async () => {
    const subject = uniqueSubject('user');
    expect(await keys.destroy(subject, ERASED_AT)).toBe(true);
    expect(await other.destroy(subject, ERASED_AT)).toBe(false);
    await expectErased(keyFor(other, subject));
    expect((await keys.existing([subject])).get(subject)).toBe('erased');
  });

  test('a destroy racing first keysFors leaves the subject erased and no handle a key afterwards', async () => {
    const subjects = Array.from({ length: 10 }, () => uniqueSubject());
    const outcomes = await Promise.allSettled(
      subjects.flatMap((subject) => [
        keyFor(keys, subject),
        other.destroy(subject, ERASED_AT),
        keyFor(other, subject),
      ]),
    );
    for (const outcome of outcomes)
      if (outcome.status === 'rejected') expect((outcome.reason as PlatformError).kind).toBe('gone');
    const answer = await keys.existing(subjects);
    for (const subject of subjects) {
      expect(answer.get(subject)).toBe('erased');
      await expectErased(keyFor(other, subject));
    }
  });

  test('subjects are independent: each has its own key, and erasing one leaves the others', async () => {
    const [record, otherRecord] = [uniqueSubject(), uniqueSubject()];
    // The same id and tenant, another kind.
    const user = record.replace(/^record:/, 'user:');
    const recordKey = await keyFor(keys, record);
    const userKey = await keyFor(keys, user);
    const otherKey = await keyFor(keys, otherRecord);
    expect(recordKey.key.equals(userKey.key)).toBe(false);
    expect(recordKey.id).not.toBe(userKey.id);
    expect(await keys.destroy(record, ERASED_AT)).toBe(true);
    expect((await keyFor(other, user)).key.equals(userKey.key)).toBe(true);
    expect((await keyFor(other, otherRecord)).key.equals(otherKey.key)).toBe(true);
    const answer = await other.existing([record, user, otherRecord]);
    expect(answer.get(record)).toBe('erased');
    expect(answer.get(user)).toEqual(userKey);
  });

  test('keys at rest are wrapped: a handle with another key-encryption key cannot read them', async () => {
    const subject = uniqueSubject();
    const key = await keyFor(keys, subject);
    const stranger = await open(wrapperOf(randomBytes(32)));
    await expect(keyFor(stranger, subject)).rejects.toThrow();
    await expect(stranger.existing([subject])).rejects.toThrow();
    // A failed unwrap never makes a new key: the stored one stays.
    expect((await keyFor(keys, subject)).key.equals(key.key)).toBe(true);
  });

  test('a subject is <kind>:<tenant>:<id>; anything else is refused', async () => {
    const refused = [
      '',
      'record',
      `record:${TENANT}`,
      `record:${TENANT}:0`,
      `record:${TENANT}:01`,
      `record:${TENANT}:1.5`,
      `record:${TENANT}:1:2`,
      'record:Acme:1',
      'record:-acme:1',
      'Record:acme:1',
      'record:acme:1 ',
      'record:acme:1\n',
      'record:acme:Alice Smith',
      `record:${'a'.repeat(64)}:1`,
      'hookRequest:acme:0190F2A4-1C2B-7D3E-8F40-123456789ABC',
      'hookRequest:acme:0190f2a4-1c2b-7d3e-8f40-123456789ab',
      'hookRequest:acme:0190f2a41c2b7d3e8f40123456789abc',
      'hookRequest:acme:{0190f2a4-1c2b-7d3e-8f40-123456789abc}',
    ];
    // A hook request's id is a UUID in its lower-case form.
    const request = `hookRequest:${TENANT}:0190f2a4-1c2b-7d3e-8f40-${String(Date.now()).padStart(12, '0').slice(-12)}`;
    expect((await keyFor(keys, request)).key).toHaveLength(32);
    for (const subject of refused) {
      await expect(keyFor(keys, subject)).rejects.toThrow('not valid');
      await expect(keys.existing([uniqueSubject(), subject])).rejects.toThrow('not valid');
      await expect(keys.destroy(subject, ERASED_AT)).rejects.toThrow('not valid');
    }
    await expect(keys.destroy(uniqueSubject(), 1.5)).rejects.toThrow('whole milliseconds');
  });
}
