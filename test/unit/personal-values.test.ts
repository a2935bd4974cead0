/**
 * Personal values sealed under their subject's data key: they open with that key for that subject only, and
 * any change to the sealed text makes it fail to open (never open as something else).
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { newDataKey, type DataKey } from '../../infra/keys/port';
import { isSealedValue, keyIdOf, openValue, sealValue } from '../../infra/secrets/personal-values';

const SUBJECT = 'record:acme:42';
const key = newDataKey();

/** Any UTF-16 text, lone surrogates included (JSON escapes them, so they come back as they were). */
const anyCodeUnits = fc.string({
  unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)),
});

/** JSON values with strings of any code point, nested in arrays and objects. */
const jsonValue = fc.jsonValue({ stringUnit: 'binary', maxDepth: 4 });

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

test('a sealed value opens to what was sealed: any JSON value, any unicode', () => {
  fc.assert(
    fc.property(jsonValue, (value) => {
      const sealed = sealValue(value, key, SUBJECT);
      expect(isSealedValue(sealed)).toBe(true);
      // As JSON carries it: -0 comes back 0, as from any JSON.
      expect(openValue(sealed, key, SUBJECT)).toEqual(JSON.parse(JSON.stringify(value)));
    }),
    { numRuns: 1000 },
  );
  fc.assert(
    fc.property(anyCodeUnits, (text) => {
      expect(openValue(sealValue(text, key, SUBJECT), key, SUBJECT)).toBe(text);
      expect(openValue(sealValue({ [text]: [text] }, key, SUBJECT), key, SUBJECT)).toEqual({
        [text]: [text],
      });
    }),
  );
  for (const value of [null, true, false, 0, -1.5, 1e300, '', 'Zoë Ångström 👩‍👩‍👧', [], {}])
    expect(openValue(sealValue(value, key, SUBJECT), key, SUBJECT)).toEqual(value);
});

test('values of one length opened in turn, a failed opening between them, each open to their own (buffers are reused)', () => {
  fc.assert(
    fc.property(
      // Eight letters each: values of one length, opened in the same buffers.
      fc.array(fc.string({ unit: fc.constantFrom(...'abcdefgh'), minLength: 8, maxLength: 8 }), {
        minLength: 2,
        maxLength: 6,
      }),
      fc.nat(),
      (texts, at) => {
        const sealed = texts.map((text) => sealValue(text, key, SUBJECT));
        const broken = sealed[at % sealed.length]!.replace(/.$/, (last) => (last === 'A' ? 'Q' : 'A'));
        expect(() => openValue(broken, key, SUBJECT)).toThrow();
        expect(sealed.map((value) => openValue(value, key, SUBJECT))).toEqual(texts);
      },
    ),
  );
});

test('the sealed text shows nothing of the value, and two seals of one value differ', () => {
  const value = 'Alice Liddell, 4 Christ Church, Oxford';
  const first = sealValue(value, key, SUBJECT);
  const second = sealValue(value, key, SUBJECT);
  expect(first).not.toBe(second);
  for (const sealed of [first, second]) {
    expect(sealed).not.toContain('Alice');
    expect(openValue(sealed, key, SUBJECT)).toBe(value);
  }
  fc.assert(
    fc.property(jsonValue, (value) => {
      expect(sealValue(value, key, SUBJECT)).not.toBe(sealValue(value, key, SUBJECT));
    }),
  );
});

test('changing any one character of a sealed value makes it fail to open', () => {
  fc.assert(
    fc.property(jsonValue, fc.nat(), fc.constantFrom(...`${BASE64URL}.=+/ \n`), (value, at, replacement) => {
      const sealed = sealValue(value, key, SUBJECT);
      const index = at % sealed.length;
      fc.pre(sealed[index] !== replacement);
      const tampered = sealed.slice(0, index) + replacement + sealed.slice(index + 1);
      expect(() => openValue(tampered, key, SUBJECT)).toThrow();
    }),
    { numRuns: 500 },
  );
});

test('every character matters: each position changed in turn fails to open', () => {
  const sealed = sealValue({ name: 'Bob', tags: ['a', 'b'] }, key, SUBJECT);
  for (let index = 0; index < sealed.length; index++)
    for (const replacement of ['A', 'B', 'g', '_', '.']) {
      if (sealed[index] === replacement) continue;
      const tampered = sealed.slice(0, index) + replacement + sealed.slice(index + 1);
      expect(() => openValue(tampered, key, SUBJECT)).toThrow();
    }
  // Shortened, lengthened, or cut at a separator.
  for (const tampered of [sealed.slice(0, -1), `${sealed}A`, sealed.slice(0, sealed.lastIndexOf('.'))])
    expect(() => openValue(tampered, key, SUBJECT)).toThrow();
});

test('a value sealed for one subject does not open for another', () => {
  fc.assert(
    fc.property(
      jsonValue,
      fc.constantFrom('record:acme:43', 'user:acme:42', 'record:acme2:42', 'record:acme:4'),
      (value, other) => {
        expect(() => openValue(sealValue(value, key, SUBJECT), key, other)).toThrow();
      },
    ),
  );
});

test('a value does not open with another key, even one given the same id', () => {
  const stranger = newDataKey();
  const impostor: DataKey = { id: key.id, key: stranger.key };
  fc.assert(
    fc.property(jsonValue, (value) => {
      const sealed = sealValue(value, key, SUBJECT);
      expect(() => openValue(sealed, stranger, SUBJECT)).toThrow(`sealed under key ${key.id}`);
      expect(() => openValue(sealed, impostor, SUBJECT)).toThrow();
    }),
  );
});

test('keyIdOf reads the key a sealed value needs', () => {
  const keys = Array.from({ length: 5 }, () => newDataKey());
  for (const each of keys) {
    const sealed = sealValue('x', each, SUBJECT);
    expect(sealed.startsWith(`pv2.${each.id}.`)).toBe(true);
    expect(keyIdOf(sealed)).toBe(each.id);
  }
  expect(() => keyIdOf('pv1.short.x.y.z')).toThrow('not a sealed value');
});

test('texts that are not sealed values are told apart and refused', () => {
  const notSealed: unknown[] = [
    'Alice',
    '',
    'pv1',
    'v1.aaaa.bbbb.cccc',
    sealValue('x', key, SUBJECT).replace(/^pv2/, 'pv3'),
    // A pv2 value's 24-byte nonce is not a pv1 IV.
    sealValue('x', key, SUBJECT).replace(/^pv2/, 'pv1'),
    42,
    null,
    { sealed: true },
  ];
  for (const text of notSealed) {
    expect(isSealedValue(text)).toBe(false);
    if (typeof text === 'string') {
      expect(() => openValue(text, key, SUBJECT)).toThrow('not a sealed value');
      expect(() => keyIdOf(text)).toThrow('not a sealed value');
    }
  }
  fc.assert(fc.property(fc.string(), (text) => expect(isSealedValue(text)).toBe(false)));
});

test('only JSON values and data keys are taken', () => {
  expect(() => sealValue(undefined, key, SUBJECT)).toThrow('only JSON values');
  expect(() => sealValue(() => 1, key, SUBJECT)).toThrow('only JSON values');
  expect(() => sealValue(1n, key, SUBJECT)).toThrow();
  expect(() => sealValue('x', { id: key.id, key: key.key.subarray(0, 16) }, SUBJECT)).toThrow(
    'not a data key',
  );
  expect(() => sealValue('x', { id: 'a.b', key: key.key }, SUBJECT)).toThrow('not a data key');
});

/** A value sealed as releases before pv2 did: AES-256-GCM under the data key itself, a 12-byte IV. */
function sealedAsPv1(value: unknown, with_: DataKey, subject: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', with_.key, iv);
  cipher.setAAD(Buffer.from(`pv1.${with_.id}.${subject}`, 'utf8'));
  const text = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return ['pv1', with_.id, ...[iv, text, cipher.getAuthTag()].map((part) => part.toString('base64url'))].join(
    '.',
  );
}

test('values sealed before (pv1, AES-256-GCM) still open, for their subject and key only, and unaltered only', () => {
  fc.assert(
    fc.property(jsonValue, fc.nat(), (value, at) => {
      const sealed = sealedAsPv1(value, key, SUBJECT);
      expect(isSealedValue(sealed)).toBe(true);
      expect(keyIdOf(sealed)).toBe(key.id);
      expect(openValue(sealed, key, SUBJECT)).toEqual(JSON.parse(JSON.stringify(value)));
      expect(() => openValue(sealed, key, 'record:acme:43')).toThrow();
      expect(() => openValue(sealed, { id: key.id, key: newDataKey().key }, SUBJECT)).toThrow();
      const index = at % sealed.length;
      const tampered = sealed.slice(0, index) + (sealed[index] === 'A' ? 'B' : 'A') + sealed.slice(index + 1);
      expect(() => openValue(tampered, key, SUBJECT)).toThrow();
    }),
    { numRuns: 300 },
  );
});
