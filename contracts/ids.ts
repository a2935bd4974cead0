import { hash, randomUUID } from 'node:crypto';

/** Namespace for every name-based (v5) UUID the platform derives. */
export const PLATFORM_NAMESPACE = '6f1c1f0e-4d8a-5b7e-9c2a-3e5b7d9f1a20';

function uuidBytes(uuid: string): Buffer {
  return Buffer.from(uuid.replace(/-/g, ''), 'hex');
}

const PLATFORM_NAMESPACE_BYTES = uuidBytes(PLATFORM_NAMESPACE);

/** The variant bits (10) over the third hex digit's top two bits, by the digit's low two bits. */
const VARIANT_DIGITS = '89ab';

/**
 * RFC 9562 version-5 UUID: deterministic, so a repeated command yields the same event ids. Hashed in one
 * call over one buffer: every event id is one, and a `Hash` object per id cost twice the hashing itself.
 */
export function uuidV5(name: string, namespace: string = PLATFORM_NAMESPACE): string {
  const namespaceBytes = namespace === PLATFORM_NAMESPACE ? PLATFORM_NAMESPACE_BYTES : uuidBytes(namespace);
  const input = Buffer.allocUnsafe(16 + Buffer.byteLength(name));
  namespaceBytes.copy(input);
  input.write(name, 16);
  const hex = hash('sha1', input);
  const variant = VARIANT_DIGITS[Number.parseInt(hex[16]!, 16) & 0x3]!;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function newId(): string {
  return randomUUID();
}

/** Event id of the n-th event a command produces. */
export function eventIdFor(commandId: string, index: number): string {
  return uuidV5(`${commandId}#${index}`);
}
