import fc from 'fast-check';
import type { z } from 'zod';

/**
 * Generators of hostile data for tests: keys and strings the stores once refused or could take for syntax,
 * JSON of any shape, and values of a zod schema's shape with hostile data wherever the schema leaves the
 * content free (free strings, `unknown`, records).
 */

export const HOSTILE_KEYS = [
  '',
  '.',
  'a.b',
  '$',
  '$where',
  '$set',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  '_bsontype',
  '\u0001',
  '\0',
  '\uE000',
  '\uE000a.b',
  '%2E',
  '_id',
  '_pos',
  'id',
  'Grüße ✓ 𝄞',
] as const;

export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...HOSTILE_KEYS),
  fc.string({ unit: 'binary', maxLength: 12 }),
);

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...HOSTILE_KEYS, '{"$gt":""}', "'; DROP TABLE docs; --", '%_\\', 'x'.repeat(20_000)),
  fc.string({ unit: 'binary', maxLength: 30 }),
);

/** An object with own data properties for every key (`__proto__` included), as JSON.parse makes them. */
function objectOf(value: fc.Arbitrary<unknown>, maxLength = 5): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .uniqueArray(fc.tuple(hostileKey, value), { maxLength, selector: ([key]) => key })
    .map((entries) => Object.fromEntries(entries));
}

/** `value` wrapped in `levels` objects or arrays, each under a hostile key. */
export function nestedJson(levels: number, value: unknown = 'bottom'): unknown {
  let nested = value;
  for (let level = 0; level < levels; level++) nested = level % 2 ? [nested] : { 'a.$b': nested };
  return nested;
}

const jsonNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n)),
);

const { json: shallowJson } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    fc.constant(null),
    fc.boolean(),
    jsonNumber,
    hostileString,
    fc.array(tie('json'), { maxLength: 4 }),
    objectOf(tie('json')),
  ),
}));

/**
 * Any JSON a receiver accepts: any keys and strings, nesting up to the hook receiver's 64 levels, arrays of
 * up to 2,000 items.
 */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: shallowJson },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 60 }).map((levels) => nestedJson(levels)) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 100, max: 2000 })
      .map((length) => Array.from({ length }, (_, i) => ({ [`k.${i % 7}`]: i }))),
  },
);

interface ZodInternals {
  readonly _zod: { readonly def: ZodDef };
}
interface ZodDef {
  readonly type: string;
  readonly [key: string]: unknown;
}
interface CheckDef {
  readonly check: string;
  readonly [key: string]: unknown;
}

function defOf(schema: unknown): ZodDef {
  return (schema as ZodInternals)._zod.def;
}

function checksOf(def: ZodDef): CheckDef[] {
  const checks = (def.checks ?? []) as ZodInternals[];
  return checks.map((check) => check._zod.def as unknown as CheckDef);
}

const date = fc.date({
  min: new Date('2000-01-01T00:00:00.000Z'),
  max: new Date('2099-12-31T23:59:59.999Z'),
  noInvalidDate: true,
});

function stringOf(def: ZodDef): fc.Arbitrary<string> {
  const checks = checksOf(def);
  const format = (def.format ?? checks.find((check) => check.check === 'string_format')?.format) as
    string | undefined;
  if (format === 'datetime') return date.map((value) => value.toISOString());
  if (format === 'date') return date.map((value) => value.toISOString().slice(0, 10));
  if (format === 'uuid' || format === 'guid') return fc.uuid();
  if (format === 'url') return fc.webUrl();
  const min = Number(checks.find((check) => check.check === 'min_length')?.minimum ?? 0);
  const max = Number(checks.find((check) => check.check === 'max_length')?.maximum ?? Infinity);
  const exact = checks.find((check) => check.check === 'length_equals')?.length as number | undefined;
  const [low, high] = exact === undefined ? [min, max] : [exact, exact];
  const pattern = (def.pattern ?? checks.find((check) => check.pattern instanceof RegExp)?.pattern) as
    RegExp | undefined;
  if (pattern) {
    // `^[class]+$` with a length: one character of the class at a time, as many as the length asks.
    const characterClass = /^\^(\[[^\]]+\])[+*]\$$/.exec(pattern.source)?.[1];
    if (characterClass)
      return fc.string({
        unit: fc.stringMatching(new RegExp(`^${characterClass}$`)),
        minLength: Math.max(low, 1),
        maxLength: Math.min(high, Math.max(low, 1) + 20),
      });
    return fc.stringMatching(pattern);
  }
  if (format === 'email') return fc.emailAddress();
  // Hostile, then fitted to the schema's length (padded with a letter, cut at the most).
  return hostileString.map((value) => value.padEnd(low, 'x').slice(0, high));
}

function numberOf(def: ZodDef): fc.Arbitrary<number> {
  const checks = checksOf(def);
  const lower = checks.find((check) => check.check === 'greater_than');
  const upper = checks.find((check) => check.check === 'less_than');
  const integer =
    def.format === 'safeint' ||
    def.format === 'int32' ||
    checks.some((check) => check.check === 'number_format');
  const min = lower ? Number(lower.value) + (lower.inclusive ? 0 : integer ? 1 : 1e-9) : undefined;
  const max = upper ? Number(upper.value) - (upper.inclusive ? 0 : integer ? 1 : 1e-9) : undefined;
  if (integer)
    return fc.integer({
      min: Math.max(min ?? -(2 ** 31), Number.MIN_SAFE_INTEGER),
      max: Math.min(max ?? 2 ** 31, Number.MAX_SAFE_INTEGER),
    });
  return fc.oneof(
    fc.integer({ min: Math.ceil(min ?? 0), max: Math.floor(max ?? (min ?? 0) + 1000) }),
    fc.double({
      noNaN: true,
      noDefaultInfinity: true,
      ...(min !== undefined && { min }),
      ...(max !== undefined && { max }),
    }),
  );
}

/**
 * Values of `schema`'s shape: hostile wherever it leaves content free. Not every value passes the schema
 * (refinements, transforms): `validSamples` keeps those that do, as the schema outputs them.
 */
export function arbitraryOf(schema: unknown, depth = 0): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  /** Recursive schemas (a structure's fields) stop growing here. */
  const deep = depth > 4;
  // Schemas recursive through getters would be built for ever: past this, nothing (an optional part left out).
  if (depth > 12) return fc.constant(undefined);
  const inner = (child: unknown) => arbitraryOf(child, depth + 1);
  switch (def.type) {
    case 'string':
      return stringOf(def);
    case 'number':
      return numberOf(def);
    case 'boolean':
      return fc.boolean();
    case 'custom':
      // The platform's custom schemas are ids (contracts/entity-id.ts).
      return fc.integer({ min: 1, max: 1000 });
    case 'null':
      return fc.constant(null);
    case 'undefined':
    case 'void':
    case 'never':
      return fc.constant(undefined);
    case 'literal':
      return fc.constantFrom(...(def.values as unknown[]));
    case 'enum':
      return fc.constantFrom(...Object.values(def.entries as Record<string, unknown>));
    case 'unknown':
    case 'any':
      return hostileJson;
    case 'date':
      return date;
    case 'object': {
      const shape = def.shape as Record<string, unknown>;
      const entries = Object.entries(shape).map(([key, child]) => [key, inner(child)] as const);
      return fc
        .tuple(...entries.map(([, arbitrary]) => arbitrary))
        .map((values) =>
          Object.fromEntries(
            entries
              .map(([key], index) => [key, values[index]] as const)
              .filter(([, value]) => value !== undefined),
          ),
        );
    }
    case 'array': {
      const checks = checksOf(def);
      const minLength = Number(checks.find((check) => check.check === 'min_length')?.minimum ?? 0);
      const maxLength = Number(
        checks.find((check) => check.check === 'max_length')?.maximum ?? minLength + 4,
      );
      return fc.array(inner(def.element), {
        minLength,
        maxLength: deep ? minLength : Math.min(maxLength, minLength + 4),
      });
    }
    case 'tuple':
      return fc.tuple(...(def.items as unknown[]).map(inner));
    case 'record': {
      const keyDef = defOf(def.keyType);
      const key = keyDef.type === 'string' && keyDef.checks === undefined ? hostileKey : inner(def.keyType);
      return fc
        .uniqueArray(fc.tuple(key.map(String), inner(def.valueType)), {
          maxLength: deep ? 0 : 4,
          selector: ([name]) => name,
        })
        .map((pairs) => Object.fromEntries(pairs));
    }
    case 'union':
      return fc.oneof(...(def.options as unknown[]).map(inner));
    case 'intersection':
      return inner(def.left);
    case 'optional':
      return deep ? fc.constant(undefined) : fc.option(inner(def.innerType), { nil: undefined });
    case 'nullable':
      return deep ? fc.constant(null) : fc.option(inner(def.innerType), { nil: null });
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
    case 'nonoptional':
      return inner(def.innerType);
    case 'pipe':
      return inner(def.in);
    case 'lazy':
      return fc.constant(null).chain(() => inner((def.getter as () => unknown)()));
    default:
      // A transform or a type events do not hold (bigint, symbol…): nothing to offer.
      return fc.constant(undefined);
  }
}

/** Up to `count` values of `schema`'s shape that pass it, as it outputs them (trimmed, defaulted). */
export function validSamples(schema: z.ZodType, count: number, seed: number): unknown[] {
  const samples = fc.sample(arbitraryOf(schema), { numRuns: count * 20, seed });
  const valid: unknown[] = [];
  for (const sample of samples) {
    const parsed = schema.safeParse(sample);
    if (parsed.success) valid.push(parsed.data);
    if (valid.length === count) break;
  }
  return valid;
}
