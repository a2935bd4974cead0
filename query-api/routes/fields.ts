import { equals } from '../../languages/filter/store-query';
import type { NextFunction, Request, Response, Router } from 'express';
import { READ_MODELS } from '../../contracts/read-models';
import {
  fieldPositionsQuery,
  getField,
  listCustomFieldPositions,
  listCustomFieldsBySpace,
  listFieldPositions,
  listFields,
  listRecordFields,
  listSpaceFields,
} from '../../contracts/api/fields';
import { mount } from '../../infra/http/operations';
import { validate } from '../../contracts/validation';
import { idParam } from '../../infra/http/params';
import { sendJson } from '../../infra/http/respond';
import { fieldView } from '../representations';
import { FIELD_FIELDS } from './catalogues';
import {
  addEntityRoutes,
  readOne,
  readPage,
  readRecordOfModule,
  type EntityDescription,
  type EntityReadDeps,
} from './entities';

const byModuleThenPosition = [
  { path: 'moduleId', direction: 'asc' },
  { path: 'position', direction: 'asc' },
] as const;

export const FIELDS: EntityDescription = {
  module: 'field',
  collection: READ_MODELS.fields,
  projection: 'fields',
  fields: FIELD_FIELDS,
  view: fieldView,
  noun: 'field',
  defaultOrder: byModuleThenPosition,
};

/** `GET /field/position?moduleId=`: the list route that reads a parameter of its own. */
const WITH_MODULE_ID: EntityDescription = { ...FIELDS, otherQueryParams: ['moduleId'] };

/**
 * The old `/custom-field/*` reads: answered like their `/field/*` successors, with `Deprecation` (RFC 9745:
 * the date it became deprecated, as a structured-field date) and a `Link` to the successor, on errors too.
 */
const CUSTOM_FIELD_DEPRECATED_AT = Date.parse('2025-01-01T00:00:00Z') / 1000;

function deprecatedAlias(successor: (req: Request) => string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    res.setHeader('Deprecation', `@${CUSTOM_FIELD_DEPRECATED_AT}`);
    res.setHeader('Link', `<${req.baseUrl}${successor(req)}>; rel="successor-version"`);
    next();
  };
}

/**
 * Field definitions: lists (all, by space, one module's order), one field, and the fields of one record
 * with their values. Specific paths come before `/field/{fieldId}`.
 */
export function addFieldReadRoutes(
  router: Router,
  deps: EntityReadDeps,
  records: EntityDescription,
  modules: EntityDescription,
): void {
  const bySpace = async (req: Request, res: Response): Promise<void> => {
    const spaceId = idParam(req, 'spaceId');
    sendJson(res, 200, await readPage(req, deps, FIELDS, equals('spaceId', spaceId)));
  };
  const positions = async (req: Request, res: Response): Promise<void> => {
    const { moduleId } = validate(fieldPositionsQuery, req.query, 'query');
    await readOne(req, deps, modules, moduleId);
    const page = await readPage(req, deps, WITH_MODULE_ID, equals('moduleId', moduleId));
    const items = (page.items as Array<Record<string, unknown>>).map(({ id, key, name, position }) => ({
      id,
      key,
      name,
      position,
    }));
    sendJson(res, 200, { moduleId, items, meta: page.meta });
  };

  mount(router, listSpaceFields, bySpace);
  mount(router, listFieldPositions, positions);
  mount(
    router,
    listCustomFieldsBySpace,
    deprecatedAlias((req) => `/field/by-space/${encodeURIComponent(String(req.params.spaceId))}`),
    bySpace,
  );
  mount(
    router,
    listCustomFieldPositions,
    deprecatedAlias(() => '/field/position'),
    positions,
  );

  /** `GET /field/of/{moduleId}/{recordId}`: the module's fields in order, each with the record's value. */
  mount(router, listRecordFields, async (req, res) => {
    const moduleId = idParam(req, 'moduleId');
    const { body: record } = await readRecordOfModule(req, deps, records, moduleId, idParam(req, 'recordId'));
    const values = (record.fields ?? {}) as Record<string, unknown>;
    const page = await readPage(req, deps, FIELDS, equals('moduleId', moduleId));
    sendJson(res, 200, {
      moduleId,
      recordId: record.id,
      items: (page.items as Array<Record<string, unknown>>).map((field) => ({
        ...field,
        value: Object.hasOwn(values, String(field.key)) ? values[String(field.key)] : null,
      })),
      meta: page.meta,
    });
  });
  addEntityRoutes(router, deps, { list: listFields, get: getField }, 'fieldId', FIELDS);
}
