import { RECORD_COMMENT_ROUTES } from '../../contracts/api/removed';
import { mountRemoved } from '../../infra/http/operations';
import type { CommandDeps } from '../deps';
import type { FeatureApi } from '../kit/feature';
import { addResourceRoutes } from '../kit/resource-routes';
import { recordCommands } from './commands';
import { addBulkRecordRoutes } from './routes/bulk';
import { addFileRoutes } from './routes/files';
import { addLabelRoutes, labelResource } from './routes/labels';
import { addButtonRoute, addRecordEraseRoute, addRecordRestoreRoute, recordResource } from './routes/records';
import { addRemoteLinkRoutes } from './routes/remote-links';
import { segmentResource } from './routes/segments';

/** Records, their files, labels, remote links and segments. */
export function recordsApi(deps: CommandDeps): FeatureApi {
  const records = recordCommands(deps);
  return (router) => {
    // Before the record routes: `bulk` is not a record id.
    addBulkRecordRoutes(router, deps, records);
    addRemoteLinkRoutes(router, deps, records);
    addResourceRoutes(router, deps, recordResource(deps.handler));
    addRecordRestoreRoute(router, deps, records);
    addRecordEraseRoute(router, deps);
    addButtonRoute(router, deps);
    addFileRoutes(router, deps, records);
    for (const removed of RECORD_COMMENT_ROUTES) if (removed.method !== 'get') mountRemoved(router, removed);
    addResourceRoutes(router, deps, labelResource());
    addResourceRoutes(router, deps, segmentResource(deps));
    addLabelRoutes(router, deps, records);
  };
}
