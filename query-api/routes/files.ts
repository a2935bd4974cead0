import type { Request, Response, Router } from 'express';
import { pipeline } from 'node:stream/promises';
import { PlatformError } from '../../contracts/errors';
import { AUDIT_COLUMNS } from '../../languages/filter/record-fields';
import { catalogue } from '../../languages/filter/resolve';
import { equals } from '../../languages/filter/store-query';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import { principalOf } from '../../infra/http/context';
import type { BlobStore } from '../../infra/blob-store/port';
import { idParam } from '../../infra/http/params';
import { sendJson } from '../../infra/http/respond';
import { downloadRecordFile, getRecordFile, listRecordFiles } from '../../contracts/api/files';
import { mount } from '../../infra/http/operations';
import type { Document } from '../../contracts/read-model-changes';
import type { Logger } from '../../infra/logging';
import { readOne, readPage, type EntityDescription, type EntityReadDeps } from './entities';

export interface FileReadDeps extends EntityReadDeps {
  readonly blobs: BlobStore;
  readonly logger: Logger;
}

function fileView(doc: Document): Record<string, unknown> {
  return {
    id: doc.fileId,
    recordId: doc.recordId,
    fieldId: doc.fieldId ?? null,
    name: doc.name,
    contentType: doc.contentType,
    size: doc.size,
    sha256: doc.sha256,
    weight: doc.weight,
    createdAt: doc.createdAt,
    createdBy: doc.createdBy,
    updatedAt: doc.updatedAt,
  };
}

export const FILES: EntityDescription = {
  // Files are part of their record: the record permissions rule them.
  module: 'record',
  collection: READ_MODELS.files,
  projection: 'files',
  fields: catalogue({
    id: { path: 'fileId', type: 'integer' },
    fieldId: { path: 'fieldId', type: 'integer' },
    name: { path: 'name', type: 'string' },
    contentType: { path: 'contentType', type: 'string' },
    size: { path: 'size', type: 'integer' },
    weight: { path: 'weight', type: 'integer' },
    sha256: { path: 'sha256', type: 'string' },
    ...AUDIT_COLUMNS,
  }),
  view: fileView,
  noun: 'file',
  defaultOrder: [
    { path: 'weight', direction: 'asc' },
    { path: 'fileId', direction: 'asc' },
  ],
};

/** `filename*` (RFC 6266 / 8187) carries any name; the plain `filename` is an ASCII stand-in for old clients. */
function attachmentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

function sendContentHeaders(res: Response, file: Record<string, unknown>, etag: string): void {
  res.setHeader('Content-Type', String(file.contentType));
  res.setHeader('Content-Length', String(file.size));
  res.setHeader('ETag', etag);
  res.setHeader('Content-Disposition', attachmentDisposition(String(file.name)));
  // Served as a download, never rendered as a page of this origin.
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
  res.setHeader('Cache-Control', 'private, no-cache');
}

/** The files of one record: the list, one file's metadata, and its content. */
export function addFileReadRoutes(router: Router, deps: FileReadDeps, records: EntityDescription): void {
  /** The file's metadata and blob key, when it is a file of the record (a live record the caller may read). */
  const readFileOf = async (req: Request, recordId: number, fileId: number) => {
    await readOne(req, deps, records, recordId);
    const file = await readOne(req, deps, FILES, fileId);
    if (file.body.recordId !== recordId)
      throw new PlatformError('not_found', `record ${recordId} has no file ${fileId}`);
    const tenant = principalOf(req).tenant;
    const doc = await deps.readModels.get(tenant, FILES.collection, documentId(tenant, fileId));
    return { ...file, blobKey: String(doc?.blobKey) };
  };

  mount(router, listRecordFiles, async (req, res) => {
    const recordId = idParam(req, 'recordId');
    await readOne(req, deps, records, recordId);
    sendJson(res, 200, await readPage(req, deps, FILES, equals('recordId', recordId)));
  });

  mount(router, getRecordFile, async (req, res) => {
    const { body, etag } = await readFileOf(req, idParam(req, 'recordId'), idParam(req, 'fileId'));
    sendJson(res, 200, body, { ETag: etag });
  });

  mount(router, downloadRecordFile, async (req, res) => {
    const fileId = idParam(req, 'fileId');
    const { body: file, blobKey } = await readFileOf(req, idParam(req, 'recordId'), fileId);
    // The content never changes under a file id: its hash is a strong validator.
    const etag = `"sha256-${String(file.sha256)}"`;
    if (req.headers['if-none-match'] === etag) {
      res.status(304).setHeader('ETag', etag);
      res.end();
      return;
    }
    const content = await deps.blobs.get(blobKey);
    if (!content) throw new PlatformError('not_found', `the content of file ${fileId} is missing`);
    sendContentHeaders(res, file, etag);
    res.statusCode = 200;
    await pipeline(content, res).catch((error: unknown) => {
      // Headers are gone: all that is left is to cut the connection, so the client sees a short body.
      deps.logger.warn({ err: error, fileId }, 'sending a file content failed');
      res.destroy();
    });
  });
}
