import type { Router } from 'express';
import { parseFilter, parseOrder } from '../../contracts/query/parse';
import { RECORD_FIELDS } from '../../contracts/query/record-fields';
import { resolveFilter, resolveOrder } from '../../contracts/query/resolve';
import { equals, type StoreFilter } from '../../contracts/query/store-query';
import { READ_MODELS } from '../../contracts/read-models';
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

/** What a saved segment selects: the records of its space that match its filter (checked when saved). */
function segmentScope(segment: Record<string, unknown>): StoreFilter {
  const space = equals('spaceId', segment.spaceId as number);
  const filter =
    typeof segment.filter === 'string' ? resolveFilter(parseFilter(segment.filter), RECORD_FIELDS) : null;
  return filter ? { kind: 'and', children: [space, filter] } : space;
}

/**
 * Saved segments, and `GET /segment/{segmentId}/record`: the segment's records as a list page. The request's
 * own `filter` narrows it further; without `order` the segment's order applies.
 */
export function addSegmentReadRoutes(router: Router, deps: EntityReadDeps, records: EntityDescription): void {
  router.get('/segment/:segmentId/record', async (req, res) => {
    const { body: segment } = await readOne(req, deps, SEGMENTS, idParam(req, 'segmentId'));
    const order =
      typeof segment.order === 'string' ? resolveOrder(parseOrder(segment.order), RECORD_FIELDS) : undefined;
    const inSegment = { ...records, ...(order && { defaultOrder: order }) };
    sendJson(res, 200, await readPage(req, deps, inSegment, segmentScope(segment)));
  });
  addEntityRoutes(router, deps, 'segment', 'segmentId', SEGMENTS);
}
