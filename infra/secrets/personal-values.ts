import { DATA_KEY_BYTES, DATA_KEY_ID, type DataKey } from '../keys/port';
import { aesGcmOpen, derivedKey, xchachaOpenText, xchachaSeal, type SealedParts } from './aead';

/**
 * Personal values as events carry them: the value's JSON sealed under its subject's data key, as
 * `<version>.<keyId>.<nonce>.<ciphertext>.<tag>` (base64url parts). The key id says which key opens it; the
 * subject, the version and the key id are authenticated with it, so a sealed value copied into another
 * subject's event, or given another key id, does not open.
 *
 * - `pv2` (what is sealed now): XChaCha20-Poly1305 (libsodium), a 24-byte random nonce, under a key derived
 *   from the data key for it (Node's AES-GCM cost more than the rest of sealing a record: `aead.ts`).
 * - `pv1` (values sealed before): AES-256-GCM under the data key itself, a 12-byte IV. Opened, never made.
 */
const SEALED = {
  pv1: /^pv1\.[A-Za-z0-9_-]{12}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/,
  pv2: /^pv2\.[A-Za-z0-9_-]{12}\.[A-Za-z0-9_-]{32}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/,
} as const;
/**
 * Where each version's nonce ends: a value's other parts have fixed lengths (the key id's 12 characters, the
 * tag's 22), so once its shape is matched they are cut where they lie rather than captured.
 */
const NONCE_END = { pv1: 33, pv2: 49 } as const;
const TAG_CHARACTERS = 22;
type Version = keyof typeof SEALED;
/** What the pv2 key is derived for. */
const PV2_CONTEXT = Buffer.from('records-platform personal values pv2', 'utf8');

function authenticated(version: Version, keyId: string, subject: string): Buffer {
  return Buffer.from(`${version}.${keyId}.${subject}`, 'utf8');
}

function assertKey(key: DataKey): void {
  if (!DATA_KEY_ID.test(key.id) || key.key.length !== DATA_KEY_BYTES) throw new Error('not a data key');
}

/** Sealing and opening one subject's values under its data key. */
export interface SubjectValues {
  /** Seals a value written as JSON (`jsonOf`): what `open` answers is `JSON.parse(json)`. */
  sealJson(json: string): string;
  /**
   * The value a text holds: a text that is not a value sealed under this key is answered as it is; one that is
   * and does not open throws.
   */
  open(text: string): unknown;
}

/**
 * The subject's values under `key`: what its values share (the key derived for pv2, the additional data) is
 * made once, so a holder that keeps it (the event store's cache of keys) pays it once per subject, not per
 * value or event.
 */
export function subjectValues(key: DataKey, subject: string): SubjectValues {
  assertKey(key);
  const pv2Key = derivedKey(key.key, PV2_CONTEXT);
  const pv2 = authenticated('pv2', key.id, subject);
  // Only values sealed before pv2 need it: made when one is met.
  let pv1: Buffer | undefined;
  // Methods, not closures in properties: the TypeScript loader (tsx) keeps names, a `defineProperty` per
  // closure made, and these are made for every record.
  return {
    sealJson(json) {
      return `pv2.${key.id}.${xchachaSeal(Buffer.from(json, 'utf8'), pv2, pv2Key)}`;
    },
    open(text) {
      const found = partsOf(text);
      if (found === null || found.keyId !== key.id) return text;
      const { version, parts } = found;
      const json =
        version === 'pv1'
          ? aesGcmOpen(parts, (pv1 ??= authenticated('pv1', key.id, subject)), key.key).toString('utf8')
          : xchachaOpenText(parts, pv2, pv2Key);
      return JSON.parse(json) as unknown;
    },
  };
}

/** A value as it is sealed: what `JSON.stringify` writes (a value it cannot write is refused). */
export function jsonOf(value: unknown): string {
  const json: unknown = JSON.stringify(value);
  if (typeof json !== 'string') throw new Error('only JSON values are sealed');
  return json;
}

/** Seals a JSON value (what `JSON.stringify` writes; anything it cannot is refused) for `subject`. */
export function sealValue(value: unknown, key: DataKey, subject: string): string {
  return subjectValues(key, subject).sealJson(jsonOf(value));
}

/** The version, key id and parts of a sealed value, or null when `text` is not one. */
function partsOf(text: string): { version: Version; keyId: string; parts: SealedParts } | null {
  if (!looksSealed(text)) return null;
  const version = text.slice(0, 3) as Version;
  if (!SEALED[version].test(text)) return null;
  const nonceEnd = NONCE_END[version];
  const tagStart = text.length - TAG_CHARACTERS;
  return {
    version,
    keyId: text.slice(4, 16),
    parts: {
      nonce: text.slice(17, nonceEnd),
      text: text.slice(nonceEnd + 1, tagStart - 1),
      tag: text.slice(tagStart),
    },
  };
}

/** The value sealed; throws for another key or subject, a text altered in any way, or one not sealed at all. */
export function openValue(sealed: string, key: DataKey, subject: string): unknown {
  const found = partsOf(sealed);
  if (found === null) throw new Error('not a sealed value');
  if (found.keyId !== key.id) throw new Error(`the value is sealed under key ${found.keyId}, not ${key.id}`);
  return subjectValues(key, subject).open(sealed);
}

/**
 * Whether `text` starts as a sealed value does: a test cheap enough for every string of every event read, to
 * pass over events that hold none (`isSealedValue` says whether it is one).
 */
export function looksSealed(text: string): boolean {
  return text.startsWith('pv2.') || text.startsWith('pv1.');
}

/** Whether `text` has the shape of a sealed value (not whether it opens). */
export function isSealedValue(text: unknown): text is string {
  return typeof text === 'string' && partsOf(text) !== null;
}

/** The id of the key a sealed value needs. */
export function keyIdOf(sealed: string): string {
  const keyId = partsOf(sealed)?.keyId;
  if (keyId === undefined) throw new Error('not a sealed value');
  return keyId;
}
