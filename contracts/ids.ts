import { createHash, randomUUID } from 'node:crypto';

/** Namespace for every name-based (v5) UUID the platform derives. */
export const PLATFORM_NAMESPACE = '6f1c1f0e-4d8a-5b7e-9c2a-3e5b7d9f1a20';

function uuidBytes(uuid: string): Buffer {
  return Buffer.from(uuid.replace(/-/g, ''), 'hex');
}

/** RFC 9562 version-5 UUID: deterministic, so a repeated command yields the same event ids. */
export function uuidV5(name: string, namespace: string = PLATFORM_NAMESPACE): string {
  const hash = createHash('sha1').update(uuidBytes(namespace)).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function newId(): string {
  return randomUUID();
}

/** Event id of the n-th event a command produces. */
export function eventIdFor(commandId: string, index: number): string {
  return uuidV5(`${commandId}#${index}`);
}
