import type { Router } from 'express';
import { PlatformError } from '../../contracts/errors';
import { READ_MODELS } from '../../contracts/read-models';
import { getRecordLabel, LABEL_OPERATIONS, listRecordLabels } from '../../contracts/api/catalogue';
import { mount } from '../../infra/http/operations';
import { idParam } from '../../infra/http/params';
import { sendJson } from '../../infra/http/respond';
import { labelView } from '../representations';
import { LABEL_FIELDS } from './catalogues';
import { addEntityRoutes, readOne, readPage, type EntityDescription, type EntityReadDeps } from './entities';

export const LABELS: EntityDescription = {
  module: 'label',
  collection: READ_MODELS.labels,
  projection: 'labels',
  fields: LABEL_FIELDS,
  view: labelView,
  noun: 'label',
};

/**
 * Labels, and the labels of one record. A record keeps the ids of the labels attached to it; a label deleted
 * since is simply no longer listed.
 */
export function addLabelReadRoutes(router: Router, deps: EntityReadDeps, records: EntityDescription): void {
  addEntityRoutes(router, deps, LABEL_OPERATIONS, 'labelId', LABELS);

  mount(router, listRecordLabels, async (req, res) => {
    const { body: record } = await readOne(req, deps, records, idParam(req, 'recordId'));
    const labelIds = record.labelIds as number[];
    sendJson(res, 200, await readPage(req, deps, LABELS, { kind: 'in', path: 'labelId', values: labelIds }));
  });

  mount(router, getRecordLabel, async (req, res) => {
    const recordId = idParam(req, 'recordId');
    const labelId = idParam(req, 'labelId');
    const { body: record } = await readOne(req, deps, records, recordId);
    if (!(record.labelIds as number[]).includes(labelId))
      throw new PlatformError('not_found', `record ${recordId} does not carry label ${labelId}`);
    const { body, etag } = await readOne(req, deps, LABELS, labelId);
    sendJson(res, 200, body, { ETag: etag });
  });
}
