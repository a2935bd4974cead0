import { recordDecider, type RecordCommand } from '../../command-api/records/domain/record';
import type { RecordEvent } from '../../contracts/events/records';
import type { FieldDefinition } from '../../contracts/fields';
import { contentMatchesType, fileNameSchema, MAX_FILES_PER_RECORD, mediaTypeOf } from '../../contracts/files';
import { streamName } from '../../contracts/streams';
import { filesProjection } from '../../projections/read-models/files';
import { deciderSpec, EventLog, projectionSpec, TEST_TENANT } from '../support/given-when-then';

const SHA = 'a'.repeat(64);
const contract: FieldDefinition = {
  fieldId: 4,
  key: 'contract',
  name: 'Contract',
  type: 'file',
  required: false,
  config: {},
  position: 1,
  builtIn: false,
};
const title: FieldDefinition = {
  ...contract,
  fieldId: 5,
  key: 'title',
  name: 'Title',
  type: 'text',
  position: 2,
};
const schema = [contract, title];

const created: RecordEvent = {
  type: 'RecordCreated',
  data: { recordId: 9, moduleId: 2, spaceId: 1, name: 'Deal', fields: {} },
};
const upload = (fileId: number) => ({
  fileId,
  name: `f${fileId}.pdf`,
  contentType: 'application/pdf',
  size: 10,
  sha256: SHA,
  blobKey: `acme/00000000-0000-4000-8000-00000000000${fileId}`,
});
const attach = (fileId: number, fieldId: number | null = null): RecordCommand => ({
  kind: 'AttachFile',
  file: upload(fileId),
  fieldId,
  schema,
});
const attached = (fileId: number, weight: number, fieldId: number | null = null): RecordEvent => ({
  type: 'FileAttached',
  data: { recordId: 9, ...upload(fileId), fieldId, weight },
});
const fieldSet = (from: number[] | null, to: number[] | null): RecordEvent => ({
  type: 'RecordUpdated',
  data: { recordId: 9, changes: [{ field: 'fields.contract', from, to }] },
});

describe('record decider: files', () => {
  const spec = deciderSpec(recordDecider);

  test('a file of the record as a whole goes last in the order', () => {
    const state = spec
      .given([created, attached(1, 0), attached(2, 7)])
      .when(attach(3))
      .then([attached(3, 8)]);
    expect(state.files.map((file) => file.fileId)).toEqual([1, 2, 3]);
  });

  test('a file uploaded into a file field is added to the field value, as a field change', () => {
    spec
      .given([created])
      .when(attach(1, 4))
      .then([attached(1, 0, 4), fieldSet(null, [1])]);
    spec
      .given([created, attached(1, 0, 4), fieldSet(null, [1])])
      .when(attach(2, 4))
      .then([attached(2, 1, 4), fieldSet([1], [1, 2])]);
  });

  test('a field that is not a file field, or not in the module, is refused with the field named', () => {
    expect(spec.given([created]).when(attach(1, 5)).thenThrows('validation_failed').message).toBe(
      'field 5 is a text field, not a file field',
    );
    expect(spec.given([created]).when(attach(1, 99)).thenThrows('validation_failed').details).toEqual([
      { path: 'fieldId', message: "field 99 is not a field of the record's module" },
    ]);
  });

  test('a deleted or missing record takes no files', () => {
    const deleted: RecordEvent = { type: 'RecordDeleted', data: { recordId: 9, moduleId: 2, spaceId: 1 } };
    spec.given([created, deleted]).when(attach(1)).thenThrows('not_found');
    spec.given([]).when(attach(1)).thenThrows('not_found');
  });

  test(`a record holds at most ${MAX_FILES_PER_RECORD} files`, () => {
    const full = Array.from({ length: MAX_FILES_PER_RECORD }, (_, index) => attached(index + 1, index));
    spec
      .given([created, ...full])
      .when(attach(MAX_FILES_PER_RECORD + 1))
      .thenThrows('conflict');
  });

  test('removing a file takes it out of its field; the blob key goes with the event for the clean-up', () => {
    const history = [
      created,
      attached(1, 0, 4),
      fieldSet(null, [1]),
      attached(2, 1, 4),
      fieldSet([1], [1, 2]),
    ];
    const detached: RecordEvent = {
      type: 'FileDetached',
      data: { recordId: 9, fileId: 1, fieldId: 4, blobKey: upload(1).blobKey },
    };
    const state = spec
      .given(history)
      .when({ kind: 'DetachFile', fileId: 1, schema })
      .then([detached, fieldSet([1, 2], [2])]);
    expect(state.files.map((file) => file.fileId)).toEqual([2]);
    expect(state.fields).toEqual({ contract: [2] });
    spec
      .given([...history, detached, fieldSet([1, 2], [2])])
      .when({ kind: 'DetachFile', fileId: 2, schema })
      .then([
        { ...detached, data: { ...detached.data, fileId: 2, blobKey: upload(2).blobKey } },
        fieldSet([2], null),
      ]);
  });

  test('the last file of a required file field stays', () => {
    const required = [{ ...contract, required: true }, title];
    spec
      .given([created, attached(1, 0, 4), fieldSet(null, [1])])
      .when({ kind: 'DetachFile', fileId: 1, schema: required })
      .thenThrows('conflict');
  });

  test('a file whose field was removed since is removed alone', () => {
    spec
      .given([created, attached(1, 0, 4), fieldSet(null, [1])])
      .when({ kind: 'DetachFile', fileId: 1, schema: [title] })
      .then([
        { type: 'FileDetached', data: { recordId: 9, fileId: 1, fieldId: 4, blobKey: upload(1).blobKey } },
      ]);
  });

  test('removing a file the record does not have is a 404', () => {
    spec.given([created]).when({ kind: 'DetachFile', fileId: 1, schema }).thenThrows('not_found');
  });

  test('weights: only the changed ones are recorded; unknown and repeated files refuse the whole change', () => {
    const history = [created, attached(1, 0), attached(2, 1)];
    const state = spec
      .given(history)
      .when({
        kind: 'SetFileWeights',
        weights: [
          { fileId: 1, weight: 0 },
          { fileId: 2, weight: 10 },
        ],
      })
      .then([{ type: 'FileWeightsSet', data: { recordId: 9, weights: [{ fileId: 2, weight: 10 }] } }]);
    expect(state.files.map((file) => [file.fileId, file.weight])).toEqual([
      [1, 0],
      [2, 10],
    ]);
    spec
      .given(history)
      .when({ kind: 'SetFileWeights', weights: [{ fileId: 1, weight: 0 }] })
      .thenNothingHappens();
    const unknown = spec
      .given(history)
      .when({
        kind: 'SetFileWeights',
        weights: [
          { fileId: 1, weight: 3 },
          { fileId: 8, weight: 1 },
        ],
      })
      .thenThrows('validation_failed');
    expect(unknown.details).toEqual([{ path: 'files.1.fileId', message: 'record 9 has no file 8' }]);
    spec
      .given(history)
      .when({
        kind: 'SetFileWeights',
        weights: [
          { fileId: 1, weight: 3 },
          { fileId: 1, weight: 4 },
        ],
      })
      .thenThrows('validation_failed');
  });
});

describe('files projection', () => {
  const log = new EventLog();
  const stream = streamName('record', TEST_TENANT, 9);
  const record = (event: RecordEvent) => log.record<string, unknown>(stream, event);
  const first = record(attached(1, 0, 4));
  const second = record(attached(2, 1));
  const spec = projectionSpec(filesProjection);

  test('a file is a document with its metadata and blob key; weights patch; a removal deletes', () => {
    spec
      .given([first])
      .when(second)
      .thenDocuments('files', [
        expect.objectContaining({ id: `${TEST_TENANT}.1`, fileId: 1, recordId: 9, fieldId: 4, weight: 0 }),
        expect.objectContaining({
          id: `${TEST_TENANT}.2`,
          fileId: 2,
          fieldId: null,
          blobKey: upload(2).blobKey,
        }),
      ]);
    const reweighed = record({
      type: 'FileWeightsSet',
      data: { recordId: 9, weights: [{ fileId: 1, weight: 5 }] },
    });
    spec
      .given([first, second])
      .when(reweighed)
      .thenDocuments('files', [
        expect.objectContaining({ fileId: 1, weight: 5, revision: 2 }),
        expect.objectContaining({ fileId: 2, weight: 1, revision: 1 }),
      ]);
    const removed = record({
      type: 'FileDetached',
      data: { recordId: 9, fileId: 2, fieldId: null, blobKey: upload(2).blobKey },
    });
    spec
      .given([first, second, reweighed])
      .when(removed)
      .thenDocuments('files', [expect.objectContaining({ fileId: 1, weight: 5 })]);
  });

  test('other record events change no file', () => {
    spec
      .given([first])
      .when(record(fieldSet(null, [1])))
      .thenNothingChanges();
  });
});

describe('upload checks', () => {
  test.each([
    ['image/png', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0], true],
    ['image/png', [...Buffer.from('<svg onload=')], false],
    ['image/jpeg', [0xff, 0xd8, 0xff, 0xe0], true],
    ['application/pdf', [...Buffer.from('%PDF-1.4')], true],
    ['application/pdf', [...Buffer.from('MZ\x90\x00')], false],
    ['image/webp', [...Buffer.from('RIFF\x10\x00\x00\x00WEBP')], true],
    ['image/webp', [...Buffer.from('RIFF\x10\x00\x00\x00WAVE')], false],
    ['text/plain', [...Buffer.from('hello, čau')], true],
    ['text/csv', [0x61, 0x00, 0x62], false],
    ['text/plain', [0xc3, 0x28], false],
    // A multi-byte character cut at the end of the head is still text.
    ['text/plain', [0x61, 0xc4], true],
    ['application/octet-stream', [0, 1, 2], true],
  ] as const)('%s with bytes %j matches: %s', (type, bytes, matches) => {
    expect(contentMatchesType(type, Uint8Array.from(bytes))).toBe(matches);
  });

  test('media types lose their parameters and case', () => {
    expect(mediaTypeOf('Text/Plain; charset=UTF-8')).toBe('text/plain');
  });

  test.each([
    ['C:\\Users\\me\\report.pdf', 'report.pdf'],
    ['../../etc/passwd', 'passwd'],
    ['a/b/', null],
    ['..', null],
    ['bell\u0007.txt', null],
    ['x'.repeat(256), null],
    ['smlouva čj. 7.pdf', 'smlouva čj. 7.pdf'],
  ])('file name %j becomes %j', (name, expected) => {
    const parsed = fileNameSchema.safeParse(name);
    expect(parsed.success ? parsed.data : null).toBe(expected);
  });
});
