import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localKeyWrapper } from '../../infra/keys/local-wrapper';
import type { DataKey, DataKeyStore, KeyWrapper } from '../../infra/keys/port';
import { createSqliteDataKeyStore } from '../../infra/keys/sqlite';
import { describeContract } from '../support/adapter-report';
import { dataKeyStoreContract, keyFor } from './data-key-store';

for (const synchronous of ['FULL', 'NORMAL'] as const)
  describeContract('data-key-store', `sqlite (synchronous ${synchronous})`, { kind: 'embedded' }, () => {
    dataKeyStoreContract(async () => {
      const directory = mkdtempSync(join(tmpdir(), 'data-key-store-sqlite-'));
      return {
        open: async (wrapper) =>
          createSqliteDataKeyStore({ path: join(directory, 'keys.db'), wrapper, synchronous }),
        cleanup: async () => rmSync(directory, { recursive: true, force: true }),
      };
    });
  });

/** Keeps what it wrapped, per subject, so the test knows every text the store may have written. */
function recording(inner: KeyWrapper): KeyWrapper & { readonly wrapped: Map<string, string[]> } {
  const wrapped = new Map<string, string[]>();
  return {
    wrapped,
    async wrap(key, subject) {
      const text = await inner.wrap(key, subject);
      wrapped.set(subject, [...(wrapped.get(subject) ?? []), text]);
      return text;
    },
    unwrap: (text, subject) => inner.unwrap(text, subject),
  };
}

/** No wrapping at all (the key's base64 at rest): what the store itself must erase, whatever the wrapper. */
const inTheClear: KeyWrapper = {
  wrap: async (key) => key.toString('base64'),
  unwrap: async (text) => Buffer.from(text, 'base64'),
};

/** What of a key may be written anywhere: its bytes, their base64 (both alphabets), what wrapped it. */
function tracesOf(key: DataKey, wrapped: readonly string[]): Buffer[] {
  const texts = [key.key.toString('base64'), key.key.toString('base64url'), ...wrapped];
  return [key.key, ...texts.map((text) => Buffer.from(text, 'utf8'))];
}

/** Every file of the folder, byte for byte (the database, `-wal`, `-shm`, whatever else SQLite left). */
function filesOf(directory: string): Buffer[] {
  return readdirSync(directory).map((name) => readFileSync(join(directory, name)));
}

function anyFileHolds(files: readonly Buffer[], traces: readonly Buffer[]): boolean {
  return files.some((file) => traces.some((trace) => file.includes(trace)));
}

describe('data keys at rest — sqlite', () => {
  let directory: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'data-keys-at-rest-'));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  test.each([
    ['in the clear', inTheClear],
    ['wrapped with the local wrapper', localKeyWrapper(randomBytes(32))],
  ])('after destroy, no file of the store holds a destroyed key (%s)', async (_, inner) => {
    const wrapper = recording(inner);
    const open = () => createSqliteDataKeyStore({ path: join(directory, 'keys.db'), wrapper });
    const handles: DataKeyStore[] = [open(), open()];
    try {
      const [first, second] = handles as [DataKeyStore, DataKeyStore];
      // Enough keys for the table to span pages, made and read from both handles, as by two processes.
      const subjects = Array.from({ length: 300 }, (_, index) => `record:acme:${index + 1}`);
      const keys = new Map<string, DataKey>();
      for (const [index, subject] of subjects.entries())
        keys.set(subject, await keyFor(index % 2 === 0 ? first : second, subject));
      expect((await second.existing(subjects)).size).toBe(subjects.length);
      const tracesFor = (subject: string) => tracesOf(keys.get(subject)!, wrapper.wrapped.get(subject)!);
      const destroyed = subjects.filter((_, index) => index % 7 === 3);
      const kept = subjects.filter((subject) => !destroyed.includes(subject));
      // The scan sees keys where they are, before the destroy.
      for (const subject of destroyed)
        expect(anyFileHolds(filesOf(directory), tracesFor(subject))).toBe(true);

      for (const [index, subject] of destroyed.entries())
        expect(await (index % 2 === 0 ? first : second).destroy(subject, Date.now())).toBe(true);

      // While both handles are still open (a closing handle checkpoints, which would hide a leftover WAL).
      const files = filesOf(directory);
      for (const subject of destroyed) expect(anyFileHolds(files, tracesFor(subject))).toBe(false);
      for (const subject of kept) expect(anyFileHolds(files, tracesFor(subject))).toBe(true);
      const answer = await first.existing(subjects);
      for (const subject of destroyed) expect(answer.get(subject)).toBe('erased');
      for (const subject of kept) expect(answer.get(subject)).toEqual(keys.get(subject));
    } finally {
      for (const handle of handles) await handle.close();
    }
  });
});
