/** The record operations: create, change, delete and restore records, list and read them, press buttons. */
import { z } from 'zod';
import { asOfQuery } from '../query/as-of';
import { entityIdSchema } from '../entity-id';
import { fieldKeySchema, fieldValueSchema } from '../events/records';
import { operation } from './operation';
import {
  auditFields,
  deletedSchema,
  entityId,
  erasureBody,
  etagHeader,
  listQuery,
  locationHeader,
  pageOf,
  pathIds,
  READ_ERRORS,
  WRITE_ERRORS,
} from './shared';

export const MAX_FIELDS_PER_RECORD = 200;

export const fieldValue = fieldValueSchema.meta({
  id: 'FieldValue',
  description:
    'A field value: text, number, boolean, null, or a list of texts or numbers (options, relations).',
});
const recordName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(500, 'must be at most 500 characters')
  .meta({ description: 'The record name.', example: 'ACME Corp.' });
const recordFields = z
  .record(fieldKeySchema, fieldValue)
  .refine(
    (value) => Object.keys(value).length <= MAX_FIELDS_PER_RECORD,
    `at most ${MAX_FIELDS_PER_RECORD} fields per record`,
  )
  .meta({ description: 'Values by field key.', example: { email: 'hello@acme.test', employees: 42 } });

export const createRecordBody = z
  .strictObject({
    moduleId: entityIdSchema.meta({ description: 'The module the record belongs to.' }),
    name: recordName,
    fields: recordFields.optional(),
  })
  .meta({ id: 'RecordCreate' });
export const updateRecordBody = z
  .strictObject({
    id: entityIdSchema.optional().meta({ description: 'The record (when the path does not name it).' }),
    name: recordName.optional(),
    fields: recordFields.optional().meta({ description: 'Values to change, by field key; others stay.' }),
  })
  .meta({ id: 'RecordUpdate' });

const recordCore = {
  id: entityId,
  moduleId: entityId,
  spaceId: entityId,
  name: z.string(),
  fields: z.record(z.string(), fieldValue),
  labelIds: z.array(entityId).meta({ description: 'The labels on the record, ascending.' }),
};
/** A record as a write answers it. */
export const recordWritten = z.object(recordCore).meta({ id: 'RecordWritten' });
/** A record as the reads answer it. */
export const recordSchema = z
  .object({
    ...recordCore,
    deletedAt: z.string().optional().meta({ description: 'When it was deleted (deleted records only).' }),
    deletedBy: z.string().nullable().optional(),
    ...auditFields,
  })
  .meta({ id: 'Record' });
export const recordPage = pageOf(recordSchema, 'RecordPage');

const recordPath = pathIds({ recordId: 'The record.' });

export const createRecord = operation({
  operationId: 'createRecord',
  method: 'post',
  path: '/record',
  tag: 'records',
  summary: 'Create a record',
  description: 'Values are validated against the fields of the module. `Idempotency-Key` makes a retry safe.',
  body: { schema: createRecordBody, example: { moduleId: 1, name: 'ACME Corp.', fields: { employees: 42 } } },
  responses: {
    201: {
      description: 'The created record.',
      schema: recordWritten,
      headers: { ...locationHeader, ...etagHeader },
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
  tool: true,
});

export const updateRecord = operation({
  operationId: 'updateRecord',
  method: 'put',
  path: '/record',
  tag: 'records',
  summary: 'Update a record named in the body',
  body: { schema: updateRecordBody },
  responses: {
    200: { description: 'The record after the change.', schema: recordWritten, headers: etagHeader },
    ...WRITE_ERRORS,
  },
  security: 'token',
});

export const updateRecordById = operation({
  operationId: 'updateRecordById',
  method: 'put',
  path: '/record/{recordId}',
  tag: 'records',
  summary: 'Update a record',
  description:
    'Changes the name and the given field values. `If-Match` with the ETag guards against lost updates.',
  params: recordPath,
  body: { schema: updateRecordBody },
  responses: {
    200: { description: 'The record after the change.', schema: recordWritten, headers: etagHeader },
    ...WRITE_ERRORS,
  },
  security: 'token',
  tool: true,
});

export const deleteRecord = operation({
  operationId: 'deleteRecord',
  method: 'delete',
  path: '/record/{recordId}',
  tag: 'records',
  summary: 'Delete a record (it can be restored)',
  params: recordPath,
  responses: { 200: { description: 'The record was deleted.', schema: deletedSchema }, ...WRITE_ERRORS },
  security: 'token',
  tool: true,
});

export const restoreRecord = operation({
  operationId: 'restoreRecord',
  method: 'post',
  path: '/record/{recordId}/restore',
  tag: 'records',
  summary: 'Restore a deleted record',
  description: 'Brings a deleted record back, if its module still exists.',
  params: recordPath,
  responses: {
    200: { description: 'The restored record.', schema: recordWritten, headers: etagHeader },
    ...WRITE_ERRORS,
  },
  security: 'token',
});

export const eraseRecordBody = erasureBody('record', 'RecordErase');

export const recordErasure = z
  .object({
    id: entityId,
    erased: z.literal(true),
    fields: z
      .array(z.string())
      .meta({ description: 'The keys of the fields whose values were personal data, now erased.' }),
  })
  .meta({ id: 'RecordErasure' });

export const eraseRecord = operation({
  operationId: 'eraseRecord',
  method: 'post',
  path: '/record/{recordId}/erase',
  tag: 'records',
  summary: "Erase a record's personal data for good",
  description:
    "Administrators only. Destroys the record's data key, so its name, the values of its personal fields and its files' names read as `[erased]` on every route, in its history and audit trail, in lists as of any time, in replays and rebuilt read models, in the vector index and in the stream's consumers; its files' contents are deleted. The record itself stays (ids, labels, non-personal values) and takes no new personal values. Erasing again answers the same.",
  params: recordPath,
  body: { schema: eraseRecordBody },
  responses: {
    200: { description: 'The record is erased.', schema: recordErasure },
    ...WRITE_ERRORS,
  },
  security: 'token',
});

export const pressRecordButton = operation({
  operationId: 'pressRecordButton',
  method: 'post',
  path: '/record/{recordId}/button/{fieldId}',
  tag: 'records',
  summary: "Press a record's button field",
  description:
    "Posts the record to the button's webhook (through the SSRF guard). A 2xx answer is `ok`; another status is " +
    "still a press (`ok: false`); no answer at all is a 502. When the address is one of this platform's hooks, " +
    'the press is delivered to that hook directly (its rules, queue and log) and answers with its response.',
  params: pathIds({ recordId: 'The record.', fieldId: 'The button field.' }),
  responses: {
    200: {
      description: 'What the webhook answered.',
      schema: z
        .object({
          recordId: entityId,
          fieldId: entityId,
          ok: z.boolean(),
          status: z.number().int(),
          body: z.string().nullable().meta({
            description: "The answer's body (its first 64 KB from another service; a hook's response).",
          }),
        })
        .meta({ id: 'ButtonPressed' }),
    },
    ...WRITE_ERRORS,
    502: { description: "The button's webhook did not answer." },
  },
  security: 'token',
});

export const listRecords = operation({
  operationId: 'listRecords',
  method: 'get',
  path: '/record',
  tag: 'records',
  summary: 'List records',
  description:
    'Filter and order by the built-in columns (`id`, `name`, `moduleId`, `spaceId`, `createdAt`…) and by field ' +
    'keys of the modules in scope (`fields.<key>` or the bare key when unambiguous).',
  query: listQuery,
  responses: { 200: { description: 'A page of records.', schema: recordPage }, ...READ_ERRORS },
  security: 'token',
  tool: true,
});

export const listDeletedRecords = operation({
  operationId: 'listDeletedRecords',
  method: 'get',
  path: '/record/deleted',
  tag: 'records',
  summary: 'List deleted records, newest deletion first',
  query: listQuery,
  responses: { 200: { description: 'A page of deleted records.', schema: recordPage }, ...READ_ERRORS },
  security: 'token',
});

export const getRecord = operation({
  operationId: 'getRecord',
  method: 'get',
  path: '/record/{recordId}',
  tag: 'records',
  summary: 'Read a record, now or as it was at a time or position',
  description:
    'With `asOf` or `atPosition`: the record as it was then, folded from its events (the same shape; no ETag, ' +
    'and `X-As-Of-Position` names the last position included). 404 when it did not exist yet, 410 when it had ' +
    'been deleted.',
  params: recordPath,
  query: asOfQuery,
  responses: {
    200: { description: 'The record.', schema: recordSchema, headers: etagHeader },
    410: { description: 'The record had been deleted at that time or position.' },
    ...READ_ERRORS,
  },
  security: 'token',
  tool: true,
});

export const listModuleRecords = operation({
  operationId: 'listModuleRecords',
  method: 'get',
  path: '/module/{moduleId}/item',
  tag: 'records',
  summary: 'List the records of a module, now or as they were at a time or position',
  description:
    'With `asOf` or `atPosition`: the records as they were then (the temporal read model), with the whole list ' +
    'language; fields are named as they are defined now. `X-As-Of-Position` names the last position included.',
  params: pathIds({ moduleId: 'The module.' }),
  query: listQuery.extend(asOfQuery.shape),
  responses: { 200: { description: 'A page of the module’s records.', schema: recordPage }, ...READ_ERRORS },
  security: 'token',
});

export const getModuleRecord = operation({
  operationId: 'getModuleRecord',
  method: 'get',
  path: '/module/{moduleId}/item/{recordId}',
  tag: 'records',
  summary: 'Read a record of a module',
  params: pathIds({ moduleId: 'The module.', recordId: 'The record.' }),
  responses: {
    200: { description: 'The record.', schema: recordSchema, headers: etagHeader },
    ...READ_ERRORS,
  },
  security: 'token',
});

export const RECORD_OPERATIONS = [
  createRecord,
  updateRecord,
  updateRecordById,
  deleteRecord,
  restoreRecord,
  eraseRecord,
  pressRecordButton,
  listRecords,
  listDeletedRecords,
  getRecord,
  listModuleRecords,
  getModuleRecord,
];
