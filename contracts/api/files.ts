/** What hangs off a record: its files, its remote keys, its history; and records in bulk. */
import { z } from 'zod';
import { asOfQuery } from '../query/as-of';
import { entityIdSchema } from '../entity-id';
import { fieldValueSchema } from '../events/records';
import { fileWeightsSchema } from '../files';
import { remoteParams } from '../remote-keys';
import { operation } from './operation';
import { recordSchema } from './records';
import {
  entityId,
  etagHeader,
  idAsText,
  listQuery,
  locationHeader,
  pageOf,
  pathIds,
  READ_ERRORS,
  WRITE_ERRORS,
} from './shared';

export const BULK_MAX_ITEMS = 1000;

// Files

export const uploadQuery = z.strictObject({
  fieldId: idAsText(
    'The file field the file fills; without it the file belongs to the record as a whole.',
  ).optional(),
  name: z.string().optional().meta({
    description: "The file's name when the body is the file itself (a multipart part names its own).",
  }),
});
const fileCore = {
  id: entityId,
  recordId: entityId,
  fieldId: entityId.nullable(),
  name: z.string(),
  contentType: z.string(),
  size: z.number().int(),
  sha256: z.string(),
  weight: z.number().int().meta({ description: 'Display order, ascending.' }),
};
const fileWritten = z.object(fileCore).meta({ id: 'FileWritten' });
const file = z
  .object({ ...fileCore, createdAt: z.string(), createdBy: z.string().nullable(), updatedAt: z.string() })
  .meta({ id: 'File' });
const recordPath = pathIds({ recordId: 'The record.' });
const filePath = pathIds({ recordId: 'The record.', fileId: 'The file.' });

export const uploadRecordFile = operation({
  operationId: 'uploadRecordFile',
  method: 'post',
  path: '/record/{recordId}/file',
  tag: 'files',
  summary: 'Attach a file to a record',
  description:
    'The body is `multipart/form-data` with one file part, or the file itself with its type as `Content-Type` ' +
    'and `?name=`. The bytes must agree with the declared type; `FILE_MAX_BYTES` and `FILE_CONTENT_TYPES` apply.',
  params: recordPath,
  query: uploadQuery,
  body: {
    schema: z
      .object({ file: z.string().meta({ format: 'binary', description: 'The file.' }) })
      .meta({ id: 'FileUpload' }),
    contentTypes: ['multipart/form-data'],
    readByRoute: true,
  },
  responses: {
    201: {
      description: 'The attached file.',
      schema: fileWritten,
      headers: { ...locationHeader, ...etagHeader },
    },
    ...WRITE_ERRORS,
    413: { description: 'The file is larger than `FILE_MAX_BYTES`.' },
    415: { description: 'The type is not accepted, or the bytes do not match it.' },
  },
  security: 'token',
});
export const deleteRecordFile = operation({
  operationId: 'deleteRecordFile',
  method: 'delete',
  path: '/record/{recordId}/file/{fileId}',
  tag: 'files',
  summary: 'Remove a file from a record',
  params: filePath,
  responses: {
    200: {
      description: 'The file was removed.',
      schema: z
        .object({ recordId: entityId, fileId: entityId, deleted: z.literal(true) })
        .meta({ id: 'RecordFileDeleted' }),
      headers: etagHeader,
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});
export const setFileWeights = operation({
  operationId: 'setFileWeights',
  method: 'put',
  path: '/record/{recordId}/file-weight',
  tag: 'files',
  summary: "Reorder a record's files",
  params: recordPath,
  body: {
    schema: fileWeightsSchema.meta({ id: 'FileWeights' }),
    example: { files: [{ fileId: 2, weight: 0 }] },
  },
  responses: {
    200: {
      description: "The record's files by weight.",
      schema: z
        .object({
          recordId: entityId,
          files: z.array(z.object({ fileId: entityId, weight: z.number().int() })),
        })
        .meta({ id: 'FileWeightsResult' }),
      headers: etagHeader,
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});
export const listRecordFiles = operation({
  operationId: 'listRecordFiles',
  method: 'get',
  path: '/record/{recordId}/file',
  tag: 'files',
  summary: "List a record's files, by weight",
  params: recordPath,
  query: listQuery,
  responses: { 200: { description: 'A page of files.', schema: pageOf(file, 'FilePage') }, ...READ_ERRORS },
  security: 'token',
});
export const getRecordFile = operation({
  operationId: 'getRecordFile',
  method: 'get',
  path: '/record/{recordId}/file/{fileId}',
  tag: 'files',
  summary: "Read a file's details",
  params: filePath,
  responses: { 200: { description: 'The file.', schema: file, headers: etagHeader }, ...READ_ERRORS },
  security: 'token',
});
export const downloadRecordFile = operation({
  operationId: 'downloadRecordFile',
  method: 'get',
  path: '/record/{recordId}/file/{fileId}/content',
  tag: 'files',
  summary: "Download a file's bytes",
  description: 'Sent as an attachment with its stored type; `If-None-Match` with its ETag answers 304.',
  params: filePath,
  responses: {
    200: {
      description: 'The bytes.',
      schema: z.string().meta({ format: 'binary' }),
      contentType: 'application/octet-stream',
      headers: { ...etagHeader, 'Content-Disposition': 'attachment, with the file name.' },
    },
    304: { description: 'Not modified (`If-None-Match`).' },
    ...READ_ERRORS,
  },
  security: 'token',
});

// Remote keys

export const linkRemoteBody = z
  .strictObject({ recordId: entityIdSchema.meta({ description: 'The record the key names.' }) })
  .meta({ id: 'RemoteLink' });
const remotePath = remoteParams.extend({
  remoteId: remoteParams.shape.remoteId.meta({ description: "The record's id in the other application." }),
  remoteApplication: remoteParams.shape.remoteApplication.meta({ description: 'The other application.' }),
});
export const linkRemoteRecord = operation({
  operationId: 'linkRemoteRecord',
  method: 'post',
  path: '/record/remote/{remoteId}/{remoteApplication}',
  tag: 'records',
  summary: "Link another application's id to a record (or move it to another record)",
  params: remotePath,
  body: { schema: linkRemoteBody },
  responses: {
    200: {
      description: 'The link.',
      schema: z
        .object({ remoteApplication: z.string(), remoteId: z.string(), recordId: entityId })
        .meta({ id: 'RemoteLinkResult' }),
      headers: etagHeader,
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});
export const getRemoteRecord = operation({
  operationId: 'getRemoteRecord',
  method: 'get',
  path: '/record/remote/{remoteId}/{remoteApplication}',
  tag: 'records',
  summary: "Read the record another application's id is linked to",
  params: remotePath,
  responses: {
    200: {
      description: 'The record, with the key.',
      schema: recordSchema
        .extend({ remote: z.object({ remoteApplication: z.string(), remoteId: z.string() }) })
        .meta({ id: 'RemoteRecord' }),
      headers: etagHeader,
    },
    ...READ_ERRORS,
  },
  security: 'token',
  tool: true,
});

// Bulk

const bulkItems = z
  .array(z.unknown())
  .min(1, 'at least one item')
  .max(BULK_MAX_ITEMS, `at most ${BULK_MAX_ITEMS} items per request`);
export const bulkWriteBody = z
  .strictObject({
    items: bulkItems.meta({
      description: `Up to ${BULK_MAX_ITEMS} records: each checked as \`POST /record\` (create) or \`PUT /record\` (update, with \`id\`) would check it.`,
    }),
  })
  .meta({ id: 'BulkWrite' });
export const bulkDeleteBody = z
  .strictObject({
    ids: z
      .array(entityIdSchema)
      .min(1, 'at least one id')
      .max(BULK_MAX_ITEMS, `at most ${BULK_MAX_ITEMS} ids per request`),
  })
  .meta({ id: 'BulkDelete' });
const bulkResult = z
  .object({
    items: z.array(
      z
        .object({
          index: z.number().int().meta({ description: 'The item position in the request.' }),
          status: z.number().int().meta({ description: 'What the item alone would have answered.' }),
          id: entityId.optional(),
          error: z
            .object({ code: z.string(), error: z.string(), message: z.string() })
            .loose()
            .optional()
            .meta({ description: 'Why the item failed (the error body).' }),
        })
        .meta({ id: 'BulkItemResult' }),
    ),
    meta: z.object({ succeeded: z.number().int(), failed: z.number().int() }),
  })
  .meta({
    id: 'BulkResult',
    description: 'One result per item: the others are not held back by a failed one.',
  });
const bulkAnswer = {
  200: {
    description: 'Per-item outcomes (`X-Position`: the highest position written).',
    schema: bulkResult,
  },
  ...WRITE_ERRORS,
};
export const createRecordsInBulk = operation({
  operationId: 'createRecordsInBulk',
  method: 'post',
  path: '/record/bulk',
  tag: 'records',
  summary: 'Create many records',
  body: {
    schema: bulkWriteBody,
    example: {
      items: [
        { moduleId: 1, name: 'Acme' },
        { moduleId: 1, name: 'Initech' },
      ],
    },
  },
  responses: bulkAnswer,
  security: 'token',
});
export const updateRecordsInBulk = operation({
  operationId: 'updateRecordsInBulk',
  method: 'put',
  path: '/record/bulk',
  tag: 'records',
  summary: 'Update many records',
  body: { schema: bulkWriteBody },
  responses: bulkAnswer,
  security: 'token',
});
export const deleteRecordsInBulk = operation({
  operationId: 'deleteRecordsInBulk',
  method: 'delete',
  path: '/record/bulk',
  tag: 'records',
  summary: 'Delete many records',
  body: { schema: bulkDeleteBody },
  responses: bulkAnswer,
  security: 'token',
});

// History

const auditEntry = z
  .object({
    position: z.number().int().meta({ description: 'The global position of the event.' }),
    eventId: z.string(),
    type: z.string(),
    category: z.string(),
    streamId: z.string(),
    revision: z.number().int().meta({ description: "The event's revision in its stream." }),
    at: z.string(),
    userId: z.string().nullable(),
    credentialId: z.string().nullable().optional(),
    clientId: z.string().nullable().optional(),
    commandId: z.string(),
    correlationId: z.string(),
    data: z.unknown().optional(),
  })
  .meta({ id: 'AuditEntry' });
export const auditPage = pageOf(auditEntry, 'AuditPage');
export const listAudit = operation({
  operationId: 'listAudit',
  method: 'get',
  path: '/audit',
  tag: 'history',
  summary: 'The audit trail: every change, newest first (administrators)',
  query: listQuery,
  responses: { 200: { description: 'A page of events.', schema: auditPage }, ...READ_ERRORS },
  security: 'token',
});
export const listRecordHistory = operation({
  operationId: 'listRecordHistory',
  method: 'get',
  path: '/record/{recordId}/history',
  tag: 'history',
  summary: "A record's full history, newest first (administrators)",
  description: 'With `asOf` or `atPosition`: only what happened up to then.',
  params: recordPath,
  query: listQuery.extend(asOfQuery.shape),
  responses: { 200: { description: 'A page of events.', schema: auditPage }, ...READ_ERRORS },
  security: 'token',
  tool: true,
});
export const listFieldHistory = operation({
  operationId: 'listFieldHistory',
  method: 'get',
  path: '/auth/field-history/{moduleId}/{recordId}',
  tag: 'history',
  summary: 'The field changes the calling user made to a record, newest first',
  params: pathIds({ moduleId: 'The module.', recordId: 'The record.' }),
  query: listQuery,
  responses: {
    200: {
      description: 'A page of field changes.',
      schema: pageOf(
        z
          .object({
            field: z.string(),
            oldValue: fieldValueSchema.nullable(),
            newValue: fieldValueSchema.nullable(),
            changedAt: z.string(),
            userId: z.string().nullable(),
            credentialId: z.string().nullable().optional(),
            clientId: z.string().nullable().optional(),
          })
          .meta({ id: 'FieldChange' }),
        'FieldChangePage',
      ),
    },
    ...READ_ERRORS,
  },
  security: 'token',
  tool: true,
});

export const FILE_OPERATIONS = [
  uploadRecordFile,
  deleteRecordFile,
  setFileWeights,
  listRecordFiles,
  getRecordFile,
  downloadRecordFile,
  linkRemoteRecord,
  getRemoteRecord,
  createRecordsInBulk,
  updateRecordsInBulk,
  deleteRecordsInBulk,
  listAudit,
  listRecordHistory,
  listFieldHistory,
];
