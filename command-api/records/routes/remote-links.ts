import type { Router } from 'express';
import { linkRemoteBody, linkRemoteRecord } from '../../../contracts/api/files';
import { mount } from '../../../infra/http/operations';
import { remoteKey, remoteParams } from '../../../contracts/remote-keys';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import { remoteLinkDecider } from '../domain/remote-link';
import { recordDecider } from '../domain/record';
import type { CommandDeps } from '../../deps';
import { authorize, commandContext, sendResult } from '../../kit/route-context';

/** `POST /record/remote/{remoteId}/{remoteApplication}` with `{recordId}`: links (or moves) a remote key. */
export function addRemoteLinkRoutes(router: Router, deps: CommandDeps): void {
  mount(router, linkRemoteRecord, async (req, res) => {
    const principal = authorize(req, 'record', 'update');
    const { remoteId, remoteApplication } = validate(remoteParams, req.params, 'path');
    const { recordId } = validate(linkRemoteBody, req.body, 'body');
    const record = await deps.handler.load(streamName('record', principal.tenant, recordId), recordDecider);
    const result = await deps.handler.handle(
      streamName('remote', principal.tenant, remoteKey(remoteApplication, remoteId)),
      remoteLinkDecider,
      {
        kind: 'LinkRemote',
        remoteApplication,
        remoteId,
        recordId,
        recordExists: record.state.status === 'active',
      },
      commandContext(req, principal, deps.newCommandId()),
    );
    sendResult(res, 200, result, { remoteApplication, remoteId, recordId });
  });
}
