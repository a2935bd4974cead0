import fc from 'fast-check';
import { assertValidEventData, isKnownEventType } from '../../contracts/events/registry';
import {
  MAPPED_INTERNAL_EVENT_TYPES,
  toPublicEvents,
  type InternalEvent,
} from '../../contracts/public-event-mapping';
import {
  PUBLIC_EVENT_SCHEMAS,
  PUBLIC_EVENT_TYPE_NAMES,
  type PublicEventData,
  type PublicEventType,
} from '../../contracts/public-events';

/** A public event's type with the data of that type. */
type TypedData = { [Type in PublicEventType]: { type: Type; data: PublicEventData<Type> } }[PublicEventType];

const EVENT_ID = '0b7c8a52-3f41-4a8e-9d2c-1f5e6a7b8c9d';
const OCCURRED_AT = '2026-11-27T13:40:21.123Z';
const POSITION = 9_007_199_254_740_993n; // beyond a double's exact integers: the position stays exact

const given = (type: string, data: unknown): InternalEvent => ({
  id: EVENT_ID,
  type,
  data,
  metadata: { tenant: 'acme', occurredAt: OCCURRED_AT },
});

/** Given an internal event, when it is mapped, then it is exactly this public event, valid by its schema. */
function expectPublic(type: string, internalData: unknown, expected: TypedData): void {
  assertValidEventData(type, internalData);
  const events = toPublicEvents(given(type, internalData), POSITION);
  expect(events).toEqual([
    {
      id: EVENT_ID,
      type: expected.type,
      occurredAt: OCCURRED_AT,
      system: 'acme',
      position: '9007199254740993',
      data: expected.data,
    },
  ]);
  expect(PUBLIC_EVENT_SCHEMAS[expected.type].safeParse(events[0]).success).toBe(true);
}

const field = {
  fieldId: 4,
  key: 'status',
  name: 'Status',
  type: 'select',
  required: true,
  config: { options: ['open', 'won'] },
  position: 2,
  builtIn: false,
} as const;
const sha256 = 'a'.repeat(64);

describe('internal events become public events', () => {
  test('RecordCreated → record.created', () => {
    const data = {
      recordId: 5,
      moduleId: 3,
      spaceId: 1,
      name: 'ACME',
      fields: { status: 'open', n: [1, 2] },
    };
    expectPublic('RecordCreated', data, { type: 'record.created', data });
  });

  test('RecordUpdated → record.updated, each change with its old and new value', () => {
    const changes = [
      { field: 'name', from: 'ACME', to: 'ACME Corp.' },
      { field: 'fields.status', from: 'open', to: null },
    ];
    expectPublic(
      'RecordUpdated',
      { recordId: 5, changes },
      { type: 'record.updated', data: { recordId: 5, changes } },
    );
  });

  test.each([
    ['RecordDeleted', 'record.deleted'],
    ['RecordRestored', 'record.restored'],
  ] as const)('%s → %s', (internal, type) => {
    const data = { recordId: 5, moduleId: 3, spaceId: 1 };
    expectPublic(internal, data, { type, data });
  });

  test('RecordErased → record.erased, the fields named, without the reason', () => {
    expectPublic(
      'RecordErased',
      { recordId: 5, moduleId: 3, spaceId: 1, reason: 'Art. 17 request', fields: ['email'] },
      { type: 'record.erased', data: { recordId: 5, moduleId: 3, spaceId: 1, fields: ['email'] } },
    );
  });

  test.each([
    ['RecordLabelled', 'record.labelled'],
    ['RecordUnlabelled', 'record.unlabelled'],
  ] as const)('%s → %s', (internal, type) => {
    expectPublic(internal, { recordId: 5, labelId: 2 }, { type, data: { recordId: 5, labelId: 2 } });
  });

  test('FileAttached → record.file_added, without where the bytes are stored or the sort weight', () => {
    const file = {
      recordId: 5,
      fileId: 8,
      fieldId: 4,
      name: 'a.pdf',
      contentType: 'application/pdf',
      size: 10,
      sha256,
    };
    expectPublic(
      'FileAttached',
      { ...file, blobKey: 'files/acme/8', weight: 0 },
      { type: 'record.file_added', data: file },
    );
  });

  test('FileDetached → record.file_removed, without the storage key', () => {
    expectPublic(
      'FileDetached',
      { recordId: 5, fileId: 8, fieldId: null, blobKey: 'files/acme/8' },
      { type: 'record.file_removed', data: { recordId: 5, fileId: 8, fieldId: null } },
    );
  });

  test('FieldAdded → field.created, the definition flattened', () => {
    const { fieldId, ...rest } = field;
    expectPublic(
      'FieldAdded',
      { moduleId: 3, spaceId: 1, field },
      { type: 'field.created', data: { moduleId: 3, spaceId: 1, fieldId, ...rest } },
    );
  });

  test('FieldChanged → field.updated of its definition, naming only what changed', () => {
    expectPublic(
      'FieldChanged',
      { moduleId: 3, fieldId: 4, name: 'State' },
      { type: 'field.updated', data: { change: 'definition', moduleId: 3, fieldId: 4, name: 'State' } },
    );
  });

  test('FieldsOrdered → field.updated of the order', () => {
    expectPublic(
      'FieldsOrdered',
      { moduleId: 3, fieldIds: [4, 1, 2] },
      { type: 'field.updated', data: { change: 'order', moduleId: 3, fieldIds: [4, 1, 2] } },
    );
  });

  test('FieldRemoved → field.deleted', () => {
    expectPublic(
      'FieldRemoved',
      { moduleId: 3, fieldId: 4 },
      { type: 'field.deleted', data: { moduleId: 3, fieldId: 4 } },
    );
  });

  test('ModuleCreated → module.created', () => {
    const data = {
      moduleId: 3,
      spaceId: 1,
      name: 'Deals',
      description: null,
      kind: 'built-in',
      template: 'deals',
    } as const;
    expectPublic('ModuleCreated', data, { type: 'module.created', data });
  });

  test('ModuleUpdated → module.updated; ModuleDeleted → module.deleted', () => {
    expectPublic(
      'ModuleUpdated',
      { moduleId: 3, description: null },
      { type: 'module.updated', data: { moduleId: 3, description: null } },
    );
    expectPublic(
      'ModuleDeleted',
      { moduleId: 3, spaceId: 1 },
      { type: 'module.deleted', data: { moduleId: 3, spaceId: 1 } },
    );
  });

  test('SpaceCreated, SpaceUpdated, SpaceDeleted → space.created, space.updated, space.deleted', () => {
    const created = { spaceId: 1, name: 'Sales', description: 'Pipeline' };
    expectPublic('SpaceCreated', created, { type: 'space.created', data: created });
    expectPublic(
      'SpaceUpdated',
      { spaceId: 1, name: 'CRM' },
      { type: 'space.updated', data: { spaceId: 1, name: 'CRM' } },
    );
    expectPublic('SpaceDeleted', { spaceId: 1 }, { type: 'space.deleted', data: { spaceId: 1 } });
  });

  test('LabelCreated, LabelUpdated, LabelDeleted → label.created, label.updated, label.deleted', () => {
    const created = { labelId: 2, name: 'VIP', color: '#ff0000' };
    expectPublic('LabelCreated', created, { type: 'label.created', data: created });
    expectPublic(
      'LabelUpdated',
      { labelId: 2, color: '#00ff00' },
      { type: 'label.updated', data: { labelId: 2, color: '#00ff00' } },
    );
    expectPublic('LabelDeleted', { labelId: 2 }, { type: 'label.deleted', data: { labelId: 2 } });
  });

  test('the public id is the internal event id: a redelivery carries the same webhook-id', () => {
    const event = given('LabelDeleted', { labelId: 2 });
    expect(toPublicEvents(event, 1n)[0]!.id).toBe(toPublicEvents(event, 1n)[0]!.id);
    expect(toPublicEvents(event, 1n)[0]!.id).toBe(EVENT_ID);
  });

  test('events subscribers are not told about map to nothing', () => {
    for (const type of [
      'ButtonPressed',
      'FileWeightsSet',
      'SegmentCreated',
      'UserCreated',
      'WebhookRequestReceived',
    ])
      expect(toPublicEvents(given(type, {}), 1n)).toEqual([]);
  });

  test('internal data that fails its schema is a bug, not a public event', () => {
    expect(() => toPublicEvents(given('RecordDeleted', { recordId: 5 }), 1n)).toThrow();
  });

  test('every public type is made by some internal event, and every mapped internal type exists', () => {
    expect(MAPPED_INTERNAL_EVENT_TYPES.filter((type) => !isKnownEventType(type))).toEqual([]);
    const made = new Set<string>();
    for (const [type, data] of Object.entries(SAMPLES))
      for (const event of toPublicEvents(given(type, data), 1n)) made.add(event.type);
    expect([...made].sort()).toEqual([...PUBLIC_EVENT_TYPE_NAMES].sort());
  });
});

/** One valid data sample per mapped internal type (for the coverage check above). */
const SAMPLES: Readonly<Record<string, unknown>> = {
  RecordCreated: { recordId: 1, moduleId: 1, spaceId: 1, name: 'a', fields: {} },
  RecordUpdated: { recordId: 1, changes: [{ field: 'name', from: 'a', to: 'b' }] },
  RecordDeleted: { recordId: 1, moduleId: 1, spaceId: 1 },
  RecordRestored: { recordId: 1, moduleId: 1, spaceId: 1 },
  RecordErased: { recordId: 1, moduleId: 1, spaceId: 1, reason: 'r', fields: ['email'] },
  RecordLabelled: { recordId: 1, labelId: 1 },
  RecordUnlabelled: { recordId: 1, labelId: 1 },
  FileAttached: {
    recordId: 1,
    fileId: 1,
    fieldId: null,
    name: 'a',
    contentType: 'text/plain',
    size: 0,
    sha256,
    blobKey: 'k',
    weight: 0,
  },
  FileDetached: { recordId: 1, fileId: 1, fieldId: null, blobKey: 'k' },
  FieldAdded: { moduleId: 1, spaceId: 1, field },
  FieldChanged: { moduleId: 1, fieldId: 1 },
  FieldsOrdered: { moduleId: 1, fieldIds: [1] },
  FieldRemoved: { moduleId: 1, fieldId: 1 },
  ModuleCreated: { moduleId: 1, spaceId: 1, name: 'a', description: null, kind: 'custom', template: null },
  ModuleUpdated: { moduleId: 1 },
  ModuleDeleted: { moduleId: 1, spaceId: 1 },
  SpaceCreated: { spaceId: 1, name: 'a', description: null },
  SpaceUpdated: { spaceId: 1 },
  SpaceDeleted: { spaceId: 1 },
  LabelCreated: { labelId: 1, name: 'a', color: '#000000' },
  LabelUpdated: { labelId: 1 },
  LabelDeleted: { labelId: 1 },
};

// ---------------------------------------------------------------------------------------------------------
// Property: any valid internal event of a mapped type makes one public event that passes its schema
// ---------------------------------------------------------------------------------------------------------

const anyId = fc.integer({ min: 1, max: 2 ** 31 - 1 });
const anyText = fc.string({ maxLength: 20 });
const anyKey = fc.stringMatching(/^[A-Za-z0-9_]{1,12}$/).filter((key) => !(key in Object.prototype));
const anyValue = fc.oneof(
  anyText,
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(anyText, fc.integer()), { maxLength: 3 }),
);
const anyConfig = fc.dictionary(anyKey, fc.jsonValue(), { maxKeys: 3 });
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
/** Drops the members an optional arbitrary left undefined: stored events have no `undefined` members. */
const defined = (data: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(data).filter(([, value]) => value !== undefined));
const anyRecordPlace = fc.record({ recordId: anyId, moduleId: anyId, spaceId: anyId });

const INTERNAL_DATA: Readonly<Record<string, fc.Arbitrary<unknown>>> = {
  RecordCreated: fc.record({
    recordId: anyId,
    moduleId: anyId,
    spaceId: anyId,
    name: anyText,
    fields: fc.dictionary(anyKey, anyValue, { maxKeys: 4 }),
  }),
  RecordUpdated: fc.record({
    recordId: anyId,
    changes: fc.array(fc.record({ field: anyText, from: anyValue, to: anyValue }), {
      minLength: 1,
      maxLength: 3,
    }),
  }),
  RecordDeleted: anyRecordPlace,
  RecordRestored: anyRecordPlace,
  RecordErased: fc.record({
    recordId: anyId,
    moduleId: anyId,
    spaceId: anyId,
    reason: anyText.filter((text) => text.length > 0 && text.length <= 1000),
    fields: fc.array(
      fc.stringMatching(/^[A-Za-z0-9_]{1,64}$/).filter((key) => !(key in Object.prototype)),
      {
        maxLength: 3,
      },
    ),
  }),
  RecordLabelled: fc.record({ recordId: anyId, labelId: anyId }),
  RecordUnlabelled: fc.record({ recordId: anyId, labelId: anyId }),
  FileAttached: fc.record({
    recordId: anyId,
    fileId: anyId,
    fieldId: fc.option(anyId, { nil: null }),
    name: anyText,
    contentType: anyText,
    size: fc.nat(),
    sha256: fc.stringMatching(/^[0-9a-f]{64}$/),
    blobKey: anyText,
    weight: fc.nat(),
  }),
  FileDetached: fc.record({
    recordId: anyId,
    fileId: anyId,
    fieldId: fc.option(anyId, { nil: null }),
    blobKey: anyText,
  }),
  FieldAdded: fc.record({
    moduleId: anyId,
    spaceId: anyId,
    field: fc.record({
      fieldId: anyId,
      key: anyKey,
      name: anyText,
      type: fc.constantFrom('text', 'number', 'select', 'file', 'relation'),
      required: fc.boolean(),
      config: anyConfig,
      position: fc.integer({ min: 1, max: 200 }),
      builtIn: fc.boolean(),
    }),
  }),
  FieldChanged: fc
    .record({
      moduleId: anyId,
      fieldId: anyId,
      name: optional(anyText),
      required: optional(fc.boolean()),
      config: optional(anyConfig),
    })
    .map(defined),
  FieldsOrdered: fc.record({ moduleId: anyId, fieldIds: fc.array(anyId, { minLength: 1, maxLength: 5 }) }),
  FieldRemoved: fc.record({ moduleId: anyId, fieldId: anyId }),
  ModuleCreated: fc
    .record({
      moduleId: anyId,
      spaceId: anyId,
      name: anyText,
      description: fc.option(anyText, { nil: null }),
      template: fc.option(anyKey, { nil: null }),
    })
    .map((module) => ({ ...module, kind: module.template === null ? 'custom' : 'built-in' })),
  ModuleUpdated: fc
    .record({
      moduleId: anyId,
      name: optional(anyText),
      description: optional(fc.option(anyText, { nil: null })),
    })
    .map(defined),
  ModuleDeleted: fc.record({ moduleId: anyId, spaceId: anyId }),
  SpaceCreated: fc.record({ spaceId: anyId, name: anyText, description: fc.option(anyText, { nil: null }) }),
  SpaceUpdated: fc
    .record({
      spaceId: anyId,
      name: optional(anyText),
      description: optional(fc.option(anyText, { nil: null })),
    })
    .map(defined),
  SpaceDeleted: fc.record({ spaceId: anyId }),
  LabelCreated: fc.record({ labelId: anyId, name: anyText, color: anyText }),
  LabelUpdated: fc.record({ labelId: anyId, name: optional(anyText), color: optional(anyText) }).map(defined),
  LabelDeleted: fc.record({ labelId: anyId }),
};

describe('property', () => {
  test('the generators cover exactly the mapped internal types', () => {
    expect(Object.keys(INTERNAL_DATA).sort()).toEqual([...MAPPED_INTERNAL_EVENT_TYPES].sort());
  });

  test('every valid internal event of a mapped type makes one public event that passes its schema', () => {
    const anyMappedEvent = fc
      .constantFrom(...MAPPED_INTERNAL_EVENT_TYPES)
      .chain((type) =>
        fc.tuple(
          fc.constant(type),
          INTERNAL_DATA[type]!,
          fc.uuid(),
          fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        ),
      );
    fc.assert(
      fc.property(anyMappedEvent, ([type, data, id, position]) => {
        assertValidEventData(type, data);
        const events = toPublicEvents(
          { id, type, data, metadata: { tenant: 'acme', occurredAt: OCCURRED_AT } },
          position,
        );
        expect(events).toHaveLength(1);
        const [event] = events;
        const parsed = PUBLIC_EVENT_SCHEMAS[event!.type].safeParse(event);
        expect(parsed.success ? undefined : parsed.error.message).toBeUndefined();
        expect(event!.id).toBe(id);
        expect(BigInt(event!.position)).toBe(position);
      }),
      { numRuns: 500 },
    );
  });

  test('an event of any other type maps to nothing', () => {
    const unmapped = fc
      .string({ minLength: 1, maxLength: 30 })
      .filter((type) => !MAPPED_INTERNAL_EVENT_TYPES.includes(type));
    fc.assert(
      fc.property(unmapped, fc.jsonValue(), (type, data) => {
        expect(toPublicEvents(given(type, data), 1n)).toEqual([]);
      }),
    );
  });
});
