import type { Router } from 'express';
import { PlatformError } from '../../contracts/errors';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import { remoteKey, remoteParams } from '../../contracts/remote-keys';
import { validate } from '../../contracts/validation';
import { sendJson } from '../../infra/http/respond';
import { getRemoteRecord } from '../../contracts/api/files';
import { mount } from '../../infra/http/operations';
import { awaitConsistency } from '../consistency';
import { authorize, readOne, type EntityDescription, type EntityReadDeps } from './entities';

/** `GET /record/remote/{remoteId}/{remoteApplication}`: the record a remote key points at. */
export function addRemoteLinkReadRoutes(
  router: Router,
  deps: EntityReadDeps,
  records: EntityDescription,
): void {
  mount(router, getRemoteRecord, async (req, res) => {
    const { remoteId, remoteApplication } = validate(remoteParams, req.params, 'path');
    const tenant = authorize(req, records.module, 'read');
    await awaitConsistency(req, deps.consistency, ['remote-links']);
    const link = await deps.readModels.get(
      tenant,
      READ_MODELS.remoteLinks,
      documentId(tenant, remoteKey(remoteApplication, remoteId)),
    );
    if (!link)
      throw new PlatformError('not_found', `no record is linked to ${remoteApplication} id ${remoteId}`);
    const { body, etag } = await readOne(req, deps, records, link.recordId as number);
    sendJson(res, 200, { ...body, remote: { remoteApplication, remoteId } }, { ETag: etag });
  });
}
