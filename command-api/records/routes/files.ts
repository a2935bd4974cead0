import type { Router } from 'express';
import {
  deleteRecordFile,
  setFileWeights,
  uploadQuery,
  uploadRecordFile,
} from '../../../contracts/api/files';
import { fileWeightsSchema } from '../../../contracts/files';
import { validate } from '../../../contracts/validation';
import { mount } from '../../../infra/http/operations';
import { idParam } from '../../../infra/http/params';
import { receiveFile } from '../../../infra/http/upload';
import type { CommandDeps } from '../../deps';
import { requestHash } from '../../kit/idempotency';
import {
  authorize,
  commandContext,
  commandOrigin,
  idempotencyKey,
  preconditions,
  sendResult,
} from '../../kit/route-context';
import type { RecordCommands } from '../commands';
import type { AttachedFile, RecordState } from '../domain/record';

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

/** Files of records: upload (`POST /record/{recordId}/file`), remove, and their display order. */
export function addFileRoutes(router: Router, deps: CommandDeps, records: RecordCommands): void {
  mount(router, uploadRecordFile, async (req, res) => {
    const principal = authorize(req, 'record', 'update');
    const recordId = idParam(req, 'recordId');
    const query = validate(uploadQuery, req.query, 'query parameters');
    const { result, attached } = await records.attachFile(
      commandOrigin(req, principal),
      {
        holder: principal.credential.id,
        key: idempotencyKey(req),
        requestHash: () =>
          requestHash('POST', `/record/${recordId}/file`, {
            query: req.query,
            contentType: req.headers['content-type'] ?? null,
            contentLength: req.headers['content-length'] ?? null,
          }),
      },
      recordId,
      query.fieldId ?? null,
      (store, discard) => receiveFile(req, query.name, store, discard),
    );
    res.setHeader('Location', `${req.baseUrl}/record/${recordId}/file/${attached.fileId}`);
    sendResult(res, 201, result, fileView(recordId, attached));
  });

  mount(router, deleteRecordFile, async (req, res) => {
    const principal = authorize(req, 'record', 'update');
    const recordId = idParam(req, 'recordId');
    const fileId = idParam(req, 'fileId');
    const result = await records.detachFile(
      commandContext(req, principal, deps.newCommandId()),
      recordId,
      fileId,
      preconditions(req),
    );
    sendResult(res, 200, result, { recordId, fileId, deleted: true });
  });

  mount(router, setFileWeights, async (req, res) => {
    const principal = authorize(req, 'record', 'update');
    const recordId = idParam(req, 'recordId');
    const body = validate(fileWeightsSchema, req.body, 'body');
    const result = await records.setFileWeights(
      commandContext(req, principal, deps.newCommandId()),
      recordId,
      body.files,
      preconditions(req),
    );
    sendResult(res, 200, result, {
      recordId,
      files: byWeight(result.state).map((file) => ({ fileId: file.fileId, weight: file.weight })),
    });
  });
}
