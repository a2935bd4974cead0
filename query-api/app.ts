import { equals, type StoreFilter } from '../languages/filter/store-query';
import { Router } from 'express';
import { READ_MODELS } from '../contracts/read-models';
import { moduleView, spaceView } from './representations';
import { MODULE_FIELDS, SPACE_FIELDS } from './routes/catalogues';
import { idParam } from '../infra/http/params';
import {
  addEntityRoutes,
  authorize,
  readOne,
  readRecordOfModule,
  readPage,
  type EntityDescription,
} from './routes/entities';
import { sendJson } from '../infra/http/respond';
import { RECORD_COMMENT_ROUTES } from '../contracts/api/removed';
import {
  getModuleRecord,
  getRecord,
  listDeletedRecords,
  listModuleRecords,
  listRecords,
} from '../contracts/api/records';
import { MODULE_OPERATIONS, SPACE_OPERATIONS } from '../contracts/api/structure';
import { mount, mountRemoved } from '../infra/http/operations';
import { addCatalogueReadRoutes } from './routes/catalogue-entities';
import { addFieldReadRoutes, FIELDS } from './routes/fields';
import { addFileReadRoutes, type FileReadDeps } from './routes/files';
import { addUserReadRoutes, type UserReadDeps } from './routes/users';
import { addOAuthClientReadRoutes } from './routes/oauth-clients';
import { addOAuthGrantReadRoutes } from './routes/oauth-grants';
import { addOAuthInfoRoutes, addUserinfoRoute, type OAuthInfoDeps } from './routes/oauth-info';
import { addHistoryRoutes } from './routes/history';
import { addSubscriptionReadRoutes, type SubscriptionReadDeps } from './routes/subscriptions';
import { addLabelReadRoutes } from './routes/labels';
import { addModuleTemplateRoutes } from './routes/module-templates';
import { addRemoteLinkReadRoutes } from './routes/remote-links';
import { addSegmentReadRoutes } from './routes/segments';
import { DELETED_RECORDS, recordsListed } from './routes/record-lists';
import { RECORDS } from './records/search';
import { positionOfMoment, RECORD_VERSIONS, recordAt, validAt, type PastReadDeps } from './records/past';
import { pastMomentOf } from '../contracts/query/as-of';
import { awaitConsistency } from './consistency';
import { addApiDescriptionRoutes, type ApiDescriptions } from './routes/api-description';
import { addIntegratorReadRoutes, type IntegratorReadDeps } from './routes/integrator';
import { addVectorRoutes, type VectorReadDeps } from './routes/vectors';
import { addAiReadRoutes } from './routes/ai';

// What the composition roots serve besides the query router: the API description pages and files, and the
// OAuth metadata under `/.well-known`.
export {
  apiDocsRouter,
  servedDocument,
  type ApiDescriptions,
  type ServedDocument,
} from './routes/api-description';
export { oauthMetadataRouter } from './routes/oauth-info';
export type { SemanticSearch } from './records/semantic-search';

export const SPACES: EntityDescription = {
  module: 'space',
  collection: READ_MODELS.spaces,
  projection: 'spaces',
  fields: SPACE_FIELDS,
  view: spaceView,
  noun: 'space',
};
export const MODULES: EntityDescription = {
  module: 'module',
  collection: READ_MODELS.modules,
  projection: 'modules',
  fields: MODULE_FIELDS,
  view: moduleView,
  noun: 'module',
};

/** The query API: every GET of the platform. It reads read models only and never appends. */
export type QueryDeps = FileReadDeps &
  UserReadDeps &
  IntegratorReadDeps &
  VectorReadDeps &
  OAuthInfoDeps &
  SubscriptionReadDeps &
  PastReadDeps & { readonly descriptions: ApiDescriptions };

export function createQueryRouter(deps: QueryDeps): Router {
  const router = Router();
  addApiDescriptionRoutes(router, deps.descriptions);
  addUserReadRoutes(router, deps);
  addOAuthClientReadRoutes(router, deps);
  addOAuthGrantReadRoutes(router, deps);
  addOAuthInfoRoutes(router, deps);
  addUserinfoRoute(router, deps);
  addEntityRoutes(router, deps, SPACE_OPERATIONS, 'spaceId', SPACES);
  // Early: a request is matched one by one against the routes of its first path segment registered before
  // its own, and record reads are the most frequent. `deleted` is not a record id.
  mount(router, listDeletedRecords, async (req, res) => {
    sendJson(res, 200, await readPage(req, deps, await recordsListed(req, deps, DELETED_RECORDS)));
  });
  mount(router, listRecords, async (req, res) => {
    sendJson(res, 200, await readPage(req, deps, await recordsListed(req, deps, RECORDS)));
  });
  // Before `/record/{recordId}`: `vector` is not a record id.
  addVectorRoutes(router, deps);
  mount(router, getRecord, async (req, res) => {
    const recordId = idParam(req, 'recordId');
    const moment = pastMomentOf(req.query);
    if (moment === undefined) {
      const { body, etag } = await readOne(req, deps, RECORDS, recordId);
      sendJson(res, 200, body, { ETag: etag });
      return;
    }
    const tenant = authorize(req, RECORDS.module, 'read');
    if (moment.kind === 'position') {
      const position = await positionOfMoment(deps, moment);
      const doc = await recordAt(deps, tenant, recordId, { kind: 'position', position }, () =>
        Promise.resolve(),
      );
      sendJson(res, 200, RECORDS.view(doc), { 'X-As-Of-Position': position.toString() });
      return;
    }
    const doc = await recordAt(deps, tenant, recordId, moment, () =>
      awaitConsistency(req, deps.consistency, [RECORD_VERSIONS.projection]),
    );
    sendJson(res, 200, RECORDS.view(doc));
  });
  // Before every `/module/{moduleId}…` route: `built-in` is not a module id.
  addModuleTemplateRoutes(router);
  mount(router, listModuleRecords, async (req, res) => {
    const moduleId = idParam(req, 'moduleId');
    const moment = pastMomentOf(req.query);
    await readOne(req, deps, MODULES, moduleId);
    if (moment === undefined) {
      const records = await recordsListed(req, deps, RECORDS, { moduleId });
      sendJson(res, 200, await readPage(req, deps, records, equals('moduleId', moduleId)));
      return;
    }
    // As of a moment: the versions then, with today's list language (fields as they are defined now).
    const position = await positionOfMoment(deps, moment);
    const versions = await recordsListed(
      req,
      deps,
      { ...RECORD_VERSIONS, countCap: deps.pastListCountCap },
      { moduleId },
    );
    const scope: StoreFilter = { kind: 'and', children: [equals('moduleId', moduleId), validAt(position)] };
    res.setHeader('X-As-Of-Position', position.toString());
    sendJson(res, 200, await readPage(req, deps, versions, scope));
  });
  mount(router, getModuleRecord, async (req, res) => {
    const moduleId = idParam(req, 'moduleId');
    const { body, etag } = await readRecordOfModule(req, deps, RECORDS, moduleId, idParam(req, 'recordId'));
    sendJson(res, 200, body, { ETag: etag });
  });
  addEntityRoutes(router, deps, MODULE_OPERATIONS, 'moduleId', MODULES);
  addFieldReadRoutes(router, deps, RECORDS, MODULES);
  addRemoteLinkReadRoutes(router, deps, RECORDS);
  addLabelReadRoutes(router, deps, RECORDS);
  addFileReadRoutes(router, deps, RECORDS);
  addHistoryRoutes(router, deps, RECORDS, (moment) => positionOfMoment(deps, moment));
  addSegmentReadRoutes(router, deps, RECORDS);
  addCatalogueReadRoutes(router, deps, FIELDS);
  addIntegratorReadRoutes(router, deps);
  addSubscriptionReadRoutes(router, deps);
  addAiReadRoutes(router, deps, () => new Date());
  for (const removed of RECORD_COMMENT_ROUTES) if (removed.method === 'get') mountRemoved(router, removed);
  return router;
}
