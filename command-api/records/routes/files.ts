import type { Router } from 'express';
import { PlatformError } from '../../../contracts/errors';
import { contentMatchesType, fileNameSchema, fileWeightsSchema, mediaTypeOf } from '../../../contracts/files';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import { BlobTooLargeError, newBlobKey } from '../../../infra/blob-store/port';
import { idParam } from '../../../infra/http/params';
import { receiveFile, type IncomingFile } from '../../../infra/http/upload';
import type { CommandDeps } from '../../deps';
import { requestHash } from '../../kit/idempotency';
import { recordDecider, type AttachedFile, type RecordState, type UploadedFile } from '../domain/record';
import {
  authorize,
  commandContext,
  idempotencyKey,
  preconditions,
  sendResult,
} from '../../kit/route-context';
import {
  deleteRecordFile,
  setFileWeights,
  uploadQuery,
  uploadRecordFile,
} from '../../../contracts/api/files';
import { mount } from '../../../infra/http/operations';
import { moduleFields } from '../../structure/commands';

export function fileView(recordId: number, file: AttachedFile): Record<string, unknown> {
  return {
    id: file.fileId,
    recordId,
    fieldId: file.fieldId,
    name: file.name,
    contentType: file.contentType,
    size: file.size,
    sha256: file.sha256,
    weight: file.weight,
  };
}

function byWeight(state: RecordState): AttachedFile[] {
  return [...state.files].sort((a, b) => a.weight - b.weight || a.fileId - b.fileId);
}

/**
 * Checks the declared type, streams the bytes into the blob store within the size limit, then checks that the
 * bytes agree with the declared type. A refused file leaves nothing in the store.
 */
export async function storeUpload(
  deps: Pick<CommandDeps, 'blobs' | 'uploads'>,
  tenant: string,
  file: IncomingFile,
): Promise<Omit<UploadedFile, 'fileId'>> {
  const contentType = mediaTypeOf(file.contentType);
  if (!deps.uploads.contentTypes.has(contentType))
    throw new PlatformError(
      'unsupported_media_type',
      `files of type ${JSON.stringify(contentType)} are not accepted; accepted types: ${[...deps.uploads.contentTypes].join(', ')}`,
    );
  if (file.name === '')
    throw new PlatformError(
      'validation_failed',
      'the file needs a name: a multipart filename or the "name" query parameter',
    );
  const name = validate(fileNameSchema, file.name, 'file name');
  const blobKey = newBlobKey(tenant);
  let stored;
  try {
    stored = await deps.blobs.put(blobKey, file.content, deps.uploads.maxBytes);
  } catch (error) {
    if (error instanceof BlobTooLargeError)
      throw new PlatformError('payload_too_large', `files are at most ${deps.uploads.maxBytes} bytes`);
    throw error;
  }
  if (!contentMatchesType(contentType, stored.head)) {
    await deps.blobs.delete(blobKey);
    throw new PlatformError('unsupported_media_type', `the content of the file is not ${contentType}`);
  }
  return { name, contentType, size: stored.size, sha256: stored.sha256, blobKey };
}

/** A blob no event points at any more (or ever did): removing it may fail without failing the request. */
async function dropBlob(deps: CommandDeps, blobKey: string): Promise<void> {
  await deps.blobs.delete(blobKey).catch((error: unknown) => {
    deps.logger.warn({ err: error, blobKey }, 'could not remove an unused blob; it stays as an orphan');
  });
}

/** Files of records: upload (`POST /record/{recordId}/file`), remove, and their display order. */
export function addFileRoutes(router: Router, deps: CommandDeps): void {
  mount(router, uploadRecordFile, async (req, res) => {
    const principal = authorize(req, 'record', 'update');
    const recordId = idParam(req, 'recordId');
    const query = validate(uploadQuery, req.query, 'query parameters');
    const stream = streamName('record', principal.tenant, recordId);
    // Refused before a byte is stored: a missing record, or a field that cannot hold files.
    const record = await deps.handler.load(stream, recordDecider);
    if (record.state.status !== 'active')
      throw new PlatformError('not_found', `record ${recordId} not found`);
    const schema = (await moduleFields(deps.handler, principal.tenant, record.state.moduleId))?.fields ?? [];
    const identity = await deps.idempotency.identify(
      principal.tenant,
      principal.credential.id,
      idempotencyKey(req),
      () =>
        requestHash('POST', `/record/${recordId}/file`, {
          query: req.query,
          contentType: req.headers['content-type'] ?? null,
          contentLength: req.headers['content-length'] ?? null,
        }),
      () => deps.ids.next(principal.tenant, 'file'),
    );
    const fileId = identity.entityId!;
    const upload = await receiveFile(
      req,
      query.name,
      (file) => storeUpload(deps, principal.tenant, file),
      (stored) => dropBlob(deps, stored.blobKey),
    );
    let result;
    try {
      result = await deps.handler.handle(
        stream,
        recordDecider,
        { kind: 'AttachFile', file: { ...upload, fileId }, fieldId: query.fieldId ?? null, schema },
        commandContext(req, principal, identity.commandId),
        identity.mayBeRepeat ? { mayBeRepeat: true } : {},
      );
    } catch (error) {
      await dropBlob(deps, upload.blobKey);
      throw error;
    }
    const attached = result.state.files.find((file) => file.fileId === fileId);
    if (result.replayed || attached?.blobKey !== upload.blobKey) {
      // A repeated upload: the first one's file stands, this copy of the bytes is not needed.
      await dropBlob(deps, upload.blobKey);
      if (attached && attached.sha256 !== upload.sha256)
        throw new PlatformError('idempotency_key_reused', 'this Idempotency-Key was used for another file');
    }
    if (!attached)
      throw new PlatformError('conflict', `file ${fileId} was removed from record ${recordId} since`);
    res.setHeader('Location', `${req.baseUrl}/record/${recordId}/file/${fileId}`);
    sendResult(res, 201, result, fileView(recordId, attached));
  });

  mount(router, deleteRecordFile, async (req, res) => {
    const principal = authorize(req, 'record', 'update');
    const recordId = idParam(req, 'recordId');
    const fileId = idParam(req, 'fileId');
    const stream = streamName('record', principal.tenant, recordId);
    const record = await deps.handler.load(stream, recordDecider);
    const schema =
      record.state.status === 'active'
        ? ((await moduleFields(deps.handler, principal.tenant, record.state.moduleId))?.fields ?? [])
        : [];
    const result = await deps.handler.handle(
      stream,
      recordDecider,
      { kind: 'DetachFile', fileId, schema },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    const detached = record.state.files.find((file) => file.fileId === fileId);
    // After the event: a crash in between leaves an orphan blob, never a file without its bytes.
    if (detached) await dropBlob(deps, detached.blobKey);
    sendResult(res, 200, result, { recordId, fileId, deleted: true });
  });

  mount(router, setFileWeights, async (req, res) => {
    const principal = authorize(req, 'record', 'update');
    const recordId = idParam(req, 'recordId');
    const body = validate(fileWeightsSchema, req.body, 'body');
    const result = await deps.handler.handle(
      streamName('record', principal.tenant, recordId),
      recordDecider,
      { kind: 'SetFileWeights', weights: body.files },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, {
      recordId,
      files: byWeight(result.state).map((file) => ({ fileId: file.fileId, weight: file.weight })),
    });
  });
}
