/**
 * Personal data in events (crypto-shredding, DESIGN §9a): the values a subject (a record, a user) holds that
 * identify a person are written into events sealed under the subject's own data key, kept outside the log;
 * erasing the subject destroys the key. These are the names every side shares; the sealing itself is the
 * event store's (`infra/event-store/personal-data.ts`).
 */

/** What every reader shows in place of a value whose subject was erased. */
export const ERASED_VALUE = '[erased]';

/**
 * Whose data keys there are: records and users, and the requests hooks received (a request's body, bundle and
 * its runs' step outputs carry what the sender sent, often what a record was then made of).
 */
export const PERSONAL_SUBJECT_KINDS = ['record', 'user', 'hookRequest'] as const;
export type PersonalSubjectKind = (typeof PERSONAL_SUBJECT_KINDS)[number];

/** The data key's subject: `record:acme:42`, `hookRequest:acme:<request id>`. */
export function personalSubject(kind: PersonalSubjectKind, tenant: string, id: number | string): string {
  return `${kind}:${tenant}:${id}`;
}

/** A place in an event's data: object keys and list indexes from its root (`['changes', 0, 'to']`). */
export type DataPath = readonly (string | number)[];

/**
 * Which values of a domain event are personal, and whose: the event store seals the values at `paths` (those
 * present and not null) under the subject's key. No paths: the event only names its subject (an erasure).
 */
export interface PersonalValues {
  readonly kind: PersonalSubjectKind;
  /** A record's or user's id; a hook request's id (a UUID). */
  readonly id: number | string;
  /** The subject's system, when it is not the command's (setting up a system names its first admin). */
  readonly tenant?: string;
  readonly paths: readonly DataPath[];
}

/** The events that erase a subject: once one is read, its subject's key is known to be gone. */
export const ERASURE_EVENT_TYPES: ReadonlySet<string> = new Set([
  'RecordErased',
  'UserErased',
  'WebhookRequestErased',
]);

/** `data` with the value at each path passed through `change` (paths that lead nowhere, or to null, left). */
export function withValuesAt(
  data: unknown,
  paths: readonly DataPath[],
  change: (value: unknown) => unknown,
): unknown {
  let result = data;
  for (const path of paths) result = withValueAt(result, path, 0, change);
  return result;
}

function withValueAt(
  node: unknown,
  path: DataPath,
  depth: number,
  change: (value: unknown) => unknown,
): unknown {
  if (depth === path.length) return node === null || node === undefined ? node : change(node);
  const step = path[depth]!;
  if (Array.isArray(node) && typeof step === 'number' && step >= 0 && step < node.length) {
    const copy = [...(node as unknown[])];
    copy[step] = withValueAt(copy[step], path, depth + 1, change);
    return copy;
  }
  if (
    typeof node === 'object' &&
    node !== null &&
    !Array.isArray(node) &&
    typeof step === 'string' &&
    Object.hasOwn(node, step)
  ) {
    const record = node as Record<string, unknown>;
    return { ...record, [step]: withValueAt(record[step], path, depth + 1, change) };
  }
  return node;
}

/** `value` with every string in it (at any depth) passed through `change`; a copy only where one changed. */
export function mapStrings(value: unknown, change: (text: string) => unknown): unknown {
  if (typeof value === 'string') return change(value);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, index) => {
      const mapped = mapStrings(item, change);
      if (mapped !== item) (copy ??= [...(value as unknown[])])[index] = mapped;
    });
    return copy ?? value;
  }
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    let copy: Record<string, unknown> | undefined;
    // `for…in` rather than `Object.entries`: every event read is mapped, and JSON has no inherited keys.
    for (const key in record) {
      const item = record[key];
      const mapped = mapStrings(item, change);
      // The spread copies every key as its own, so a key named `__proto__` is assigned as a key.
      if (mapped !== item) (copy ??= { ...record })[key] = mapped;
    }
    return copy ?? value;
  }
  return value;
}

/**
 * The subject whose values a public event of a record (`record.*`, its data naming `recordId`) may carry
 * sealed; none for other events.
 */
export function subjectOfPublicEvent(
  tenant: string,
  event: { readonly type: string; readonly data: unknown },
): string | undefined {
  if (!event.type.startsWith('record.')) return undefined;
  const recordId = (event.data as { recordId?: unknown } | null)?.recordId;
  return typeof recordId === 'number' ? personalSubject('record', tenant, recordId) : undefined;
}

/**
 * What a hook request's events carry of what its sender sent, sealed under the request's own key (so erasing a
 * record made from a request can erase the request): `paths` of an event about the request `requestId`.
 */
export function hookRequestValues(requestId: string, paths: readonly DataPath[]): PersonalValues {
  return { kind: 'hookRequest', id: requestId, paths };
}

/** The paths of a received request's data (`WebhookRequestReceived`) that hold what was sent. */
export const RECEIVED_REQUEST_PATHS: readonly DataPath[] = [['request'], ['bundle']];

/**
 * The paths of a refused request's data (`WebhookRequestRefused`) that hold what was sent: the request, and
 * the refusal's text, which may quote it (a parser's error shows the body's first characters).
 */
export const REFUSED_REQUEST_PATHS: readonly DataPath[] = [['request'], ['message']];
