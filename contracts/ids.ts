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

/**
 * RFC 9562 version-7 UUID: the millisecond clock in the first 48 bits, 74 random bits after. Ids made one after
 * another sort side by side, so the stores' unique indexes take them at their end instead of at random pages
 * (measured on the event store's `event_id` index: 13.5 instead of 26.7 µs per appended event).
 */
export function newId(): string {
  const time = Date.now().toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}

/** Version 7 (clock first) or 8 (the clock kept by `childId`). */
function startsWithClock(id: string): boolean {
  const version = id[14];
  return version === '7' || version === '8';
}

/**
 * A deterministic id derived from `parentId` and `suffix`, so a repeated command derives the same ones. A
 * parent that starts with the clock passes it on: the child is the v5 hash of the name under the parent's 48
 * clock bits, marked version 8 (RFC 9562's custom layout). Any other parent (ids made by releases before v7
 * ids) derives the plain v5 id it always did.
 */
export function childId(parentId: string, suffix: string): string {
  const hashed = uuidV5(`${parentId}${suffix}`);
  if (!startsWithClock(parentId)) return hashed;
  return `${parentId.slice(0, 13)}-8${hashed.slice(15)}`;
}

/**
 * Event id of the n-th event a command of `tenant` produces. Event ids are unique store-wide while command ids
 * are only unique within a system (a job's `${jobId}:finish` names job 1 of every system alike), so the system
 * is part of the name: no caller can derive another system's event id. Events appended before the system was
 * part of it keep their ids; a repeated command is still recognised by its `metadata.commandId` (`mayBeRepeat`).
 * A tenant is a DNS label (no `@`), so `#<index>@<tenant>` ends the name unambiguously.
 */
export function eventIdFor(tenant: string, commandId: string, index: number): string {
  return childId(commandId, `#${index}@${tenant}`);
}
