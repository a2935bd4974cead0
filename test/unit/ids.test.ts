import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { childId, eventIdFor, newId, PLATFORM_NAMESPACE, uuidV5 } from '../../contracts/ids';

/** RFC 9562 §5.5 step by step, as the ids of stored events were first derived. */
function referenceUuidV5(name: string, namespace: string): string {
  const hash = createHash('sha1')
    .update(Buffer.from(namespace.replace(/-/g, ''), 'hex'))
    .update(name, 'utf8')
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

describe('uuidV5', () => {
  test('answers the RFC 9562 example (DNS namespace, www.example.com)', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
  });

  test('derives the ids stored events already carry, for ASCII and non-ASCII names', () => {
    expect(uuidV5('abc')).toBe('3773e0bc-7177-507a-a0cd-b91c13f7da9a');
    expect(uuidV5('name é ✓')).toBe('81f1b00b-aa99-5bca-a4b5-c6abca0cf3ec');
    for (let n = 0; n < 300; n++) {
      const name = `${n.toString(36)}:${'é✓ab'.repeat(n % 5)}#${n}`;
      expect(uuidV5(name)).toBe(referenceUuidV5(name, PLATFORM_NAMESPACE));
    }
    const v4CommandId = '4b0c0a1e-0a4e-4a52-8f6f-1a2b3c4d5e6f';
    // Stored events keep the ids releases before event ids named their system derived (`childId(command, '#n')`).
    expect(childId(v4CommandId, '#1')).toBe(referenceUuidV5(`${v4CommandId}#1`, PLATFORM_NAMESPACE));
    expect(eventIdFor('acme', v4CommandId, 1)).toBe(
      referenceUuidV5(`${v4CommandId}#1@acme`, PLATFORM_NAMESPACE),
    );
    const v5CommandId = uuidV5('a command of an older release');
    expect(childId(v5CommandId, ':3')).toBe(referenceUuidV5(`${v5CommandId}:3`, PLATFORM_NAMESPACE));
  });

  test('every id is a version-5 UUID of the RFC variant', () => {
    for (let n = 0; n < 300; n++) {
      expect(uuidV5(`name ${n}`)).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
    }
  });
});

const RFC_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newId', () => {
  test('is a version-7 UUID whose first 48 bits are the millisecond clock', () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    expect(id).toMatch(RFC_UUID);
    expect(id[14]).toBe('7');
    const clock = Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(clock).toBeGreaterThanOrEqual(before);
    expect(clock).toBeLessThanOrEqual(after);
  });

  test('ids made in different milliseconds sort in the order they were made; none repeats', () => {
    const ids: string[] = [];
    let lastClock = 0;
    while (ids.length < 20) {
      const id = newId();
      const clock = Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
      if (clock > lastClock) ids.push(id);
      lastClock = clock;
    }
    expect([...ids].sort()).toEqual(ids);
    const many = Array.from({ length: 10_000 }, () => newId());
    expect(new Set(many).size).toBe(many.length);
  });
});

describe('childId', () => {
  test('a child of a clock-first id keeps its 48 clock bits and is otherwise the v5 hash, as version 8', () => {
    const parent = '019ab3c4-5d6e-7f01-8a2b-3c4d5e6f7a8b';
    const child = childId(parent, '#0');
    const hashed = referenceUuidV5(`${parent}#0`, PLATFORM_NAMESPACE);
    expect(child).toMatch(RFC_UUID);
    expect(child.slice(0, 13)).toBe(parent.slice(0, 13));
    expect(child[14]).toBe('8');
    expect(child.slice(15)).toBe(hashed.slice(15));
    expect(childId(child, ':1').slice(0, 13)).toBe(parent.slice(0, 13));
  });

  test('is deterministic and tells names apart', () => {
    const parent = newId();
    expect(eventIdFor('acme', parent, 0)).toBe(eventIdFor('acme', parent, 0));
    const children = Array.from({ length: 1000 }, (_, index) => eventIdFor('acme', parent, index));
    expect(new Set(children).size).toBe(children.length);
    expect(eventIdFor('acme', parent, 1)).not.toBe(childId(parent, ':1'));
  });
});

describe('eventIdFor', () => {
  const tenant = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,20}[a-z0-9])?$/);
  const commandId = fc.oneof(
    fc.uuid(),
    fc.string({ maxLength: 40 }),
    fc.nat(10_000).map((jobId) => `${jobId}:finish`),
  );

  test('the same command of two systems names different events; the same system, the same ones', () => {
    fc.assert(
      fc.property(tenant, tenant, commandId, fc.nat(100), (a, b, command, index) => {
        fc.pre(a !== b);
        expect(eventIdFor(a, command, index)).not.toBe(eventIdFor(b, command, index));
        expect(eventIdFor(a, command, index)).toBe(eventIdFor(a, command, index));
      }),
      { numRuns: 500 },
    );
  });

  test('no two (system, command, index) name one event', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(tenant, commandId, fc.nat(20)), {
          selector: ([t, c, i]) => JSON.stringify([t, c, i]),
          maxLength: 50,
        }),
        (triples) => {
          const ids = triples.map(([t, c, i]) => eventIdFor(t, c, i));
          expect(new Set(ids).size).toBe(ids.length);
        },
      ),
      { numRuns: 200 },
    );
  });
});
