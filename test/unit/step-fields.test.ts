import fc from 'fast-check';
import type { FieldDefinition } from '../../contracts/fields';
import { fieldsByKey, scenarioStepSchema } from '../../contracts/integrator';

const field = (fieldId: number, key: string): FieldDefinition => ({
  fieldId,
  key,
  name: key,
  type: 'text',
  required: false,
  config: {},
  position: fieldId,
  builtIn: false,
});

/** A module's fields: unique ids and unique keys, some keys all digits (so they can look like another's id). */
const moduleFields = fc
  .uniqueArray(
    fc.record({
      fieldId: fc.integer({ min: 1, max: 40 }),
      key: fc.oneof(
        fc.stringMatching(/^[a-z_][a-z0-9_]{0,10}$/),
        fc.integer({ min: 1, max: 40 }).map(String),
      ),
    }),
    { minLength: 1, maxLength: 12, selector: (entry) => entry.fieldId },
  )
  .filter((entries) => new Set(entries.map((entry) => entry.key)).size === entries.length)
  .map((entries) => entries.map((entry) => field(entry.fieldId, entry.key)));

describe("a record step's fields, by field id or by field key", () => {
  test('every field named once by id or by key maps to its key, unless the name is also another field’s', () => {
    fc.assert(
      fc.property(
        moduleFields.chain((fields) =>
          fc.tuple(
            fc.constant(fields),
            fc.subarray(fields, { minLength: 1 }),
            fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
          ),
        ),
        ([fields, chosen, byId]) => {
          const names = chosen.map((one, index) => (byId[index] ? String(one.fieldId) : one.key));
          fc.pre(new Set(names).size === names.length);
          const named = Object.fromEntries(
            names.map((name, index) => [name, `value of ${chosen[index]!.key}`]),
          );
          const ambiguous = names.filter((name, index) =>
            fields.some(
              (other) => other !== chosen[index] && (other.key === name || String(other.fieldId) === name),
            ),
          );
          const mapped = fieldsByKey(named, fields);
          if (ambiguous.length === 0)
            expect(mapped).toEqual({
              values: Object.fromEntries(chosen.map((one) => [one.key, `value of ${one.key}`])),
            });
          else
            expect('problems' in mapped && mapped.problems.map((problem) => problem.path)).toEqual(
              expect.arrayContaining(ambiguous.map((name) => `fields.${name}`)),
            );
        },
      ),
      { numRuns: 500 },
    );
  });

  test('a name that is no field of the module, or a field named twice, is a problem naming it', () => {
    const fields = [field(3, 'email'), field(4, 'phone')];
    expect(fieldsByKey({ '9': 1, nope: 2 }, fields)).toEqual({
      problems: [
        { path: 'fields.9', message: 'no field of the module has this id or key' },
        { path: 'fields.nope', message: 'no field of the module has this id or key' },
      ],
    });
    expect(fieldsByKey({ '3': 'a', email: 'b' }, fields)).toEqual({
      problems: [{ path: 'fields.email', message: 'field 3 is already set as "3"' }],
    });
  });

  test('the step contract takes both forms and nothing else', () => {
    const step = (fields: Record<string, unknown>) =>
      scenarioStepSchema.safeParse({ kind: 'createRecord', moduleId: 1, fields }).success;
    expect(step({ '12': 'a', email: { expr: 'mail' }, due_at: null })).toBe(true);
    expect(step({ 'has space': 'a' })).toBe(false);
    expect(step({ 'fields.x': 'a' })).toBe(false);
    expect(step({ ['k'.repeat(65)]: 'a' })).toBe(false);
  });
});
