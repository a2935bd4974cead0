import type { Router } from 'express';
import { parseFilter, parseOrder } from '../../languages/filter/parse';
import type { FilterNode } from '../../languages/filter/ast';
import { resolveFilter, resolveOrder, type FieldCatalogue } from '../../languages/filter/resolve';
import { recordsListed } from './record-lists';
import { equals, type StoreFilter } from '../../languages/filter/store-query';
import { READ_MODELS } from '../../contracts/read-models';
import { listSegmentRecords, SEGMENT_OPERATIONS } from '../../contracts/api/catalogue';
import { mount } from '../../infra/http/operations';
import { idParam } from '../../infra/http/params';
import { sendJson } from '../../infra/http/respond';
import { segmentView } from '../representations';
import { SEGMENT_FIELDS } from './catalogues';
import { addEntityRoutes, readOne, readPage, type EntityDescription, type EntityReadDeps } from './entities';

export const SEGMENTS: EntityDescription = {
  module: 'segment',
  collection: READ_MODELS.segments,
  projection: 'segments',
  fields: SEGMENT_FIELDS,
  view: segmentView,
  noun: 'segment',
};

/** What a saved segment selects: the records of its space that match its filter. */
function segmentScope(spaceId: number, filter: FilterNode | undefined, fields: FieldCatalogue): StoreFilter {
  const space = equals('spaceId', spaceId);
  return filter ? { kind: 'and', children: [space, resolveFilter(filter, fields)] } : space;
}

/**
 * Saved segments, and `GET /segment/{segmentId}/record`: the segment's records as a list page. The request's
 * own `filter` narrows it further; without `order` the segment's order applies.
 */
export function addSegmentReadRoutes(router: Router, deps: EntityReadDeps, records: EntityDescription): void {
  mount(router, listSegmentRecords, async (req, res) => {
    const { body: segment } = await readOne(req, deps, SEGMENTS, idParam(req, 'segmentId'));
    const spaceId = segment.spaceId as number;
    // Field keys resolve against the space's fields as they are now: a field removed since the segment was
    // saved makes the segment's list a 400 that names it.
    const saved = {
      ...(typeof segment.filter === 'string' && { filter: parseFilter(segment.filter) }),
      ...(typeof segment.order === 'string' && { order: parseOrder(segment.order) }),
    };
    const listed = await recordsListed(req, deps, records, { spaceId, saved });
    const order = saved.order && resolveOrder(saved.order, listed.fields);
    const inSegment = { ...listed, ...(order && { defaultOrder: order }) };
    sendJson(
      res,
      200,
      await readPage(req, deps, inSegment, segmentScope(spaceId, saved.filter, listed.fields)),
    );
  });
  addEntityRoutes(router, deps, SEGMENT_OPERATIONS, 'segmentId', SEGMENTS);
}
