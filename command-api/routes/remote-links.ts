import type { Router } from 'express';
import { z } from 'zod';
import { entityIdSchema } from '../../contracts/entity-id';
import { remoteKey, remoteParams } from '../../contracts/remote-keys';
import { streamName } from '../../contracts/streams';
import { validate } from '../../contracts/validation';
import { remoteLinkDecider } from '../domain/remote-link';
import { recordDecider } from '../domain/record';
import type { CommandDeps } from '../deps';
import { authorize, commandContext, sendResult } from './context';

const linkBody = z.strictObject({ recordId: entityIdSchema });

/** `POST /record/remote/{remoteId}/{remoteApplication}` with `{recordId}`: links (or moves) a remote key. */
export function addRemoteLinkRoutes(router: Router, deps: CommandDeps): void {
  router.post('/record/remote/:remoteId/:remoteApplication', async (req, res) => {
    const principal = authorize(req, 'record', 'update');
    const { remoteId, remoteApplication } = validate(remoteParams, req.params, 'path');
    const { recordId } = validate(linkBody, req.body, 'body');
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
