import type { Router } from 'express';
import { linkRemoteBody, linkRemoteRecord } from '../../../contracts/api/files';
import { mount } from '../../../infra/http/operations';
import { remoteParams } from '../../../contracts/remote-keys';
import { validate } from '../../../contracts/validation';
import type { CommandDeps } from '../../deps';
import { authorize, commandContext, sendResult } from '../../kit/route-context';
import type { RecordCommands } from '../commands';

/** `POST /record/remote/{remoteId}/{remoteApplication}` with `{recordId}`: links (or moves) a remote key. */
export function addRemoteLinkRoutes(router: Router, deps: CommandDeps, records: RecordCommands): void {
  mount(router, linkRemoteRecord, async (req, res) => {
    const principal = authorize(req, 'record', 'update');
    const { remoteId, remoteApplication } = validate(remoteParams, req.params, 'path');
    const { recordId } = validate(linkRemoteBody, req.body, 'body');
    const result = await records.linkRemote(
      commandContext(req, principal, deps.newCommandId()),
      remoteApplication,
      remoteId,
      recordId,
    );
    sendResult(res, 200, result, { remoteApplication, remoteId, recordId });
  });
}
